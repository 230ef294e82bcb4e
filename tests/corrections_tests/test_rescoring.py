"""Rescoring in the analysis (issue 35, point 4): every table scores each answer (readers' and
AI models') by the versioned keys under the policy switch `key`, and every output says which
keys it used.

The study is the demo's mis-keyed question in small: question 1 keyed A, where all three
readers and all three models chose B. Every expected number below is a hand count from the
choices in CHOICES (in the comments), never our own output.
"""

from __future__ import annotations

import csv
import io
import zipfile

import pandas as pd
import pytest
from django.urls import reverse

from analysis.cache import StudyAnalysis, data_version
from analysis.pipeline import AnalysisSettings
from annotation.corrections import (
    adjudication_rule_set,
    correction_decide,
    correction_vote,
    reversal_propose,
)
from annotation.services import answer_submit
from readerstudy.models import Role
from readerstudy.predictions.services import predictions_import
from readerstudy.question_versions import QuestionVersion
from readerstudy.vocabulary import DEFAULT_KEY_POLICY, AdjudicationRule, KeyPolicy
from tests.corrections_tests.conftest import propose, review
from tests.factories import MembershipFactory, UserFactory

# Their ZIPs are read for tables, README and methods: the figures are built, not saved
# (the figure tests save them).
pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("figures_unrendered")]

# The study's four questions are keyed A, B, C, D (build_study). Choices per question, in
# the order reader, other_reader, reader3, then the models M1, M2, M3.
RATERS = ("reader", "other_reader", "reader3", "M1", "M2", "M3")
CHOICES = (
    ("B", "B", "B", "B", "B", "B"),  # keyed A: everyone chose B (the mis-keyed question)
    ("B", "C", "B", "B", "A", "B"),  # keyed B
    ("C", "C", "D", "C", "C", "D"),  # keyed C
    ("A", "D", "D", "D", "D", "D"),  # keyed D
)
# Hand counts of right answers (of 4), keys A B C D as imported:
#   reader B B C A -> 2; other_reader B C C D -> 2; reader3 B B D D -> 2;
#   M1 B B C D -> 3; M2 B A C D -> 2; M3 B B D D -> 2.
ORIGINAL = {"reader": 2, "other_reader": 2, "reader3": 2, "M1": 3, "M2": 2, "M3": 2}
# After "wrong key, B" on question 1 every rater gains it: keys B B C D.
WRONG_KEY_B = {"reader": 3, "other_reader": 3, "reader3": 3, "M1": 4, "M2": 3, "M3": 3}


@pytest.fixture
def raters(study, reader, other_reader):
    third = UserFactory(username="reader3")
    MembershipFactory(study=study, user=third, role=Role.READER)
    people = {"reader": reader, "other_reader": other_reader, "reader3": third}
    items = list(study.items.order_by("position"))
    for item, choices in zip(items, CHOICES, strict=True):
        for name, choice in zip(RATERS, choices, strict=True):
            if name in people:
                answer_submit(reader=people[name], item=item, choice=choice)
    for column, model in enumerate(RATERS[3:], start=3):
        rows = "\n".join(
            f"{item.question.source_id},{choices[column]}"
            for item, choices in zip(items, CHOICES, strict=True)
        )
        predictions_import(
            dataset=study.dataset,
            model_name=model,
            content=f"question_id,prediction\n{rows}\n".encode(),
        )
    return people


def analysed(study, **policy):
    """The study's analysis as the worker computes it (analysis.cache), under `policy`."""
    return StudyAnalysis(study, AnalysisSettings(**policy)).result


def right_counts(result) -> dict[str, int]:
    """Each rater's correct count over all tasks, by username (readers) or model name."""
    names = dict(zip(result.raters["rater"], result.raters["username"], strict=True))
    table = result.accuracy[result.accuracy["task"] == "All"]
    return {names[r] or r: int(c) for r, c in zip(table["rater"], table["correct"], strict=True)}


def accept_wrong_key_b(item, expert, pi):
    correction = propose(expert, item, correct="B", note="Every rater chose B; the report too.")
    correction_decide(pi=pi, correction=correction, accept=True)
    correction.refresh_from_db()
    return correction


def test_the_switch_is_declared_once_and_defaults_to_the_adjudicated_keys():
    key = AnalysisSettings.switch("key_policy")
    assert {choice.value for choice in key.choices} == set(KeyPolicy.values)
    assert AnalysisSettings.key_policy == DEFAULT_KEY_POLICY == KeyPolicy.ADJUDICATED


def test_before_any_correction_the_default_scores_by_the_imported_keys_and_says_so(
    study, raters, item
):
    result = analysed(study)
    assert right_counts(result) == ORIGINAL
    assert right_counts(analysed(study, key_policy="original")) == ORIGINAL
    assert result.key_version.startswith("keys as imported: no correction accepted")
    assert result.key_changes.empty


