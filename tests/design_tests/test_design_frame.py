"""The design frame (the companion MRMC analysis's input) and per-arm accuracy."""

from __future__ import annotations

import pytest
from django.urls import reverse

from analysis.design_frame import DESIGN_COLUMNS, design_frame
from analysis.selectors import study_raters
from annotation import selectors
from annotation.models import Answer
from annotation.services import answer_submit, reader_finish
from annotation.sessions import reading_of
from readerstudy.models import ReaderAssignment, Role
from readerstudy.services.studies import membership_add
from tests.design_tests.conftest import add_model, add_readers, crossover
from tests.factories import UserFactory, build_study


def _read_session(study, reader, screen_letter="A"):
    """Answer every case of the current session with the option shown first... or `A`."""
    reading = reading_of(study, reader)
    for number in range(1, len(selectors.ordered_item_ids(study, reader, reading)) + 1):
        item = selectors.item_at(study, reader, number, reading=reading)
        mapping = selectors.screen_letters(study, reading, item.question_id)
        outcome = answer_submit(reader=reader, item=item, choice=mapping[screen_letter])
        if outcome.stage == "first":
            answer_submit(reader=reader, item=item, choice=mapping[screen_letter])
    reader_finish(reader=reader, study=study)


@pytest.fixture
def read_crossover(db):
    study = build_study(4)
    add_model(study, skip={3})
    readers = add_readers(study, 2)
    from readerstudy.design.services import study_design_set

    study_design_set(study=study, design=crossover(shuffle_options=True))
    for reader in readers:
        _read_session(study, reader)
        _read_session(study, reader)
    return study, readers


def test_the_frame_has_one_row_per_reader_arm_question_in_canonical_letters(read_crossover):
    study, _readers = read_crossover
    frame = design_frame(study)
    assert list(frame.columns) == DESIGN_COLUMNS
    assert len(frame) == 2 * 2 * 4
    assert not frame.duplicated(["reader", "arm", "question_id"]).any()
    # Readers by the analysis' display names ("Reader 1" in the order they joined), never
    # by username.
    names = {r.source: r.name for r in study_raters(study) if r.kind == "human"}
    assert set(frame["reader"]) == {"Reader 1", "Reader 2"} == set(names.values())
    stored = {
        (names[a.reader.username], a.arm, a.item.question.source_id): (a.choice, a.session)
        for a in Answer.objects.select_related("reader", "item__question")
    }
    for row in frame.itertuples():
        assert (row.answer, row.session) == stored[(row.reader, row.arm, row.question_id)]
    first_arms = {
        names[username]: arm
        for username, arm in ReaderAssignment.objects.values_list("reader__username", "first_arm")
    }
    for row in frame.itertuples():
        assert (row.session == 1) == (row.arm == first_arms[row.reader])
    items = {i.question.source_id: i for i in study.items.select_related("question__case")}
    for row in frame.itertuples():
        item = items[row.question_id]
        assert row.correct_answer == item.question.correct
        assert row.case_id == item.question.case.study_id
        assert row.ai_answer == (None if item.position == 3 else item.question.correct)
        assert row.first_answer is None and row.reader_group is None and row.case_group is None


def test_second_read_first_answers_and_groups_reach_the_frame(db):
    from readerstudy.design.services import study_design_set

    study = build_study(10)
    add_model(study)
    readers = add_readers(study, 2)
    study_design_set(
        study=study, design=crossover(arms="aided", aid_mode="second-read", groups=2, anchor=2)
    )
    reader = readers[0]
    item = selectors.item_at(study, reader, 1)
    answer_submit(reader=reader, item=item, choice="A")
    answer_submit(reader=reader, item=item, choice="B")
    frame = design_frame(study)
    assert len(frame) == 6  # reader 0's group (4) and the anchor (2); reader 1 has not started
    row = frame[frame["question_id"] == item.question.source_id].iloc[0]
    assert (row["first_answer"], row["answer"], row["arm"]) == ("A", "B", "aided")
    group = str(ReaderAssignment.objects.get(reader=reader).reader_group)
    assert set(frame["reader_group"]) == {group}
    assert set(frame["case_group"]) == {group, "anchor"}
    assert (frame["answer"].isna()).sum() == 5


def test_the_analysis_page_shows_accuracy_per_arm(read_crossover, client):
    study, _ = read_crossover
    pi = UserFactory(username="the-pi")
    membership_add(study=study, user=pi, role=Role.PI)
    client.force_login(pi)
    page = client.get(reverse("analysis", args=[study.slug])).content.decode()
    assert "Aided against unaided" in page
    assert 'data-design-table="arm_accuracy"' in page
    assert 'data-design-table="mrmc_difference"' in page
    assert "Crossover, 2 arms (unaided / aided by MedGemma, concurrent)" in page


def test_the_feedback_export_says_arm_and_session_in_canonical_letters(read_crossover):
    import csv
    import io

    from annotation.exports import feedback_csv

    study, _ = read_crossover
    rows = list(csv.DictReader(io.StringIO(feedback_csv(study))))
    assert len(rows) == 16
    stored = {
        (a.reader.username, a.item.question.source_id, str(a.session)): (a.choice, a.arm)
        for a in Answer.objects.select_related("reader", "item__question")
    }
    for row in rows:
        key = (row["reader"], row["question_id"], row["session"])
        assert (row["choice"], row["arm"]) == stored[key]


def test_an_accepted_correction_rescores_both_arms(read_crossover):
    """Issue 35: the design frame scores by the adjudicated key (and accepted letters) too:
    per-arm accuracy moves by each reader's answers to the corrected question, by hand."""
    from analysis.stats import arm_accuracy
    from readerstudy.services.versions import version_create

    study, _readers = read_crossover
    item = study.items.order_by("position").first()  # keyed A

    def counts():
        table = arm_accuracy(design_frame(study))
        every = table[(table["task"] == "All") & table["reader"].str.startswith("Reader ")]
        return {(r.arm, r.reader): r.correct for r in every.itertuples()}

    before = counts()
    frame = design_frame(study)
    chosen = frame[frame["question_id"] == item.question.source_id]
    version_create(question=item.question, changes={"correct": "B", "accepted": "BC"})
    after = counts()
    for row in chosen.itertuples():
        gain = (row.answer in ("B", "C")) - (row.answer == "A")
        assert after[(row.arm, row.reader)] - before[(row.arm, row.reader)] == gain
    rescored = design_frame(study)
    first = rescored[rescored["question_id"] == item.question.source_id]
    assert set(first["correct_answer"]) == {"B"} and set(first["accepted"]) == {"BC"}
    original = design_frame(study, key="original")
    assert set(original[original["question_id"] == item.question.source_id]["accepted"]) == {"A"}
