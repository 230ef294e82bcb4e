"""A reader rates confidence by keyboard: digits on a 5-point scale (the options then by their
letters), and on a 0-100 scale the S key, typing and the arrow keys; an answer without a
rating is stopped on the page with the server's words."""

import pytest
from django.urls import reverse

from annotation.models import Answer
from readerstudy.vocabulary import CONFIDENCE_SCALES, ConfidenceScale
from tests.browser.helpers import reader_of, sign_in, study_with_radiographs, wait_seen

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def rated_study(scale: str, n: int = 3):
    study = study_with_radiographs(n)
    study.confidence_scale = scale
    study.save(update_fields=["confidence_scale"])
    return study


def open_case(page, live_server, study, number: int = 1) -> None:
    page.goto(live_server.url + reverse("reader-case", args=[study.slug, number]))
    page.wait_for_selector(f"text=Case {number} of")
    wait_seen(page, number)


def test_a_five_point_scale_is_rated_with_the_digits(page, live_server, artifacts):
    study = rated_study(ConfidenceScale.FIVE)
    reader = reader_of(study)
    sign_in(page, live_server, "resident")
    open_case(page, live_server, study)
    page.screenshot(path=str(artifacts / "confidence-five-point.png"))
    refusal = CONFIDENCE_SCALES[ConfidenceScale.FIVE].refusal()
    page.keyboard.press("b")
    page.keyboard.press("Enter")  # no rating yet: stopped on the page, in the server's words
    page.wait_for_selector(f"text={refusal}")
    assert page.is_checked('input[name="choice"][value="B"]')
    page.keyboard.press("4")  # a digit rates; it does not choose option D
    assert page.is_checked('input[name="confidence"][value="4"]')
    assert page.is_checked('input[name="choice"][value="B"]')
    page.keyboard.press("Enter")
    page.wait_for_selector("text=Case 2 of 3")
    wait_seen(page, 2)
    page.keyboard.press("d")
    page.keyboard.press("2")
    page.keyboard.press("Enter")
    page.wait_for_selector("text=Case 3 of 3")
    page.wait_for_selector("text=2 / 3 answered")
    answers = Answer.objects.filter(reader=reader).order_by("created_at")
    assert [(a.choice, a.confidence) for a in answers] == [("B", 4), ("D", 2)]


def test_a_fine_scale_is_typed_and_stepped_without_the_mouse(page, live_server, artifacts):
    study = rated_study(ConfidenceScale.PERCENT)
    reader = reader_of(study)
    sign_in(page, live_server, "resident")
    open_case(page, live_server, study)
    page.keyboard.press("3")  # option C (the digits stay the options' keys)
    page.keyboard.press("s")  # into the confidence box
    page.keyboard.type("72")
    page.keyboard.press("ArrowUp")
    page.keyboard.press("PageUp")
    assert page.input_value('input[name="confidence"]') == "83"
    assert page.input_value(".scale-slider") == "83"  # the slider follows the box
    page.screenshot(path=str(artifacts / "confidence-percent.png"))
    page.keyboard.press("Enter")  # submits from the box
    page.wait_for_selector("text=Case 2 of 3")
    wait_seen(page, 2)
    page.keyboard.press("a")
    page.keyboard.press("s")
    page.keyboard.type("150")
    page.keyboard.press("Enter")  # off the scale: refused on the page, in the server's words
    page.wait_for_selector(f"text={CONFIDENCE_SCALES[ConfidenceScale.PERCENT].refusal()}")
    page.keyboard.press("Escape")
    page.keyboard.press("s")  # back in, the rating selected: typing replaces it
    page.keyboard.type("40")
    page.keyboard.press("Enter")
    page.wait_for_selector("text=Case 3 of 3")
    page.wait_for_selector("text=2 / 3 answered")
    answers = Answer.objects.filter(reader=reader).order_by("created_at")
    assert [(a.choice, a.confidence) for a in answers] == [("C", 83), ("A", 40)]
