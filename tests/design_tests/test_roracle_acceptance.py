"""Issue 32's acceptance, as a PI would do it: a crossover made through the management
commands (import_questions, import_predictions, create_study), read by 6 readers through the
reading services, exported by export_analysis; MRMCaov and RJafroc, running the export's own
mrmc/README.txt commands on its files, print the page's aided - unaided, sign included, to
1e-8 (tests/design_tests/roracle_zip.py).

The suite reads 4 readers x 8 X-rays (about a minute); the acceptance size (6 readers x 60
X-rays of 3-4 questions, 2.5 minutes) runs with RORACLE_FULL=1 (`make bench-roracle`)."""

from __future__ import annotations

import csv
import os
import random
import shutil
from io import StringIO
from pathlib import Path

import pytest
from django.core.management import call_command

from readerstudy.models import ReaderStudy
from tests import roracle
from tests.design_tests.roracle_zip import check_packages, download, read_study
from tests.factories import UserFactory

pytestmark = [
    pytest.mark.django_db,
    pytest.mark.roracle,
    pytest.mark.usefixtures("figures_unrendered"),
]


@pytest.fixture(autouse=True)
def _r_packages():
    """Skip, saying why, before a study is built where R or a package is absent."""
    roracle.require("MRMCaov", "RJafroc")


RESOURCES = Path(__file__).resolve().parents[1] / "resources"
FULL = bool(os.environ.get("RORACLE_FULL"))
XRAYS, READERS = (60, 6) if FULL else (8, 4)
TASKS = ["Presence Assessment", "Negation Assessment", "Differential Diagnosis"]


def question_bank(root: Path, xrays: int) -> Path:
    """A question bank CSV (the README's columns) of `xrays` X-rays holding 3 or 4 questions
    each, with an image per X-ray."""
    rows = []
    for x in range(xrays):
        image = f"images/x{x:03d}/pa.png"
        (root / image).parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(RESOURCES / "tiny_8bit.png", root / image)
        for q in range(3 + x % 2):
            number = len(rows)
            rows.append(
                {
                    "id": f"q{number:04d}",
                    "case_id": f"x{x:03d}",
                    "question": f"Finding {q} on X-ray {x}?",
                    "option_a": "Yes, left",
                    "option_b": "Yes, right",
                    "option_c": "Both sides",
                    "option_d": "No",
                    "correct": "ABCD"[number % 4],
                    "task": TASKS[number % 3],
                    "category": "Lung",
                    "image_paths": image,
                    "view_positions": "PA",
                    "age": "60",
                    "sex": "M",
                    "indication": "Cough.",
                }
            )
    path = root / "bank.csv"
    with path.open("w", newline="") as out:
        writer = csv.DictWriter(out, fieldnames=list(rows[0]))
        writer.writeheader()
        writer.writerows(rows)
    return path


def predictions(root: Path, bank: Path) -> Path:
    """The AI's answers in import_predictions' shape: right 80% of the time."""
    rng = random.Random(32)
    path = root / "predictions.csv"
    with bank.open() as source, path.open("w", newline="") as out:
        writer = csv.writer(out)
        writer.writerow(["question_id", "prediction", "raw_response"])
        for row in csv.DictReader(source):
            letter = row["correct"] if rng.random() < 0.8 else rng.choice("ABCD")
            writer.writerow([row["id"], letter, f"The answer is ({letter})."])
    return path


def test_crossover_made_by_the_commands_packages_print_the_pages_aided_minus_unaided(
    client, tmp_path, settings
):
    roracle.require("MRMCaov", "RJafroc")
    settings.MEDIA_ROOT = str(tmp_path / "media")
    bank = question_bank(tmp_path / "bank", XRAYS)
    quiet = {"stdout": StringIO(), "stderr": StringIO()}
    call_command("import_questions", str(bank), "--dataset", "bank", "--json", **quiet)
    call_command(
        "import_predictions",
        str(predictions(tmp_path, bank)),
        "--dataset",
        "bank",
        "--model",
        "MedGemma",
        **quiet,
    )
    readers = [UserFactory(username=f"reader{i}") for i in range(READERS)]
    UserFactory(username="the-pi")
    total = sum(3 + x % 2 for x in range(XRAYS))
    out = StringIO()
    call_command(
        "create_study",
        "acceptance",
        "--dataset",
        "bank",
        "--sample",
        str(total),
        "--stratify",
        "none",
        "--arms",
        "unaided,aided",
        "--aid-model",
        "MedGemma",
        "--readers",
        ",".join(r.username for r in readers),
        "--pis",
        "the-pi",
        "--json",
        stdout=out,
    )
    study = ReaderStudy.objects.get(slug="acceptance")
    assert study.items.count() == total
    assert study.items.values("question__case").distinct().count() == XRAYS
    read_study(study, readers, seed=32)

    # export_analysis (the command) and the ZIP a PI downloads hold the same package files
    call_command("export_analysis", "acceptance", "--out", str(tmp_path / "export"), **quiet)
    archive, design = download(client, study, study.memberships.get(role="pi").user)
    for name in ("mrmc/mrmcaov.csv", "mrmc/README.txt"):
        assert (tmp_path / "export" / name).read_bytes() == archive.read(name)
    out = check_packages(archive, design, tmp_path / "r")
    random_row = design["tables"]["mrmc_difference"]["rows"][0]
    assert random_row["comparison"] == "aided − unaided"
    assert out["mrmcaov.csv"]["random_readers"]["test_diffs"]["Comparison"] == "aided - unaided"
    assert out["rjafroc.xlsx"]["rrrc"]["row"] == "trtaided-trtunaided"
    # methods.md describes the design the numbers come from.
    methods = archive.read("methods.md").decode()
    assert "Crossover: each reader read every question of their set once in each arm" in methods
    assert "two-modality" in methods or "Obuchowski" in methods
