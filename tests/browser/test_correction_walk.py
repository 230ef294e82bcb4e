"""Issue 35 on the demo, at 1280x720: the mis-keyed question (key A; both simulated readers and
the three models chose B) is first in expert1's queue; expert1 proposes "wrong key, B" with
the keyboard alone; pi1 (also an expert) reviews it, sees the proposal, and accepts it with
`a` on its page: the question is at version 2, keyed B, and reader1's pages show none of it."""

from __future__ import annotations

import pytest
from django.urls import reverse

from annotation.correction_models import Correction
from annotation.models import ExpertReview
from readerstudy.demo import MISKEYED
from readerstudy.keys import question_key
from readerstudy.vocabulary import KeyPolicy, ProposalStatus
from tests.browser.helpers import sign_in, wait_for_image
from tests.browser.test_expert_triage_browser import SCREEN, Keyboard

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def _open_question(page, live_server, demo, item) -> None:
    page.goto(live_server.url + reverse("expert-review", args=[demo.slug, item.id]))
    page.locator("#evidence table.evidence-shares").wait_for()
    wait_for_image(page)


def _propose_wrong_key_b(page) -> Keyboard:
    keys = Keyboard(page)
    keys.press("v")  # Revise: the proposed correction opens with the focus
    page.wait_for_function("document.activeElement && document.activeElement.id === 'correction'")
    keys.press("b")  # the new key; "wrong key" follows from it
    return keys


def test_expert1_proposes_wrong_key_b_by_keyboard_and_pi1_accepts(
    page, live_server, demo, artifacts
):
    page.set_viewport_size(SCREEN)
    item = demo.items.get(question__source_id=MISKEYED)
    sign_in(page, live_server, "expert1")
    page.goto(live_server.url + reverse("expert-queue", args=[demo.slug]))
    top = page.locator("table.queue tbody tr").first
    assert "5 of 5 raters chose B, 0 the key A" in top.inner_text()
    _open_question(page, live_server, demo, item)

    keys = _propose_wrong_key_b(page)
    assert page.locator("input[name=fix-error_type][value=wrong_key]").is_checked()
    assert page.locator("input[name=fix-correct][value=B]").is_checked()
    page.screenshot(path=str(artifacts / "expert-correction.png"))
    keys.press("Escape")  # back to the review keys
    keys.press("d")  # what was judged: the difficulty (ratings stay not rated)
    keys.press("Enter")  # save, and open the next question
    page.wait_for_url(lambda url: not url.rstrip("/").endswith(f"/{item.id}"))
    assert len(keys.presses) <= 5, keys.presses
    proposal = Correction.objects.get(item=item)
    assert (proposal.proposer.username, proposal.error_type, proposal.changes) == (
        "expert1",
        "wrong_key",
        {"correct": "B", "accepted": "B"},
    )
    assert ExpertReview.objects.get(item=item, expert__username="expert1").decision == "revise"
    # The ? help names the correction's keys.
    page.keyboard.press("?")
    help_text = page.locator("#help").inner_text()
    assert "the new key" in help_text and "also correct" in help_text
    page.screenshot(path=str(artifacts / "expert-help.png"))

    # pi1 is an expert of the demo too: a colleague's proposal shows once pi1 has reviewed.
    page.context.clear_cookies()
    sign_in(page, live_server, "pi1")
    _open_question(page, live_server, demo, item)
    assert page.locator("[data-proposals-hidden]").is_visible()
    keys = _propose_wrong_key_b(page)  # the same correction: a vote for expert1's
    for key in ("Escape", "d", "Enter"):
        keys.press(key)
    page.wait_for_url(lambda url: not url.rstrip("/").endswith(f"/{item.id}"))
    page.goto(live_server.url + reverse("correction", args=[demo.slug, proposal.pk]))
    assert "Agree: expert1, pi1" in page.inner_text("body")
    page.screenshot(path=str(artifacts / "pi-proposal.png"))
    page.keyboard.press("a")  # Accept as the key
    page.wait_for_selector("text=is now at version 2")
    proposal.refresh_from_db()
    assert proposal.status == ProposalStatus.ACCEPTED and proposal.decided_by.username == "pi1"
    assert question_key(item.question).key == "B"
    assert question_key(item.question, policy=KeyPolicy.ORIGINAL).key == "A"
    page.goto(live_server.url + reverse("expert-review", args=[demo.slug, item.id]))
    assert "Key as adjudicated: B" in page.inner_text("body")
    page.goto(live_server.url + reverse("corrections", args=[demo.slug]))
    page.screenshot(path=str(artifacts / "corrections.png"), full_page=True)

    # reader1 (reading the demo, not final): the API and the reading pages show none of it.
    page.context.clear_cookies()
    sign_in(page, live_server, "reader1")
    for url in (
        f"/api/v1/studies/{demo.slug}/cases/",
        reverse("expert-review", args=[demo.slug, item.id]),
        reverse("corrections", args=[demo.slug]),
        f"/api/v1/studies/{demo.slug}/corrections/",
    ):
        body = page.request.get(live_server.url + url).text()
        assert "wrong_key" not in body and "Wrong key" not in body and "version 2" not in body
        assert "Report: mid" not in body
