"""An expert's Enter saves the review and opens the next question of the queue, even when the
next question could not be fetched ahead (a network error, a server error): the question just
saved is not shown again (the save does not fall back to reloading the page it is on)."""

from __future__ import annotations

import pytest
from django.urls import reverse

from annotation.models import ExpertReview
from readerstudy.demo import MISKEYED
from tests.browser.helpers import sign_in, wait_for_image
from tests.browser.test_expert_triage_browser import SCREEN

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def test_enter_opens_the_next_question_when_fetching_it_ahead_failed(page, live_server, demo):
    page.set_viewport_size(SCREEN)
    item = demo.items.get(question__source_id=MISKEYED)
    sign_in(page, live_server, "expert1")
    ahead = []

    def refuse_ahead(route):  # the fetch made ahead fails; the page itself loads
        if route.request.resource_type == "fetch":
            ahead.append(route.request.url)
            route.abort()
        else:
            route.continue_()

    page.route("**/expert/next/**", refuse_ahead)
    page.goto(live_server.url + reverse("expert-review", args=[demo.slug, item.id]))
    page.locator("#evidence table.evidence-shares").wait_for()
    wait_for_image(page)
    for _ in range(100):  # the fetch ahead is made (and refused)
        if ahead:
            break
        page.wait_for_timeout(100)
    assert ahead, "no fetch ahead was made"
    for key in ("x", "d", "r", "Enter"):  # image does not match, difficulty, reject, save
        page.keyboard.press(key)
    page.wait_for_url(lambda url: not url.rstrip("/").endswith(f"/expert/{item.id}"))
    assert ExpertReview.objects.get(item=item, expert__username="expert1").decision == "reject"
    page.locator("#workspace").wait_for()
    assert page.locator("#workspace").get_attribute("data-item") != str(item.id)