def test_an_accepted_wrong_key_rescores_every_rater_as_the_hand_count_says(
    study, raters, item, expert, pi
):
    accept_wrong_key_b(item, expert, pi)
    adjudicated = analysed(study)
    assert right_counts(adjudicated) == WRONG_KEY_B
    # The switch: the original keys give the imported scores back, and say what they leave.
    original = analysed(study, key_policy="original")
    assert right_counts(original) == ORIGINAL
    assert original.key_version.startswith("original keys (as imported); not applied")
    today = QuestionVersion.objects.get(question=item.question, number=2).created_at.date()
    assert adjudicated.key_version == (
        f"keys as adjudicated on {today.isoformat()}: 1 question re-keyed, "
        "0 given several valid answers"
    )
    # Accuracy under both keys, for readers and models alike, in one table.
    both = adjudicated.accuracy_by_key
    both = both[both["task"] == "All"]
    names = dict(zip(adjudicated.raters["rater"], adjudicated.raters["username"], strict=True))
    rows = {
        names[r] or r: row for r, row in zip(both["rater"], both.to_dict("records"), strict=True)
    }
    assert {k: r["correct_original"] for k, r in rows.items()} == ORIGINAL
    assert {k: r["correct_adjudicated"] for k, r in rows.items()} == WRONG_KEY_B
    assert all(r["n"] == 4 and r["answers_rescored"] == 1 for r in rows.values())
    assert all(r["difference"] == pytest.approx(0.25) for r in rows.values())
    assert {rows[m]["kind"] for m in ("M1", "M2", "M3")} == {"model"}
    # The key change: question, old -> new, error type, who decided, when, where.
    (change,) = adjudicated.key_changes.to_dict("records")
    assert (change["question_id"], change["old_key"], change["new_key"]) == (
        item.question.source_id,
        "A",
        "B",
    )
    assert (change["error_type"], change["decided_by"], change["decided_in"]) == (
        "wrong_key",
        "pi",
        "this study",
    )
    assert change["decided_at"].startswith(today.isoformat())


def test_kappa_on_correctness_and_the_item_analysis_use_the_adjudicated_key(
    study, raters, item, expert, pi
):
    accept_wrong_key_b(item, expert, pi)
    result = analysed(study)
    # The experts' item analysis of the mis-keyed question: its key is B now, all 6 right,
    # no wrong option chosen, nothing suspicious left.
    from analysis.triage import study_item_analysis

    row = study_item_analysis(study).set_index("question_id").loc[item.question.source_id]
    assert (row["key"], row["p_correct"], row["key_suspicion"]) == ("B", 1.0, 0.0)
    assert pd.isna(row["modal_wrong"])
    # reader (right on 1, 2, 3) and M1 (right on 1, 2, 3, 4) on correctness: agree on 3 of 4.
    pairs = result.kappa_pairs["correct"]
    names = dict(zip(result.raters["username"], result.raters["rater"], strict=True))
    pair = pairs[
        (pairs["task"] == "All")
        & (pairs["rater_a"].isin([names["reader"], "M1"]))
        & (pairs["rater_b"].isin([names["reader"], "M1"]))
    ].iloc[0]
    assert pair["agreement"] == pytest.approx(3 / 4)


def test_several_valid_answers_count_each_accepted_letter_in_accuracy_and_mcnemar(
    study, raters, expert, pi
):
    third = study.items.order_by("position")[2]  # keyed C; reader3 and M3 chose D
    correction = propose(expert, third, error_type="several_valid", accepted=["C", "D"])
    correction_decide(pi=pi, correction=correction, accept=True)
    result = analysed(study)
    # reader3 and M3 gain question 3 (D now right too); the others are unchanged.
    assert right_counts(result) == {**ORIGINAL, "reader3": 3, "M3": 3}
    assert "0 questions re-keyed, 1 given several valid answers" in result.key_version
    # McNemar of reader (right on 2, 3) against reader3 (right on 2, 3, 4): only B right on 4.
    names = dict(zip(result.raters["username"], result.raters["rater"], strict=True))
    mcnemar = result.mcnemar
    pair = mcnemar[
        (mcnemar["rater_a"] == names["reader"]) & (mcnemar["rater_b"] == names["reader3"])
    ].iloc[0]
    assert (pair["only_a_correct"], pair["only_b_correct"]) == (0, 1)
    (change,) = result.key_changes.to_dict("records")
    assert (change["old_accepted"], change["new_key"], change["new_accepted"]) == (
        "C",
        "C",
        "C, D",
    )


