"""Reading a designed study: arms per session, the washout, the AI's answer, second reads,
shuffled options and split-plot groups, through the services, the pages and the API."""

from __future__ import annotations

import re
from datetime import timedelta

import pytest
from django.urls import reverse
from django.utils import timezone

from annotation import selectors
from annotation.models import Answer, ReaderCompletion
from annotation.services import (
    AnswerRejected,
    SessionNotOpen,
    WrongArm,
    answer_submit,
    reader_finish,
)
from annotation.sessions import reading_of
from readerstudy.models import ReaderAssignment
from readerstudy.vocabulary import NO_USABLE_AID
from tests.design_tests.conftest import add_model, add_readers, crossover


def _finish_session(study, reader, choice="A"):
    for item in study.items.all():
        if answer_submit(reader=reader, item=item, choice=choice).stage == "first":
            answer_submit(reader=reader, item=item, choice=choice)
    reader_finish(reader=reader, study=study)


def _first_arm(study, reader, arm):
    ReaderAssignment.objects.filter(study=study, reader=reader).update(first_arm=arm)


@pytest.fixture
def crossed(design_study, set_design):
    readers = add_readers(design_study, 2)
    set_design(design_study, crossover(washout_days=28))
    _first_arm(design_study, readers[0], "unaided")
    return design_study, readers[0]


def test_session_two_is_refused_before_the_washout_and_opens_after(crossed, client):
    study, reader = crossed
    _finish_session(study, reader)
    reading = reading_of(study, reader)
    assert (reading.session, reading.arm, reading.is_open) == (2, "aided", False)
    item = study.items.first()
    with pytest.raises(SessionNotOpen, match="opens on") as refused:
        answer_submit(reader=reader, item=item, choice="B")
    assert refused.value.opens_at == reading.opens_at
    assert Answer.objects.filter(reader=reader, session=2).count() == 0
    client.force_login(reader)
    page = client.get(reverse("reader-case", args=[study.slug, 1]))
    assert page.status_code == 409
    assert "Your second session (aided) opens on" in page.content.decode()
    api = client.get(f"/api/v1/studies/{study.slug}/cases/1/")
    assert api.status_code == 409 and api.json()["opens_at"] == reading.opens_at.isoformat()
    put = client.put(
        f"/api/v1/studies/{study.slug}/cases/1/answer/",
        {"choice": "B"},
        content_type="application/json",
    )
    assert put.status_code == 409 and "opens_at" in put.json()
    # The washout passes: session 2 is open, in the other arm, and shows nothing of session 1.
    ReaderCompletion.objects.filter(reader=reader, session=1).update(
        finished_at=timezone.now() - timedelta(days=28, minutes=1)
    )
    reading = reading_of(study, reader)
    assert reading.is_open
    case = selectors.reader_case(study, reader, 1, reading=reading)
    assert case.answer is None and case.answered_count == 0 and case.session == 2
    assert case.aid is not None
    outcome = answer_submit(reader=reader, item=item, choice="C")
    assert (outcome.answer.session, outcome.answer.arm) == (2, "aided")
    assert Answer.objects.get(reader=reader, item=item, session=1).choice == "A"


def test_an_answer_for_the_other_arm_is_refused(crossed, client):
    study, reader = crossed
    ReaderStudy = type(study)
    ReaderStudy.objects.filter(pk=study.pk).update(washout_days=0)
    study.refresh_from_db()
    _finish_session(study, reader)
    with pytest.raises(WrongArm, match="This page was for session 1"):
        answer_submit(reader=reader, item=study.items.first(), choice="B", session=1)
    client.force_login(reader)
    put = client.put(
        f"/api/v1/studies/{study.slug}/cases/1/answer/",
        {"choice": "B", "session": 1},
        content_type="application/json",
    )
    assert put.status_code == 409 and "session 1" in put.json()["detail"]
    page = client.post(
        reverse("reader-answer", args=[study.slug, 1]) + "?session=1",
        {"choice": "B"},
        HTTP_ACCEPT="application/json",
    )
    assert page.status_code == 409 and "Reload the page" in page.json()["error"]
    assert not Answer.objects.filter(reader=reader, session=2).exists()


