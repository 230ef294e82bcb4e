"""answer_submit: one answer per reader, idempotent repeats, revisions, locks, time bounds."""

import pytest

from annotation.models import Answer, AnswerRevision
from annotation.services import AnswerRejected, answer_submit, reader_finish

pytestmark = pytest.mark.django_db


@pytest.fixture
def item(study):
    return study.items.order_by("position").first()


def test_first_submit_creates_the_answer(item, reader):
    outcome = answer_submit(
        reader=reader,
        item=item,
        choice="c",
        difficulty="hard",
        alignment="partly",
        comment=" because ",
        time_ms=4200,
    )
    assert outcome.created and not outcome.revised
    answer = Answer.objects.get()
    assert (answer.choice, answer.difficulty, answer.alignment, answer.comment, answer.time_ms) == (
        "C",
        "hard",
        "partly",
        "because",
        4200,
    )


def test_repeat_with_same_values_is_a_no_op(item, reader):
    answer_submit(reader=reader, item=item, choice="A", time_ms=1000)
    outcome = answer_submit(reader=reader, item=item, choice="A", time_ms=1000)
    assert not outcome.created and not outcome.revised
    assert Answer.objects.count() == 1
    assert AnswerRevision.objects.count() == 0


def test_change_is_kept_as_a_revision(item, reader):
    answer_submit(reader=reader, item=item, choice="A", difficulty="easy", time_ms=1000)
    outcome = answer_submit(reader=reader, item=item, choice="D", difficulty="easy", time_ms=500)
    assert outcome.revised
    answer = Answer.objects.get()
    assert answer.choice == "D" and answer.time_ms == 1500 and answer.revisions_count == 1
    revision = AnswerRevision.objects.get()
    assert revision.editor == reader
    assert revision.old["choice"] == "A" and revision.new["choice"] == "D"
    assert revision.time_ms == 500


def test_change_rejected_when_study_disallows_revision(item, reader):
    item.study.allow_revision = False
    item.study.save()
    answer_submit(reader=reader, item=item, choice="A")
    with pytest.raises(AnswerRejected, match="does not allow changing"):
        answer_submit(reader=reader, item=item, choice="B")
    assert Answer.objects.get().choice == "A"


def test_locked_after_final_submit(item, reader):
    answer_submit(reader=reader, item=item, choice="A")
    reader_finish(reader=reader, study=item.study)
    with pytest.raises(AnswerRejected, match="locked"):
        answer_submit(reader=reader, item=item, choice="B")
    assert Answer.objects.get().choice == "A"


def test_final_submit_does_not_lock_when_study_says_not(item, reader):
    item.study.lock_on_finish = False
    item.study.save()
    reader_finish(reader=reader, study=item.study)
    answer_submit(reader=reader, item=item, choice="B")
    assert Answer.objects.get().choice == "B"


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"choice": ""}, "Choose one"),
        ({"choice": "E"}, "Choose one"),
        ({"choice": "A", "difficulty": "trivial"}, "Difficulty"),
        ({"choice": "A", "alignment": "maybe"}, "alignment"),
    ],
)
def test_invalid_values_are_rejected(item, reader, kwargs, message):
    with pytest.raises(AnswerRejected, match=message):
        answer_submit(reader=reader, item=item, **kwargs)
    assert not Answer.objects.exists()


def test_time_is_bounded(item, reader, settings):
    settings.MAX_CASE_TIME_MS = 60_000
    answer_submit(reader=reader, item=item, choice="A", time_ms=10**9)
    assert Answer.objects.get().time_ms == 60_000
    answer_submit(reader=reader, item=item.study.items.last(), choice="A", time_ms=-5)
    assert Answer.objects.get(item=item.study.items.last()).time_ms == 0


def test_readers_answer_independently(item, reader, other_reader):
    answer_submit(reader=reader, item=item, choice="A")
    answer_submit(reader=other_reader, item=item, choice="B")
    assert dict(Answer.objects.values_list("reader__username", "choice")) == {
        "reader": "A",
        "other_reader": "B",
    }