def test_n_of_m_changes_the_numbers_only_at_the_nth_vote_and_a_reversal_restores_them(
    study, raters, item, experts, pi
):
    adjudication_rule_set(pi=pi, study=study, rule=AdjudicationRule.EXPERTS, votes=3)
    first, second, third = experts
    before = analysed(study)
    correction = propose(first, item, correct="B")
    review(second, item)
    correction_vote(voter=second, correction=correction, agree=True)
    pending = analysed(study)  # 2 of 3 agreeing: nothing changes
    assert right_counts(pending) == ORIGINAL
    assert pending.accuracy.equals(before.accuracy)
    review(third, item)
    correction_vote(voter=third, correction=correction, agree=True)
    decided = analysed(study)
    assert right_counts(decided) == WRONG_KEY_B
    correction.refresh_from_db()
    reversal = reversal_propose(user=first, study=study, version=correction.version)
    correction_vote(voter=second, correction=reversal, agree=True)
    assert right_counts(analysed(study)) == WRONG_KEY_B  # the reversal needs 3 too
    correction_vote(voter=third, correction=reversal, agree=True)
    restored = analysed(study)
    assert right_counts(restored) == ORIGINAL
    for name in ("accuracy", "accuracy_by_category", "mcnemar", "ai_vs_readers"):
        assert restored.table(name).equals(before.table(name)), name
    assert restored.kappa_pairs["correct"].equals(before.kappa_pairs["correct"])
    # The history stays: both versions are key changes, the second reversing the first.
    assert list(restored.key_changes["version"]) == [2, 3]
    assert list(restored.key_changes["reverses"].fillna(0)) == [0, 2]
    assert "0 questions re-keyed" in restored.key_version


def test_a_change_of_words_keeps_earlier_answers_on_what_their_readers_saw_and_says_how_many(
    client, study, raters, item, expert, pi
):
    correction = propose(
        expert,
        item,
        error_type="unclear_options",
        correct="B",
        option_b="Rewritten second option",
    )
    correction_decide(pi=pi, correction=correction, accept=True)
    v2 = QuestionVersion.objects.get(question=item.question, number=2)
    late = UserFactory(username="late_reader")
    MembershipFactory(study=study, user=late, role=Role.READER)
    answer_submit(reader=late, item=item, choice="B", words=v2.words_stamp)
    result = analysed(study)
    counts = right_counts(result)
    # The three readers saw version 1's words: scored against its key A (B is wrong). The
    # models' predictions were imported before version 2: the same. The late reader saw
    # version 2: B is right.
    assert {k: counts[k] for k in ORIGINAL} == ORIGINAL
    assert counts["late_reader"] == 1
    assert "1 question reworded" in result.key_version
    assert "6 answers given to earlier words are scored against the key of the words" in (
        result.key_version
    )
    pi_client = client
    pi_client.force_login(pi)
    page = pi_client.get(reverse("analysis", args=[study.slug])).content.decode()
    assert "6 answers given to earlier words" in page


def test_a_new_correction_changes_the_data_version_and_the_worker_recomputes(
    study, raters, item, expert, pi
):
    from analysis import preparation

    before = data_version(study)
    settings = AnalysisSettings()
    first = StudyAnalysis(study, settings)
    preparation.prepare(first)  # the worker (immediate in tests)
    assert right_counts(first.result) == ORIGINAL
    correction = accept_wrong_key_b(item, expert, pi)
    after = data_version(study)
    assert after != before
    fresh = StudyAnalysis(study, settings)
    assert fresh.version == after and not fresh.has("result")
    preparation.prepare(fresh)
    assert fresh.has("result") and right_counts(fresh.result) == WRONG_KEY_B
    reversal_propose(user=pi, study=study, version=correction.version)
    assert data_version(study) not in (before, after)


def _zip(client, study, query: str = "") -> zipfile.ZipFile:
    response = client.get(reverse("analysis-zip", args=[study.slug]) + query)
    assert response.status_code == 200, response.status_code
    return zipfile.ZipFile(io.BytesIO(response.content))


