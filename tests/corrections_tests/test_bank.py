"""The corrected bank: the study's questions at their current version as ReXVQA JSON, CSV and
XLSX with a changelog; importing any of them into a new dataset reproduces the versions."""

from __future__ import annotations

import csv
import io
import json
import zipfile
from pathlib import Path

import pytest
from django.contrib.auth import get_user_model
from django.urls import reverse

from annotation.corrections import correction_decide, correction_propose, reversal_propose
from readerstudy import bank_export
from readerstudy.demo import MISKEYED
from readerstudy.models import Question
from readerstudy.question_versions import QuestionVersion
from readerstudy.rexvqa import RexvqaError
from readerstudy.services.importing import question_bank_import, rexvqa_import
from readerstudy.services.versions import version_create
from tests.corrections_tests.conftest import review

pytestmark = pytest.mark.django_db

REWORDED = "demo-cxr-01-q2"
REVERSED = "demo-cxr-02-q1"


def _user(name):
    return get_user_model().objects.get(username=name)


@pytest.fixture
def corrected(demo):
    """The demo with three histories: the mis-keyed question re-keyed B by expert1's proposal
    and pi1's decision; a question with clearer options; one corrected and reversed."""
    expert1, pi1 = _user("expert1"), _user("pi1")
    item = demo.items.get(question__source_id=MISKEYED)
    review(expert1, item)
    proposal = correction_propose(
        expert=expert1,
        item=item,
        base=1,
        error_type="wrong_key",
        values={"correct": "B"},
        note="Report: mid and lower zones.",
    )
    review(pi1, item)
    correction_decide(pi=pi1, correction=proposal, accept=True)
    reworded = Question.objects.get(source_id=REWORDED, dataset=demo.dataset)
    version_create(
        question=reworded,
        changes={"option_d": "=Tension pneumothorax, both sides"},  # a formula-looking text
        study=demo,
        decided_by=pi1,
        rule="a PI's decision",
        error_type="unclear_options",
    )
    undone = Question.objects.get(source_id=REVERSED, dataset=demo.dataset)
    v2 = version_create(
        question=undone, changes={"accepted": undone.correct + "D"}, study=demo, rule="x"
    )
    reversal_propose(user=pi1, study=demo, version=v2)
    return demo


def versions_of(dataset_name: str) -> dict[str, list[tuple]]:
    out: dict[str, list[tuple]] = {}
    for v in QuestionVersion.objects.filter(question__dataset__name=dataset_name).order_by(
        "question__source_id", "number"
    ):
        out.setdefault(v.question.source_id, []).append(
            (
                v.number,
                *v.content().values(),
                v.wording,
                v.change,
                v.error_type,
                v.rule,
                v.note,
                v.reverses.number if v.reverses_id else None,
                v.created_at.replace(microsecond=0) if v.number > 1 else None,
            )
        )
    return out


def test_the_bank_holds_the_current_versions_and_a_changelog(corrected):
    bank = bank_export.study_bank(corrected)
    record = bank.records[MISKEYED]
    assert (record["correct_answer"], record["accepted_answers"], record["version"]) == (
        "B",
        ["B"],
        2,
    )
    assert record["is_changed"] and [h["correct_answer"] for h in record["history"]] == ["A", "B"]
    assert record["history"][1]["error_type"] == "wrong_key"
    assert record["history"][1]["decided"] == "a PI's decision"
    assert "pi1" not in json.dumps(record)  # a released file names no one
    untouched = next(
        r for qid, r in bank.records.items() if qid not in (MISKEYED, REWORDED, REVERSED)
    )
    assert untouched["version"] == 1 and untouched["history"] == []
    rows = [r for r in bank.changelog if r["question_id"] == MISKEYED]
    assert [(r["field"], r["old"], r["new"], r["error_type"]) for r in rows] == [
        ("Key", "A", "B", "wrong_key"),
        ("Accepted answers", "A", "B", "wrong_key"),
    ]
    reversal = [r for r in bank.changelog if r["question_id"] == REVERSED and r["version"] == 3]
    assert reversal and all(r["reverses"] == 2 for r in reversal)


@pytest.mark.parametrize("fmt", ["json", "csv", "xlsx"])
def test_importing_the_bank_into_a_new_dataset_reproduces_the_versions(corrected, tmp_path, fmt):
    bank = bank_export.study_bank(corrected)
    build = {
        "json": bank_export.bank_json,
        "csv": bank_export.bank_csv,
        "xlsx": bank_export.bank_xlsx,
    }
    path = tmp_path / f"bank.{fmt}"
    path.write_bytes(build[fmt](bank))
    importer = rexvqa_import if fmt == "json" else question_bank_import
    summary = importer(path=path, dataset_name=f"v2-{fmt}", images_root=Path(bank.images_root))
    assert summary.questions_created == len(bank.records)
    assert versions_of(f"v2-{fmt}") == versions_of(corrected.dataset.name)
    # The Question rows hold version 1, as the study's do.
    assert Question.objects.get(dataset__name=f"v2-{fmt}", source_id=MISKEYED).correct == "A"
    again = importer(path=path, dataset_name=f"v2-{fmt}", images_root=Path(bank.images_root))
    assert again.questions_unchanged == len(bank.records) and again.questions_created == 0


def test_a_history_that_does_not_end_in_the_record_is_refused(corrected, tmp_path):
    bank = bank_export.study_bank(corrected)
    bank.records[MISKEYED]["correct_answer"] = "C"
    bank.records[MISKEYED]["accepted_answers"] = ["C"]
    path = tmp_path / "bank.json"
    path.write_bytes(bank_export.bank_json(bank))
    with pytest.raises(RexvqaError, match="last version of the history is not the question"):
        rexvqa_import(path=path, dataset_name="bad", images_root=Path(bank.images_root))
    bank = bank_export.study_bank(corrected)
    bank.records[MISKEYED]["history"] = []
    path.write_bytes(bank_export.bank_json(bank))
    with pytest.raises(RexvqaError, match="version 2 needs its history"):
        rexvqa_import(path=path, dataset_name="bad", images_root=Path(bank.images_root))
    assert not Question.objects.filter(dataset__name="bad").exists()


def test_the_downloads_for_experts_and_pis(client, corrected):
    client.force_login(_user("expert1"))
    response = client.get(reverse("corrections-bank", args=[corrected.slug, "zip"]))
    assert response.status_code == 200
    archive = zipfile.ZipFile(io.BytesIO(b"".join([response.content])))
    assert set(archive.namelist()) == {
        "README.txt",
        "bank.json",
        "bank.csv",
        "bank.xlsx",
        "changelog.csv",
    }
    assert "reproduced" in archive.read("README.txt").decode()
    changelog = list(csv.DictReader(io.StringIO(archive.read("changelog.csv").decode())))
    assert {"question_id": MISKEYED, "field": "Key", "old": "A", "new": "B"}.items() <= next(
        r for r in changelog if r["question_id"] == MISKEYED
    ).items()
    name = response["Content-Disposition"]
    assert f"{corrected.slug}-bank-v" in name and name.endswith('.zip"')
    for fmt in ("json", "csv", "xlsx", "changelog"):
        assert (
            client.get(reverse("corrections-bank", args=[corrected.slug, fmt])).status_code == 200
        )
    assert client.get(reverse("corrections-bank", args=[corrected.slug, "exe"])).status_code == 404
