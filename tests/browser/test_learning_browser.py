"""What only a browser shows of learning (issue 36): a practice set read with the keyboard at
1280x720 (each answer followed by right or wrong, the key and the explanation, Enter going
on), the results page's keys, a missed case in the viewer. Screenshots: artifacts/ (or
SCREENSHOT_DIR, e.g. docs/screenshots)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from django.urls import reverse

from annotation.models import Answer
from annotation.practice import practice_set_create
from annotation.selectors import item_at
from readerstudy.models import ReaderStudy, Role
from tests.browser.helpers import (
    finish_on_review,
    open_results_from_done,
    sign_in,
    study_with_radiographs,
    wait_for_image,
    wait_seen,
)
from tests.factories import MembershipFactory, UserFactory

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def _shots(artifacts: Path) -> Path:
    return Path(os.environ.get("SCREENSHOT_DIR") or artifacts)


def test_a_practice_set_by_keyboard_shows_each_key_and_enter_goes_on(page, live_server, artifacts):
    source = study_with_radiographs(4)  # the questions and derived radiographs of a bank
    source.items.all().delete()
    pi = UserFactory(username="director")
    resident = UserFactory(username="resident")
    study = practice_set_create(
        slug="practice",
        title="Chest practice",
        dataset=source.dataset,
        n=4,
        creator=pi,
        readers=["resident"],
    ).study
    page.set_viewport_size({"width": 1280, "height": 720})
    sign_in(page, live_server, "resident")
    page.goto(live_server.url + reverse("reader-case", args=[study.slug, 1]))
    shots = _shots(artifacts)
    for number in range(1, 5):
        item = item_at(study, resident, number)
        key = item.question.correct
        wrong = next(x for x in "ABCD" if x != key)
        choice = wrong if number == 1 else key
        wait_seen(page, number)
        assert page.locator("[data-feedback-panel]").count() == 0  # no key before the answer
        assert item.question.explanation not in page.content()
        page.keyboard.press(choice.lower())
        page.keyboard.press("Enter")
        page.wait_for_selector(f"#workspace[data-case-number='{number}'][data-feedback]")
        verdict = page.inner_text(".feedback-verdict")
        if number == 1:
            assert verdict == f"✗ Wrong: you chose {wrong}; the key is {key}"
            wait_for_image(page)
            page.screenshot(path=str(shots / "practice-feedback.png"))
            # The feedback and "Next case" are in view at 1280x720.
            assert page.locator("[data-practice-next]").is_visible()
            box = page.locator("[data-practice-next]").bounding_box()
            assert box["y"] + box["height"] <= 720
        else:
            assert verdict == f"✓ Right: {key}"
        assert item.question.explanation in page.inner_text("[data-feedback-panel]")
        wait_seen(page, number)
        page.keyboard.press("Enter")
        if number < 4:
            page.wait_for_selector(f"#workspace[data-case-number='{number + 1}']")
    page.wait_for_url("**/read/review/")
    answers = Answer.objects.filter(item__study=study, reader=resident)
    assert answers.count() == 4 and all(answers.values_list("practice", flat=True))
    finish_on_review(page)
    page.wait_for_url("**/read/done/")
    open_results_from_done(page)
    page.screenshot(path=str(shots / "practice-results.png"))
    page.keyboard.press("m")  # my misses: the first has the focus
    page.keyboard.press("Enter")
    page.wait_for_url("**/results/case/1/")
    wait_for_image(page)
    assert "the key is" in page.inner_text("[data-feedback-panel]")
    page.keyboard.press("b")
    page.wait_for_url("**/results/#case-1")
    page.keyboard.press("p")  # to "practise my misses": the interval has the focus
    page.keyboard.press("Enter")
    page.wait_for_url("**/#practice")
    assert page.locator("[data-plan-due]").is_visible()
    assert MembershipFactory._meta.model.objects.filter(study=study, role=Role.PI).exists()
    assert ReaderStudy.objects.filter(practice_plans__owner=resident).exists()