def test_the_zip_holds_both_key_tables_and_every_file_states_the_key_version(
    client, study, raters, item, expert, pi
):
    accept_wrong_key_b(item, expert, pi)
    client.force_login(pi)
    archive = _zip(client, study)
    names = set(archive.namelist())
    assert {"key_changes.csv", "accuracy_by_key.csv", "methods.md", "README.txt"} <= names
    day = QuestionVersion.objects.get(question=item.question, number=2).created_at.date()
    statement = f"keys as adjudicated on {day}: 1 question re-keyed, 0 given several valid answers"
    assert statement in archive.read("methods.md").decode()
    readme = archive.read("README.txt").decode()
    for table in ("accuracy.csv", "mcnemar.csv", "accuracy_by_key.csv", "key_changes.csv"):
        block = readme.split(f"\n{table}\n", 1)[1].split("\n\n", 1)[0]
        assert f"key_version: {statement}" in block.split(".csv\n", 1)[0], table
    rows = list(csv.DictReader(io.StringIO(archive.read("accuracy_by_key.csv").decode())))
    every = [r for r in rows if r["task"] == "All"]
    assert sorted(int(r["correct_adjudicated"]) for r in every) == sorted(WRONG_KEY_B.values())
    assert sorted(int(r["correct_original"]) for r in every) == sorted(ORIGINAL.values())
    (change,) = csv.DictReader(io.StringIO(archive.read("key_changes.csv").decode()))
    assert (change["old_key"], change["new_key"], change["error_type"]) == ("A", "B", "wrong_key")
    assert change["error_label"] == "Wrong key"  # the bank changelog's words for the same value
    assert '"key_version"' in archive.read("policy.json").decode()
    from openpyxl import load_workbook

    report = load_workbook(io.BytesIO(archive.read("report.xlsx")), read_only=True)
    assert {"key_changes", "accuracy_by_key"} <= set(report.sheetnames)
    about = [row for row in report["about"].iter_rows(values_only=True) if row[1] == "key_version"]
    assert {row[0] for row in about} >= {"accuracy", "accuracy_by_key", "key_changes"}
    assert all(row[2] == statement for row in about)
    responses = list(csv.DictReader(io.StringIO(archive.read("responses.csv").decode())))
    first = [r for r in responses if r["question_id"] == item.question.source_id]
    assert {(r["answer"], r["correct"], r["accepted"]) for r in first} == {("B", "True", "B")}


def test_the_api_and_the_export_take_the_same_switch(
    client, study, raters, item, expert, pi, tmp_path
):
    from django.core.management import call_command
    from rest_framework.test import APIClient

    accept_wrong_key_b(item, expert, pi)
    api = APIClient()
    api.force_login(pi)
    url = f"/api/v1/studies/{study.slug}/analysis/"
    adjudicated = api.get(url).json()
    original = api.get(url, {"key": "original"}).json()
    assert adjudicated["policy"]["key"] == "adjudicated"
    assert adjudicated["key_version"].startswith("keys as adjudicated on")
    assert original["key_version"].startswith("original keys")
    total = {
        "adjudicated": sum(r["correct"] for r in adjudicated["accuracy"] if r["task"] == "All"),
        "original": sum(r["correct"] for r in original["accuracy"] if r["task"] == "All"),
    }
    assert total == {
        "adjudicated": sum(WRONG_KEY_B.values()),
        "original": sum(ORIGINAL.values()),
    }
    assert len(adjudicated["key_changes"]) == 1 and adjudicated["accuracy_by_key"]
    assert api.get(url, {"key": "imported"}).status_code == 400
    out = io.StringIO()
    call_command("export_analysis", study.slug, "--out", tmp_path, "--key", "original", stdout=out)
    assert "Key version: original keys" in out.getvalue()
    rows = list(csv.DictReader((tmp_path / "accuracy.csv").open()))
    assert sum(int(r["correct"]) for r in rows if r["task"] == "All") == sum(ORIGINAL.values())


def test_the_debrief_marks_and_accuracy_agree_with_the_analysis_after_a_correction(
    client, study, raters, item, expert, pi
):
    from analysis.learning import debrief
    from annotation.services import reader_finish
    from readerstudy.services.studies import study_results_set
    from readerstudy.vocabulary import ResultsVisibility

    accept_wrong_key_b(item, expert, pi)
    reader = raters["reader"]
    reader_finish(reader=reader, study=study)
    study_results_set(
        study=study,
        actor=pi,
        visibility=ResultsVisibility.OWN_FINAL,
        show_ai=True,
        misses_unseen=0,
    )
    mine = debrief(study, reader)
    first = next(c for c in mine.cases if c.item_id == item.id)
    assert (first.choice, first.key, first.right) == ("B", "B", True)
    assert "version 2" in first.key_words
    # reader: B B C A against B B C D -> right on 3 of 4, as the analysis counts.
    assert sum(c.right for c in mine.cases) == WRONG_KEY_B["reader"]
    (every,) = [row for row in mine.accuracy if row.task == "All"]
    assert (every.correct, every.n) == (WRONG_KEY_B["reader"], 4)
    models = dict(every.models)
    assert models["M1"] == pytest.approx(WRONG_KEY_B["M1"] / 4)
    assert mine.key_version.startswith("keys as adjudicated on")
    client.force_login(reader)
    page = client.get(reverse("reader-results", args=[study.slug])).content.decode()
    assert mine.key_version in page