def test_the_ai_answer_shows_only_in_the_aided_arm_exactly_as_imported(crossed):
    study, reader = crossed
    unaided = selectors.reader_case(study, reader, 1)
    assert unaided.arm == "unaided" and unaided.aid is None
    _first_arm(study, reader, "aided")
    aided_case = selectors.reader_case(study, reader, 1)
    item = selectors.item_at(study, reader, 1)
    letter = item.question.correct
    assert aided_case.aid.usable and aided_case.aid.letter == letter
    assert aided_case.aid.option_text == item.question.options["ABCD".index(letter)]
    assert aided_case.aid.rationale == f"I think the answer is ({letter})."


def test_no_usable_answer_is_said_in_words(db, set_design):
    from tests.factories import build_study

    study = build_study(4)
    add_model(study, skip={0}, failed={1})
    reader = add_readers(study, 1)[0]
    set_design(study, crossover(arms="aided"))
    shown = {}
    for number in range(1, 5):
        case = selectors.reader_case(study, reader, number)
        shown[selectors.item_at(study, reader, number).position] = case.aid
    assert not shown[0].usable and not shown[1].usable and shown[2].usable
    assert shown[0].message == NO_USABLE_AID


def test_second_read_keeps_the_first_answer_fixed_once_the_ai_is_shown(db, set_design, client):
    from tests.factories import build_study

    study = build_study(3)
    add_model(study)
    reader = add_readers(study, 1)[0]
    set_design(study, crossover(arms="aided", aid_mode="second-read"))
    before = selectors.reader_case(study, reader, 1)
    assert before.aid is None and before.awaiting_first
    item = selectors.item_at(study, reader, 1)
    first = answer_submit(reader=reader, item=item, choice="A")
    assert first.stage == "first" and first.answer.choice == "" and first.answer.first_choice == "A"
    assert selectors.answered_item_ids(study, reader) == set()
    after = selectors.reader_case(study, reader, 1)
    assert after.aid is not None and after.first_choice == "A" and after.awaiting_final
    final = answer_submit(reader=reader, item=item, choice="D")
    assert final.stage == "final"
    stored = Answer.objects.get(item=item, reader=reader)
    assert (stored.first_choice, stored.choice) == ("A", "D") and stored.ai_shown_at
    answer_submit(reader=reader, item=item, choice="C")  # a revision of the final only
    stored.refresh_from_db()
    assert (stored.first_choice, stored.choice, stored.revisions_count) == ("A", "C", 1)
    # The page: the first submit leads back to the same case, which now shows the AI.
    client.force_login(reader)
    url = reverse("reader-answer", args=[study.slug, 2]) + "?stage=first"
    case_page = client.get(reverse("reader-case", args=[study.slug, 2])).content.decode()
    assert re.search(r'id="answer-form"[^>]*action="[^"]*[?&;]stage=first[&"]', case_page)
    response = client.post(url, {"choice": "B"}, HTTP_ACCEPT="application/json")
    assert response.json()["next"] == 2
    # The same first submit again (double click, a second tab) never becomes the final.
    again = client.post(url, {"choice": "B"}, HTTP_ACCEPT="application/json")
    assert again.status_code == 200 and again.json()["next"] == 2
    other = client.post(url, {"choice": "C"}, HTTP_ACCEPT="application/json")
    assert other.status_code == 409 and "can no longer change" in other.json()["error"]
    second = Answer.objects.get(item=selectors.item_at(study, reader, 2), reader=reader)
    assert (second.first_choice, second.choice) == ("B", "")
    page = client.get(reverse("reader-case", args=[study.slug, 2])).content.decode()
    assert "Your answer before seeing the AI" in page and "data-ai-aid" in page


