"""Time one model's prediction import at the size of ReXVQA's public test split.

40,826 questions (10,000 X-rays) in one dataset, all shown by one study (as in the paper's
benchmark table), imported into a fresh SQLite database (or, with --postgres, a fresh
PostgreSQL database on 127.0.0.1:5432, dropped afterwards); one model's predictions (free text
answers, as models write them) imported, then replaced, then a second model. Goal (issue 27):
<= 3 s per model. Wall time and this process's CPU time are printed: on a shared machine the
CPU time is what the import costs, the wall time what it took under that load.
Run: .venv/bin/python benchmarks/prediction_import_bench.py [--profile] [--postgres]
"""

from __future__ import annotations

import os
import random
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
N_QUESTIONS = 40_826
N_CASES = 10_000


PG_ADMIN = "postgres://postgres@127.0.0.1:5432/postgres"


def setup(database_url: str) -> None:
    os.environ.update(
        DEBUG="1",
        DATABASE_URL=database_url,
        TASKS_URL="immediate://",
        CACHE_URL="locmem://",
        ENV_FILE=os.devnull,
    )
    sys.path.insert(0, str(ROOT))
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "readerstudy.config.settings")
    import django

    django.setup()
    from django.core.management import call_command

    call_command("migrate", verbosity=0)


def build():
    from readerstudy.models import Case, Dataset, Question, ReaderStudy, StudyQuestion
    from readerstudy.vocabulary import LETTERS

    rng = random.Random(0)
    dataset = Dataset.objects.create(name="ReXVQA test")
    cases = Case.objects.bulk_create(
        Case(dataset=dataset, study_id=f"study-{c:05d}") for c in range(N_CASES)
    )
    Question.objects.bulk_create(
        (
            Question(
                dataset=dataset,
                case=cases[q % N_CASES],
                source_id=f"q{q:06d}",
                text=f"Question {q}?",
                option_a=f"A. opacity {q}",
                option_b=f"B. effusion {q}",
                option_c=f"C. nodule {q}",
                option_d=f"D. normal {q}",
                correct=rng.choice(LETTERS),
                task="presence",
            )
            for q in range(N_QUESTIONS)
        ),
        batch_size=5000,
    )
    study = ReaderStudy.objects.create(slug="all", title="All", dataset=dataset)
    StudyQuestion.objects.bulk_create(
        (
            StudyQuestion(study=study, question=q, position=i)
            for i, q in enumerate(dataset.questions.order_by("id"))
        ),
        batch_size=5000,
    )
    return dataset


def predictions(seed: int) -> bytes:
    from readerstudy.vocabulary import LETTERS

    rng = random.Random(seed)
    forms = [
        "The answer is {l}. {o}",
        "{l}",
        "Answer: ({l}) because the image shows {o}",
        "I think the best option is {o}.",
    ]
    rows = ["question_id,prediction"]
    for q in range(N_QUESTIONS):
        letter = rng.choice(LETTERS)
        option = {"A": "opacity", "B": "effusion", "C": "nodule", "D": "normal"}[letter]
        text = rng.choice(forms).format(l=letter, o=f"{option} {q}")
        rows.append(f'q{q:06d},"{text}"')
    return ("\n".join(rows) + "\n").encode()


def measure(dataset, content: bytes) -> dict[str, tuple[float, float]]:
    """(wall, CPU) seconds of an import, a replacement and a second model's import."""
    from readerstudy.predictions.services import predictions_import

    out = {}
    for label, name, replace in (
        ("import", "m", False),
        ("replace", "m", True),
        ("2nd", "m2", False),
    ):
        wall, cpu = time.perf_counter(), time.process_time()
        if "--profile" in sys.argv:
            import cProfile
            import pstats

            with cProfile.Profile() as prof:
                predictions_import(
                    dataset=dataset, model_name=name, content=content, replace=replace
                )
            pstats.Stats(prof).sort_stats("cumulative").print_stats(25)
        else:
            predictions_import(dataset=dataset, model_name=name, content=content, replace=replace)
        out[label] = (time.perf_counter() - wall, time.process_time() - cpu)
        print(
            f"{label}: {out[label][0]:.2f} s wall, {out[label][1]:.2f} s CPU "
            f"for {N_QUESTIONS} predictions (load {os.getloadavg()[0]:.1f})"
        )
    return out


def run(database_url: str) -> dict[str, tuple[float, float]]:
    setup(database_url)
    t0 = time.perf_counter()
    dataset = build()
    print(f"built {N_QUESTIONS} questions in {time.perf_counter() - t0:.1f} s")
    return measure(dataset, predictions(1))


def main() -> None:
    if "--postgres" in sys.argv:
        import uuid

        import psycopg

        name = f"rs_prediction_bench_{uuid.uuid4().hex[:6]}"
        with psycopg.connect(PG_ADMIN, autocommit=True) as conn:
            conn.execute(f'CREATE DATABASE "{name}"')
        try:
            run(PG_ADMIN.rsplit("/", 1)[0] + "/" + name)
        finally:
            from django.db import connections

            connections.close_all()
            with psycopg.connect(PG_ADMIN, autocommit=True) as conn:
                conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
        return
    with tempfile.TemporaryDirectory() as tmp:
        run(f"sqlite:///{Path(tmp) / 'bench.sqlite3'}")


if __name__ == "__main__":
    main()
