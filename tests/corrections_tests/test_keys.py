"""The key of a question under a key policy, and the version each answer is scored against
(readerstudy.keys): key-only versions re-score every answer, a change of words leaves earlier
answers scored against what their readers saw, a reversal restores the scores exactly."""

from __future__ import annotations

import datetime as dt

import pytest
from django.urls import reverse

from annotation.models import Answer
from annotation.services import AnswerRejected, answer_submit
from readerstudy.keys import KeyBook, answer_key, question_key
from readerstudy.question_versions import QuestionVersion
from readerstudy.services.versions import VersionError, reversal_changes, version_create
from readerstudy.vocabulary import KeyPolicy, VersionChange, WordingRule

pytestmark = pytest.mark.django_db

ORIGINAL, ADJUDICATED = KeyPolicy.ORIGINAL, KeyPolicy.ADJUDICATED


def scored(answer, **kwargs) -> tuple[int, str, bool | None]:
    key = answer_key(Answer.objects.get(pk=answer.pk), **kwargs)
    return key.version, "".join(sorted(key.accepted)), key.correct(answer.choice)


def test_every_question_has_version_1_as_imported_and_answers_are_shown_it(item, reader):
    v1 = QuestionVersion.objects.get(question=item.question)
    assert (v1.number, v1.correct, v1.accepted, v1.change) == (1, "A", "A", "original")
    assert v1.text == item.question.text and v1.options == item.question.options
    outcome = answer_submit(reader=reader, item=item, choice="A")
    assert outcome.answer.question_version == v1
    assert question_key(item.question).key == question_key(item.question, policy=ORIGINAL).key


def test_a_key_only_version_rescores_every_answer_and_the_original_policy_does_not(
    item, reader, other_reader
):
    right = answer_submit(reader=reader, item=item, choice="A").answer
    wrong = answer_submit(reader=other_reader, item=item, choice="B").answer
    v2 = version_create(question=item.question, changes={"correct": "B", "accepted": "B"})
    assert (v2.change, v2.wording) == (VersionChange.KEY, 1)
    assert scored(right) == (2, "B", False) and scored(wrong) == (2, "B", True)
    assert scored(right, policy=ORIGINAL) == (1, "A", True)
    assert scored(wrong, policy=ORIGINAL) == (1, "A", False)
    # The item's key as adjudicated (a debrief's "the key") and as imported.
    assert question_key(item.question).key == "B"
    assert question_key(item.question, policy=ORIGINAL).key == "A"


def test_several_valid_answers_count_each_accepted_letter_right(item, reader, other_reader):
    a = answer_submit(reader=reader, item=item, choice="A").answer
    c = answer_submit(reader=other_reader, item=item, choice="C").answer
    version_create(question=item.question, changes={"accepted": "AC"})
    assert scored(a) == (2, "AC", True) and scored(c) == (2, "AC", True)
    assert scored(c, policy=ORIGINAL)[2] is False


def test_a_change_of_words_leaves_earlier_answers_scored_against_what_their_readers_saw(
    client, item, reader, other_reader
):
    before = answer_submit(reader=reader, item=item, choice="A").answer
    v2 = version_create(
        question=item.question,
        changes={"option_b": "Rewritten second option", "correct": "B", "accepted": "B"},
    )
    assert (v2.change, v2.wording) == (VersionChange.WORDING, 2)
    # The reading page now shows the new words, and an answer given to them is v2's.
    client.force_login(other_reader)
    page = client.get(reverse("reader-case", args=[item.study.slug, 1])).content.decode()
    assert "Rewritten second option" in page and "Second option<" not in page
    after = answer_submit(reader=other_reader, item=item, choice="B", words=v2.words_stamp).answer
    assert after.question_version == v2
    assert scored(before) == (1, "A", True)  # the words reader saw, their key
    assert scored(after) == (2, "B", True)
    assert scored(before, wording=WordingRule.LATEST) == (2, "B", False)
    # A later key-only fix of the new words re-scores only answers given to them.
    version_create(question=item.question, changes={"accepted": "BD"})
    assert scored(before)[0] == 1 and scored(after)[:2] == (3, "BD")


def test_an_answer_from_a_page_with_the_earlier_words_is_recorded_against_them(item, reader):
    v1 = QuestionVersion.objects.get(question=item.question)
    version_create(question=item.question, changes={"text": "Reworded?"})
    answer = answer_submit(reader=reader, item=item, choice="A", words=v1.words_stamp).answer
    assert answer.question_version == v1
    with pytest.raises(AnswerRejected, match="words the server does not know"):
        answer_submit(reader=reader, item=item, choice="B", words="0123456789abcdef")
    assert Answer.objects.get(pk=answer.pk).choice == "A"


def test_a_reversal_is_a_version_that_restores_the_earlier_scores_exactly(
    item, reader, other_reader
):
    a = answer_submit(reader=reader, item=item, choice="A").answer
    b = answer_submit(reader=other_reader, item=item, choice="B").answer
    before = (scored(a), scored(b))
    v2 = version_create(question=item.question, changes={"correct": "B", "accepted": "B"})
    assert (scored(a)[2], scored(b)[2]) == (False, True)
    undo = reversal_changes(v2)
    assert undo == {"correct": "A", "accepted": "A"}
    v3 = version_create(question=item.question, changes=undo, reverses=v2)
    assert v3.wording == 1 and v3.number == 3
    assert (scored(a)[1:], scored(b)[1:]) == tuple(s[1:] for s in before)
    with pytest.raises(VersionError, match=r"undone|nothing"):
        version_create(question=item.question, changes=reversal_changes(v2))


def test_a_reversal_is_refused_once_a_later_version_changed_the_same_field(item):
    v2 = version_create(question=item.question, changes={"correct": "B", "accepted": "B"})
    version_create(question=item.question, changes={"correct": "C", "accepted": "C"})
    with pytest.raises(VersionError, match="later version changed the key"):
        reversal_changes(v2)


def test_as_of_leaves_out_later_versions(item, reader):
    answer = answer_submit(reader=reader, item=item, choice="B").answer
    v2 = version_create(question=item.question, changes={"correct": "B", "accepted": "B"})
    earlier = v2.created_at - dt.timedelta(seconds=1)
    assert scored(answer, as_of=earlier) == (1, "A", False)
    assert scored(answer, as_of=v2.created_at) == (2, "B", True)


def test_one_book_scores_many_answers_in_a_fixed_number_of_queries(
    study, reader, django_assert_max_num_queries
):
    items = list(study.items.order_by("position"))
    for item in items:
        answer_submit(reader=reader, item=item, choice="A")
        version_create(question=item.question, changes={"accepted": "ABCD"})
    answers = list(Answer.objects.filter(item__study=study).select_related("item"))
    with django_assert_max_num_queries(1):
        book = KeyBook.of([a.item.question_id for a in answers])
        keys = [answer_key(a, book=book) for a in answers]
    assert [k.correct(a.choice) for k, a in zip(keys, answers, strict=True)] == [True] * 4
    assert book.shown_at(items[0].question_id, dt.datetime(2000, 1, 1, tzinfo=dt.UTC)) == 1


def test_versions_are_checked_by_the_database_too(item):
    from django.db import IntegrityError, transaction

    v1 = QuestionVersion.objects.get(question=item.question)
    for bad in ({"accepted": "B"}, {"accepted": "AE"}, {"correct": "E"}, {"text": ""}):
        with pytest.raises(IntegrityError), transaction.atomic():
            QuestionVersion.objects.create(
                **{**v1.content(), **bad},
                question=item.question,
                number=2,
                wording=1,
                change=VersionChange.KEY,
            )
