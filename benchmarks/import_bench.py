"""Time `import_rexvqa` on a ReXVQA-shaped file the size of the public test split.

40,826 questions over 10,000 cases (a third with a second, lateral view), imported into a fresh
SQLite database. Goal: under 60 s on a 2-core machine.
Run: .venv/bin/python benchmarks/import_bench.py
"""

from __future__ import annotations

import json
import os
import random
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
from readerstudy.rexvqa_synthetic import (  # noqa: E402
    instance_path,
    place_image,
    record,
    write_file,
    write_png,
)
from readerstudy.vocabulary import LETTERS  # noqa: E402

N_QUESTIONS = 40_826
N_CASES = 10_000
TASKS = [
    ("Presence Assessment", 0.38),
    ("Negation Assessment", 0.18),
    ("Differential Diagnosis", 0.17),
    ("Location and Distribution Assessment", 0.20),
    ("Geometric Information Assessment", 0.07),
]


def make_file(root: Path) -> Path:
    rng = random.Random(0)
    tiny = write_png(root / "tiny.png", side=8)
    records = {}
    case_images = {}
    for c in range(N_CASES):
        views = ["PA", "LATERAL"] if c % 3 == 0 else ["AP"]
        paths = [
            instance_path(
                patient=f"p{c:05d}",
                accession=f"a{c:05d}",
                study_uid=f"1.2.{c}",
                series_uid=f"1.3.{c}",
                instance=f"{i}.png",
            )
            for i in range(len(views))
        ]
        for p in paths:
            place_image(tiny, root / p)
        case_images[c] = (paths, views)
    names = [t for t, _ in TASKS]
    weights = [w for _, w in TASKS]
    for q in range(N_QUESTIONS):
        c = q % N_CASES
        paths, views = case_images[c]
        records[f"q{q:06d}"] = record(
            question=f"Question {q} about study {c}?",
            options=[f"opt {q}{letter.lower()}" for letter in LETTERS],
            correct=rng.choice(LETTERS),
            task=rng.choices(names, weights)[0],
            study_id=f"study-{c:05d}",
            images=paths,
            views=views,
            correct_answer_explanation="Explanation text " * 5,
            category=rng.choice(["Lung", "Pleura", "Cardiac", "Bone"]),
            subcategory="sub",
            StudyInstanceUid=f"1.2.{c}",
            PatientID=f"p{c:05d}",
            PatientAge=f"{rng.randrange(18, 95):03d}Y",
            PatientSex=rng.choice("MF"),
            StudyDate="20200101",
            Indication="Shortness of breath.",
            Findings="Findings text " * 10,
            Impression="Impression text " * 3,
            **{"class": "cls"},
        )
    return write_file(root, records, name="bench")


def main() -> int:
    work = Path(tempfile.mkdtemp(prefix="import-bench-"))
    try:
        t0 = time.perf_counter()
        path = make_file(work / "data")
        took = time.perf_counter() - t0
        print(f"generated {N_QUESTIONS} questions / {N_CASES} cases in {took:.1f} s")
        env = {
            **os.environ,
            "DEBUG": "1",
            "DATABASE_URL": f"sqlite:///{work / 'bench.db'}",
            "MEDIA_ROOT": str(work / "media"),
        }
        manage = [sys.executable, str(ROOT / "manage.py")]
        subprocess.run([*manage, "migrate", "-v0"], env=env, check=True)
        t0 = time.perf_counter()
        result = subprocess.run(
            [*manage, "import_rexvqa", str(path), "--json"],
            env=env,
            check=True,
            capture_output=True,
            text=True,
        )
        elapsed = time.perf_counter() - t0
        summary = json.loads(result.stdout)
        assert summary["questions_created"] == N_QUESTIONS, summary
        assert summary["cases_created"] == N_CASES, summary
        t0 = time.perf_counter()
        again = subprocess.run(
            [*manage, "import_rexvqa", str(path), "--json"],
            env=env,
            check=True,
            capture_output=True,
            text=True,
        )
        reimport = time.perf_counter() - t0
        assert json.loads(again.stdout)["questions_created"] == 0
        print(
            f"import_rexvqa: {elapsed:.1f} s for {N_QUESTIONS} questions, "
            f"{summary['images_created']} images (goal < 60 s); re-import {reimport:.1f} s"
        )
        return 0 if elapsed < 60 else 1
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
