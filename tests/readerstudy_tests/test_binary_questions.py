"""Binary questions (finding present / absent) for ROC: declared by a question bank's
`present_option` column (or JSON key), or detected from ReXVQA-style yes/no options; the
declaration survives the corrected bank's round trip and may change on re-import."""

from __future__ import annotations

import csv
import io
import json
from pathlib import Path

import pytest

from readerstudy import bank_export
from readerstudy.models import Question, Task
from readerstudy.rexvqa import RexvqaError, parse_record, yes_no_present
from readerstudy.rexvqa_synthetic import labelled
from readerstudy.services.importing import question_bank_import, rexvqa_import
from tests.readerstudy_tests import rexvqa_builder as rb
from tests.readerstudy_tests.test_import_questions import row, run, write_csv
from tests.readerstudy_tests.test_import_rexvqa import run as run_json

pytestmark = pytest.mark.django_db


@pytest.mark.parametrize(
    ("options", "correct", "task", "present"),
    [
        (("Yes", "No", "Maybe", "Not assessable"), "B", Task.PRESENCE, "A"),
        (("No", "Cannot tell", "yes.", "Only laterally"), "C", Task.PRESENCE, "C"),
        (
            ("Yes, a small one", "No pleural effusion", "Unclear", "Old film"),
            "A",
            Task.PRESENCE,
            "A",
        ),
        # The key is neither yes nor no: no truth for present/absent.
        (("Yes", "No", "Maybe", "Not assessable"), "D", Task.PRESENCE, ""),
        # Two options say yes (where, not whether): a location question in disguise.
        (("Yes, on the left", "Yes, on the right", "Both", "No effusion"), "D", Task.PRESENCE, ""),
        # "Not", "None", "Nodular" and "Yesterday" are not yes or no.
        (("Yes", "Not assessable", "None", "Nodular"), "A", Task.PRESENCE, ""),
        (("Yesterday", "No", "Maybe", "Unclear"), "B", Task.PRESENCE, ""),
        # A negation question's "yes" means absent: never detected.
        (("Yes", "No", "Maybe", "Not assessable"), "A", Task.NEGATION, ""),
    ],
)
def test_which_yes_no_questions_are_detected_binary(options, correct, task, present):
    assert yes_no_present(options, correct, task) == present


def test_the_spreadsheet_column_declares_detects_or_refuses(tmp_path):
    rows = [
        row("q1", "c1", present_option=""),  # Yes / No / Maybe / Not assessable, key B: detected
        row("q2", "c1", present_option="none"),  # the same options, declared not binary
        row("q3", "c1", present_option="c", option_c="Effusion present", correct="C"),
        row("q4", "c1", present_option="", task="Differential Diagnosis", option_a="Pneumonia"),
    ]
    summary = run(write_csv(tmp_path, rows))
    declared = dict(Question.objects.values_list("source_id", "present_option"))
    assert declared == {"q1": "A", "q2": "", "q3": "C", "q4": ""}
    assert summary["binary"] == 2
    bad = [row("q5", "c2", present_option="yes")]
    with pytest.raises(Exception, match=r"row 2 \(question 'q5'\), column 'present_option'"):
        run(write_csv(tmp_path / "bad", bad))


def test_a_json_record_may_declare_it_too(tmp_path):
    records = {
        "q1": rb.record(1, "s1"),
        "q2": rb.record(2, "s1", present_option="B"),
        "q3": rb.record(3, "s1", present_option="none"),
    }
    run_json(rb.write(tmp_path, records), "--dataset", "d")
    declared = dict(Question.objects.values_list("source_id", "present_option"))
    assert declared == {"q1": "A", "q2": "B", "q3": ""}


def test_a_reimport_may_change_the_declaration_and_says_so(tmp_path):
    rows = [row("q1", "c1", present_option="none"), row("q2", "c1", present_option="")]
    run(write_csv(tmp_path, rows))
    assert Question.objects.get(source_id="q1").present_option == ""
    rows[0]["present_option"] = ""  # now detected
    again = run(write_csv(tmp_path, rows))
    assert again["questions_unchanged"] == 2 and again["binary_declared"] == 1
    assert Question.objects.get(source_id="q1").present_option == "A"


@pytest.mark.parametrize("fmt", ["json", "csv"])
def test_the_corrected_bank_keeps_the_declaration(demo, tmp_path, fmt):
    items = list(demo.items.select_related("question").order_by("position"))
    binary = {i.question.source_id for i in items if i.question.present_option}
    assert binary, "the demo has binary questions"
    bank = bank_export.study_bank(demo)
    if fmt == "json":
        records = json.loads(bank_export.bank_json(bank))
        exported = {qid: r["present_option"] for qid, r in records.items()}
    else:
        rows = csv.DictReader(io.StringIO(bank_export.bank_csv(bank).decode()))
        exported = {r["id"]: r["present_option"] for r in rows}
    assert {qid for qid, value in exported.items() if value != "none"} == binary
    path = tmp_path / f"bank.{fmt}"
    path.write_bytes(bank_export.bank_json(bank) if fmt == "json" else bank_export.bank_csv(bank))
    importer = rexvqa_import if fmt == "json" else question_bank_import
    importer(path=path, dataset_name="copy", images_root=Path(bank.images_root))
    copied = Question.objects.filter(dataset__name="copy")
    assert {q.source_id for q in copied if q.present_option} == binary
    original = dict(
        Question.objects.filter(dataset=demo.dataset).values_list("source_id", "present_option")
    )
    assert all(original[q.source_id] == q.present_option for q in copied)


def test_a_bad_declaration_is_said_in_words():
    record = {**rb.record(1), "present_option": "E"}
    with pytest.raises(RexvqaError, match="letter \\(A-D\\) of the option that means the finding"):
        parse_record("q1", record)


def test_a_correction_that_only_rewords_keeps_the_question_binary(tmp_path):
    """A corrected bank whose later version rewords the options ("Yes" -> "Effusion
    present": the same letter, the same meaning) keeps the yes/no question binary, with the
    option detected from the words it was released with; a re-import of the first release
    then changes nothing."""
    first = rb.record(1, "s1", correct_answer="B")
    run_json(rb.write(tmp_path / "v1", {"q1": first}), "--dataset", "d1")
    assert Question.objects.get(source_id="q1").present_option == "A"
    v1 = {
        "version": 1,
        "question": first["question"],
        "options": first["options"],
        "correct_answer": "B",
        "correct_answer_explanation": first["correct_answer_explanation"],
    }
    reworded = labelled(["Effusion present", "No effusion", "Maybe", "Not assessable"])
    v2 = {**v1, "version": 2, "options": reworded, "error_type": "unclear_options"}
    corrected = {**first, "options": reworded, "version": 2, "history": [v1, v2]}
    run_json(rb.write(tmp_path / "v2", {"q1": corrected}), "--dataset", "d2")
    assert Question.objects.get(dataset__name="d2", source_id="q1").present_option == "A"
