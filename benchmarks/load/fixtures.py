"""The load benchmark's data: a 200-case ReXVQA-shaped file, its import, readers and studies.

Runs inside the benchmark's Django process (settings already point at the benchmark database),
through the same management commands a PI uses.
"""

from __future__ import annotations

import io
import random
from pathlib import Path

from django.contrib.auth import get_user_model
from django.core.management import call_command

from readerstudy.rexvqa_synthetic import instance_path, place_image, record, write_file, write_png
from readerstudy.vocabulary import LETTERS

TASKS = [
    "Presence Assessment",
    "Negation Assessment",
    "Differential Diagnosis",
    "Location and Distribution Assessment",
    "Geometric Information Assessment",
]
DATASET = "Load benchmark"


def write_rexvqa_file(folder: Path, n_cases: int) -> Path:
    """One question per case, one or two views per case, hard links to one tiny PNG."""
    rng = random.Random(7)
    tiny = write_png(folder / "tiny.png", side=8)
    records = {}
    for c in range(n_cases):
        views = ["PA", "LATERAL"] if c % 2 == 0 else ["AP"]
        paths = [
            instance_path(
                patient=f"p{c:04d}",
                accession=f"a{c:04d}",
                study_uid=f"1.9.{c}",
                series_uid=f"1.8.{c}",
                instance=f"{i}.png",
            )
            for i in range(len(views))
        ]
        for p in paths:
            place_image(tiny, folder / p)
        records[f"load-{c:04d}"] = record(
            question=f"Is there a finding {c} in this chest radiograph?",
            options=[f"finding {c}", "effusion", "pneumothorax", "none"],
            correct=rng.choice(LETTERS),
            task=TASKS[c % len(TASKS)],
            study_id=f"load-study-{c:04d}",
            images=paths,
            views=views,
            modality=None,
            correct_answer_explanation="Benchmark explanation.",
            category="Lung",
            subcategory="sub",
            StudyInstanceUid=f"1.9.{c}",
            PatientAge="060Y",
            PatientSex="F",
            Indication="Cough.",
            Findings="Benchmark findings.",
            Impression="Benchmark impression.",
            **{"class": "cls"},
        )
    return write_file(folder, records, name="load")


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