def test_shuffled_options_are_answered_on_screen_and_stored_canonically(db, set_design, client):
    from tests.factories import build_study, imported_as

    study = build_study(6)
    for item in study.items.select_related("question"):
        imported_as(
            item.question, option_a="Alpha", option_b="Bravo", option_c="Charlie", option_d="Delta"
        )
    add_model(study)
    reader = add_readers(study, 1)[0]
    set_design(study, crossover(arms="aided", shuffle_options=True))
    reading = reading_of(study, reader)
    shuffled = False
    client.force_login(reader)
    for number in range(1, 7):
        case = selectors.reader_case(study, reader, number, reading=reading)
        item = selectors.item_at(study, reader, number)
        mapping = selectors.screen_letters(study, reading, item.question_id)
        shuffled |= [t for _, t in case.options] != ["Alpha", "Bravo", "Charlie", "Delta"]
        # The letter on screen is the one beside its text; the AI's letter follows the screen.
        assert dict(case.options)[case.aid.letter] == case.aid.option_text
        screen_a = case.options[0][0]
        response = client.post(
            reverse("reader-answer", args=[study.slug, number]),
            {"choice": screen_a},
            HTTP_ACCEPT="application/json",
        )
        assert response.json()["answer"]["choice"] == "A"
        stored = Answer.objects.get(item=item, reader=reader).choice
        assert stored == mapping["A"]
        assert item.question.options["ABCD".index(stored)] == case.options[0][1]
    assert shuffled
    rows = selectors.review_rows(study, reader)
    assert {r.choice for r in rows} == {"A"}  # the review shows the screen letters


def test_a_reader_reads_only_their_group_and_the_anchor(db, set_design):
    from tests.factories import build_study

    study = build_study(10)
    add_model(study)
    readers = add_readers(study, 2)
    set_design(study, crossover(groups=2, anchor=2))
    seen = {}
    for reader in readers:
        order = selectors.ordered_item_ids(study, reader)
        seen[reader] = set(order)
        assert len(order) == 6
    assert len(seen[readers[0]] & seen[readers[1]]) == 2
    foreign = study.items.exclude(id__in=seen[readers[0]]).first()
    with pytest.raises(AnswerRejected, match="not in your group"):
        answer_submit(reader=readers[0], item=foreign, choice="A")


def test_case_order_differs_per_session_and_is_reproducible(crossed):
    study, reader = crossed
    s1 = selectors.ordered_item_ids(study, reader)
    assert s1 == selectors.ordered_item_ids(study, reader)
    type(study).objects.filter(pk=study.pk).update(washout_days=0, random_order=True)
    study.refresh_from_db()
    first = selectors.ordered_item_ids(study, reader)
    _finish_session(study, reader)
    second = selectors.ordered_item_ids(study, reader)
    assert sorted(first) == sorted(second) and first != second


def test_a_study_without_a_design_gets_no_assignment(study, reader):
    answer_submit(reader=reader, item=study.items.first(), choice="A")
    assert not ReaderAssignment.objects.exists()
    assert Answer.objects.get().arm == "unaided"


def test_finishing_session_one_is_not_told_as_finishing_the_study(crossed, client):
    """Session 1 of 2: the review, the instructions and the finish screen speak of the session;
    the study's closing text ("You may close this window") waits for the last session."""
    study, reader = crossed
    type(study).objects.filter(pk=study.pk).update(
        washout_days=0, closing_text="Thank you. You may close this window."
    )
    study.refresh_from_db()
    client.force_login(reader)
    review = client.get(reverse("reader-review", args=[study.slug])).content.decode()
    assert "I have finished this session" in review and "finished this study" not in review
    instructions = client.get(reverse("reader-instructions", args=[study.slug])).content.decode()
    assert "the final submit there ends this session" in instructions
    _finish_session(study, reader)
    done = client.get(reverse("reader-done", args=[study.slug])).content.decode()
    assert "You may close this window" not in done
    assert "Session 1 of 2 is finished" in done and "begin session 2" in done
    _finish_session(study, reader, choice="B")
    done = client.get(reverse("reader-done", args=[study.slug])).content.decode()
    assert "You may close this window" in done


