"""An AI-assisted crossover read in the browser: the AI's answer only in the aided arm,
shuffled options answered with the keys on screen and stored canonically, and the second
session refused until the washout has passed."""

from datetime import timedelta

import pytest
from django.urls import reverse
from django.utils import timezone

from annotation import selectors
from annotation.models import Answer, ReaderCompletion
from annotation.sessions import reading_of
from readerstudy.design.services import study_design_set
from readerstudy.models import ReaderAssignment
from tests.browser.helpers import (
    press_on_autofocus,
    reader_of,
    sign_in,
    study_with_radiographs,
    wait_seen,
)
from tests.design_tests.conftest import add_model, crossover
from tests.factories import imported_as

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

TEXTS = ["Alpha finding", "Bravo finding", "Charlie finding", "Delta finding"]


def _answer_first_on_screen(page, study, reader, number: int, total: int) -> str:
    """Press the key of the option shown first; return the canonical letter of its text."""
    page.wait_for_selector(f"text=Case {number} of {total}")
    wait_seen(page, number)  # answer keys act once the case has been shown (reading policy)
    first_text = page.locator(".options label.option span").first.inner_text().split(". ", 1)[1]
    canonical = "ABCD"[TEXTS.index(first_text)]
    page.keyboard.press("1")
    page.keyboard.press("Enter")
    return canonical


def test_crossover_read_in_both_arms_with_shuffled_options(page, live_server):
    study = study_with_radiographs(2)
    for item in study.items.select_related("question"):
        a, b, c, d = TEXTS
        imported_as(item.question, option_a=a, option_b=b, option_c=c, option_d=d, correct="C")
    add_model(study)
    reader = reader_of(study)
    study_design_set(study=study, design=crossover(washout_days=7, shuffle_options=True))
    ReaderAssignment.objects.filter(study=study, reader=reader).update(first_arm="unaided")
    # The test's own ORM reads happen while the page is idle: SQLite locks its tables.
    items = {n: selectors.item_at(study, reader, n) for n in (1, 2)}
    sign_in(page, live_server, "resident")

    # Session 1, unaided: no AI anywhere; the key "1" picks the option shown first.
    page.goto(live_server.url + reverse("reader-start", args=[study.slug]))
    page.wait_for_selector("text=Session 1 of 2: unaided")
    press_on_autofocus(page)
    expected = {}
    for number in (1, 2):
        page.wait_for_selector(f"text=Case {number} of 2")
        assert page.locator("[data-ai-aid]").count() == 0
        expected[items[number].id] = _answer_first_on_screen(page, study, reader, number, 2)
        if number == 1:
            page.wait_for_selector("text=Case 2 of 2")
    page.wait_for_url(f"**{reverse('reader-review', args=[study.slug])}")
    page.check("input[name=confirm]")
    page.click("[data-final-submit]")
    page.wait_for_selector("[data-next-session]")
    page.wait_for_load_state("networkidle")
    stored = dict(Answer.objects.filter(reader=reader, session=1).values_list("item_id", "choice"))
    assert stored == expected
    assert set(Answer.objects.filter(reader=reader).values_list("arm", flat=True)) == {"unaided"}

    # Before the washout: the date in words, nothing to answer.
    page.goto(live_server.url + reverse("reader-case", args=[study.slug, 1]))
    assert "Your second session (aided) opens on" in page.inner_text("[data-washout]")
    assert page.locator("#answer-form").count() == 0

    # The washout passes: session 2 is aided and shows the model's answer as imported.
    ReaderCompletion.objects.filter(reader=reader, session=1).update(
        finished_at=timezone.now() - timedelta(days=7, minutes=1)
    )
    page.goto(live_server.url + reverse("reader-start", args=[study.slug]))
    page.wait_for_selector("text=Session 2 of 2: aided by AI")
    press_on_autofocus(page)
    page.wait_for_selector("text=Case 1 of 2")
    page.wait_for_load_state("networkidle")
    aid = page.inner_text("[data-ai-aid]")
    assert "MedGemma" in aid and "Charlie finding" in aid
    # The letter beside the AI's answer is the letter on screen beside that text.
    reading = reading_of(study, reader)
    item = selectors.item_at(study, reader, 1, reading=reading)
    screen = selectors.to_screen(selectors.screen_letters(study, reading, item.question_id), "C")
    assert page.inner_text(".ai-answer strong") == f"{screen}."
    assert f"{screen}. Charlie finding" in page.inner_text(".options")
    canonical = _answer_first_on_screen(page, study, reader, 1, 2)
    page.wait_for_selector("text=Case 2 of 2")
    page.wait_for_selector("text=Saved — case 1")  # the next case shows before the receipt
    page.wait_for_load_state("networkidle")
    answer = Answer.objects.get(reader=reader, session=2, item=item)
    assert (answer.choice, answer.arm) == (canonical, "aided")
    assert Answer.objects.get(reader=reader, session=1, item=item).choice == expected[item.id]


def test_second_read_shows_the_ai_after_the_first_answer_and_keeps_both(page, live_server):
    study = study_with_radiographs(2)
    add_model(study)
    reader = reader_of(study)
    study_design_set(study=study, design=crossover(arms="aided", aid_mode="second-read"))
    sign_in(page, live_server, "resident")
    page.goto(live_server.url + reverse("reader-case", args=[study.slug, 1]))
    page.wait_for_selector("text=Case 1 of 2")
    assert page.locator("[data-ai-aid]").count() == 0  # not before the reader's own answer
    wait_seen(page, 1)
    page.keyboard.press("1")
    page.keyboard.press("Enter")
    page.wait_for_selector("[data-first-answer]")  # the same case, now with the AI
    assert "Case 1 of 2" in page.inner_text(".case-counter")
    assert page.locator("[data-ai-aid]").count() == 1
    assert page.locator("input[name=choice]:checked").count() == 0  # the final is a new choice
    wait_seen(page, 1)
    page.keyboard.press("4")
    page.keyboard.press("Enter")
    page.wait_for_selector("text=Case 2 of 2")
    page.wait_for_selector("text=Saved — case 1")
    page.wait_for_load_state("networkidle")
    item = selectors.item_at(study, reader, 1)
    answer = Answer.objects.get(reader=reader, item=item)
    assert (answer.first_choice, answer.choice) == ("A", "D")
