"""answer_submit: one answer per reader, idempotent repeats, revisions, locks, time bounds."""

import pytest

from annotation.models import Answer, AnswerRevision
from annotation.services import AnswerRejected, answer_submit, reader_finish
from readerstudy.vocabulary import ANSWER_FIELD_NAMES

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


def test_revisions_do_not_push_a_case_past_the_time_cap(item, reader, settings):
    """Issue 25, finding 10: alternating answers stored 6.5 h on one case; the cap holds for
    the case's total, however many revisions."""
    settings.MAX_CASE_TIME_MS = 60_000
    for i in range(12):
        answer_submit(reader=reader, item=item, choice="AB"[i % 2], time_ms=50_000)
    answer = Answer.objects.get(reader=reader, item=item)
    assert answer.revisions_count == 11
    assert answer.time_ms == 60_000
    spent = answer.time_ms
    assert sum(r.time_ms for r in AnswerRevision.objects.filter(answer=answer)) <= spent


def test_readers_answer_independently(item, reader, other_reader):
    answer_submit(reader=reader, item=item, choice="A")
    answer_submit(reader=other_reader, item=item, choice="B")
    assert dict(Answer.objects.values_list("reader__username", "choice")) == {
        "reader": "A",
        "other_reader": "B",
    }


BLANK = dict.fromkeys(ANSWER_FIELD_NAMES, "")  # every field of a page's form, empty


def test_a_change_on_a_page_that_did_not_show_the_saved_answer_is_refused(item, reader):
    """Two tabs on one case: B saved in one; the other, still showing the case blank, sends C."""
    answer_submit(reader=reader, item=item, choice="B", base=BLANK)
    with pytest.raises(AnswerRejected, match=r"answered elsewhere .* the saved answer is B"):
        answer_submit(reader=reader, item=item, choice="C", base=BLANK)
    assert Answer.objects.get().choice == "B" and not AnswerRevision.objects.exists()


def test_a_change_on_a_page_that_showed_the_saved_answer_is_a_revision(item, reader):
    answer_submit(reader=reader, item=item, choice="B", comment="x", base=BLANK)
    shown = {**BLANK, "choice": "b", "comment": " x "}  # as the page had it
    outcome = answer_submit(reader=reader, item=item, choice="C", base=shown)
    assert outcome.revised and Answer.objects.get().choice == "C"


def test_a_repeat_is_unchanged_whatever_base_it_carries(item, reader):
    answer_submit(reader=reader, item=item, choice="B", base=BLANK)
    outcome = answer_submit(reader=reader, item=item, choice="B", base=BLANK)  # a retried post
    assert not outcome.created and not outcome.revised


def test_without_base_the_last_change_is_a_revision_as_before(item, reader):
    answer_submit(reader=reader, item=item, choice="B")
    assert answer_submit(reader=reader, item=item, choice="C").revised  # API clients


def test_the_page_gets_409_with_the_reason_for_a_stale_change(client, study, reader):
    import json

    from django.urls import reverse

    client.force_login(reader)
    url = reverse("reader-answer", kwargs={"slug": study.slug, "number": 1})
    base = json.dumps(BLANK)
    first = client.post(url, {"choice": "B", "base": base}, HTTP_ACCEPT="application/json")
    assert first.status_code == 200
    stale = client.post(url, {"choice": "C", "base": base}, HTTP_ACCEPT="application/json")
    assert stale.status_code == 409 and "the saved answer is B" in stale.json()["error"]
    # The reader's own saved answer, for the page to show beside the draft.
    assert stale.json()["saved"] == {**BLANK, "choice": "B"}
    bad = client.post(url, {"choice": "C", "base": "[1]"}, HTTP_ACCEPT="application/json")
    assert bad.status_code == 422
    assert Answer.objects.get(reader=reader).choice == "B"