def test_an_answer_from_a_page_made_before_the_design_changed_is_refused(db, set_design, client):
    """The PI may change the design until the first answer (the Design page). A reading page
    opened before it, or its unsent answer, would put its letter on another option (shuffling
    now on) or its number on another case: refused in words, nothing saved."""
    from html import unescape

    from tests.factories import build_study

    study = build_study(6)
    add_model(study)
    reader = add_readers(study, 1)[0]
    set_design(study, crossover(arms="aided"))
    client.force_login(reader)
    page = client.get(reverse("reader-case", args=[study.slug, 1])).content.decode()
    old_action = unescape(re.search(r'id="answer-form"[^>]*action="([^"]+)"', page).group(1))
    assert "layout=" in old_action
    set_design(study, crossover(arms="aided", shuffle_options=True, aid_mode="second-read"))
    response = client.post(old_action, {"choice": "B"}, HTTP_ACCEPT="application/json")
    assert response.status_code == 409
    assert "design was changed since this page was shown" in response.json()["error"]
    assert not Answer.objects.exists()
    page = client.get(reverse("reader-case", args=[study.slug, 1])).content.decode()
    new_action = unescape(re.search(r'id="answer-form"[^>]*action="([^"]+)"', page).group(1))
    assert new_action != old_action
    response = client.post(new_action, {"choice": "B"}, HTTP_ACCEPT="application/json")
    assert response.status_code == 200 and Answer.objects.count() == 1


def test_a_washout_change_keeps_open_pages_valid(design_study, set_design):
    """The washout moves no case and no letter: pages opened before it stay good."""
    reader = add_readers(design_study, 1)[0]
    set_design(design_study, crossover(washout_days=28))
    before = reading_of(design_study, reader).layout
    set_design(design_study, crossover(washout_days=7))
    assert reading_of(design_study, reader).layout == before


def test_an_old_pages_answer_for_a_case_the_new_design_no_longer_gives_is_refused_in_words(
    design_study, set_design, client
):
    """Split-plot groups added after a reader opened their last case: that number is past the
    reader's new count. The answer is refused as made under another design (not "no such
    case"), and nothing is saved."""
    from html import unescape

    from readerstudy.design.rules import Design

    reader = add_readers(design_study, 2)[0]
    last = design_study.items.count()
    client.force_login(reader)
    page = client.get(reverse("reader-case", args=[design_study.slug, last])).content.decode()
    action = unescape(re.search(r'id="answer-form"[^>]*action="([^"]+)"', page).group(1))
    set_design(design_study, Design(groups=2))
    assert len(selectors.ordered_item_ids(design_study, reader)) < last
    response = client.post(action, {"choice": "B"}, HTTP_ACCEPT="application/json")
    assert response.status_code == 409
    assert "design was changed since this page was shown" in response.json()["error"]
    response = client.post(action, {"choice": "B"}, follow=True)  # a plain post (no script)
    assert response.redirect_chain[0][0] == reverse("reader-start", args=[design_study.slug])
    assert "design was changed since this page was shown" in response.content.decode()
    assert not Answer.objects.exists()


def test_an_api_client_sends_the_cases_layout_and_an_answer_under_an_earlier_design_is_refused(
    design_study, set_design, client
):
    """The API's sibling of the page's check: a case says the design it was shown under
    (`layout`), and an answer sent with it after the PI changed the design is refused with the
    page's words (409), also for a case the new design no longer gives; nothing is saved."""
    reader = add_readers(design_study, 2)[0]
    last = design_study.items.count()
    client.force_login(reader)
    base = f"/api/v1/studies/{design_study.slug}/cases"
    first = client.get(f"{base}/1/").json()
    listed = client.get(f"{base}/").json()["results"]
    assert first["layout"] == listed[0]["layout"] == reading_of(design_study, reader).layout
    set_design(design_study, crossover(shuffle_options=True, groups=2))
    for number in (1, last):
        put = client.put(
            f"{base}/{number}/answer/",
            {"choice": "B", "layout": first["layout"]},
            content_type="application/json",
        )
        assert put.status_code == 409, put.content
        assert "design was changed since this page was shown" in put.json()["detail"]
    assert not Answer.objects.exists()
    fresh = client.get(f"{base}/1/").json()["layout"]
    put = client.put(
        f"{base}/1/answer/", {"choice": "B", "layout": fresh}, content_type="application/json"
    )
    assert put.status_code == 201
