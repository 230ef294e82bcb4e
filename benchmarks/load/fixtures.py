"""The load benchmark's data: a 200-case ReXVQA-shaped file, its import, readers and studies.

Runs inside the benchmark's Django process (settings already point at the benchmark database),
through the same management commands a PI uses.
"""

from __future__ import annotations

import io
import json
import os
import random
from pathlib import Path

from django.contrib.auth import get_user_model
from django.core.management import call_command

ROOT = Path(__file__).resolve().parents[2]
TINY_PNG = ROOT / "tests" / "resources" / "tiny_8bit.png"
TASKS = [
    "Presence Assessment",
    "Negation Assessment",
    "Differential Diagnosis",
    "Location and Distribution Assessment",
    "Geometric Information Assessment",
]
DATASET = "Load benchmark"


def write_rexvqa_file(folder: Path, n_cases: int) -> Path:
    """One question per case, one or two views per case, hard-linked tiny PNGs."""
    rng = random.Random(7)
    records = {}
    for c in range(n_cases):
        base = f"deid_png/p{c:04d}/a{c:04d}/studies/1.9.{c}/series/1.8.{c}/instances"
        views = ["PA", "LATERAL"] if c % 2 == 0 else ["AP"]
        paths = [f"{base}/{i}.png" for i in range(len(views))]
        for p in paths:
            target = folder / p
            target.parent.mkdir(parents=True, exist_ok=True)
            os.link(TINY_PNG, target)
        records[f"load-{c:04d}"] = {
            "question": f"Is there a finding {c} in this chest radiograph?",
            "options": [f"A. finding {c}", "B. effusion", "C. pneumothorax", "D. none"],
            "correct_answer": "ABCD"[rng.randrange(4)],
            "correct_answer_explanation": "Benchmark explanation.",
            "task_name": TASKS[c % len(TASKS)],
            "category": "Lung",
            "subcategory": "sub",
            "class": "cls",
            "study_id": f"load-study-{c:04d}",
            "StudyInstanceUid": f"1.9.{c}",
            "PatientAge": "060Y",
            "PatientSex": "F",
            "Indication": "Cough.",
            "Findings": "Benchmark findings.",
            "Impression": "Benchmark impression.",
            "ImagePath": [f"../{p}" for p in paths],
            "ImageViewPosition": views,
        }
    path = folder / "metadata" / "load.json"
    path.parent.mkdir(parents=True)
    path.write_text(json.dumps(records))
    return path


def create_readers(n: int, password: str) -> list[str]:
    users = get_user_model()
    names = [f"load{i:02d}" for i in range(1, n + 1)]
    for name in names:
        users.objects.create_user(name, password=password)
    return names


def create_data(folder: Path, *, n_cases: int, readers: list[str], slugs: list[str]) -> None:
    path = write_rexvqa_file(folder, n_cases)
    call_command("import_rexvqa", str(path), "--dataset", DATASET, stdout=io.StringIO())
    for slug in slugs:
        call_command(
            "create_study",
            slug,
            "--dataset",
            DATASET,
            "--sample",
            str(n_cases),
            "--one-per-case",
            "--readers",
            ",".join(readers),
            "--json",
            verbosity=0,
            stdout=io.StringIO(),
        )
