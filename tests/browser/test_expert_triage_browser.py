"""Fast review on the demo, as a new expert would do it on a 1280x720 screen: the extremity
radiograph is at the top of the queue after the mis-keyed question; flagging it "image does not
match" and rejecting it takes at most 5 key presses after opening it."""

import pytest
from django.urls import reverse

from annotation.models import ExpertReview
from readerstudy.demo import MISKEYED
from readerstudy.models import StudyQuestion
from tests.browser.helpers import sign_in, wait_for_image, wait_image_loaded

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]
SCREEN = {"width": 1280, "height": 720}


class Keyboard:
    """Presses keys and counts them, so the test states the number a person would need."""

    def __init__(self, page):
        self.page, self.presses = page, []

    def press(self, key: str) -> None:
        self.presses.append(key)
        self.page.keyboard.press(key)


def visible_without_scrolling(page, selector: str) -> bool:
    box = page.locator(selector).bounding_box()
    return box is not None and box["y"] >= 0 and box["y"] + box["height"] <= SCREEN["height"]


def test_expert1_rejects_the_extremity_radiograph_in_five_keys_or_fewer(
    page, live_server, demo, artifacts
):
    page.set_viewport_size(SCREEN)
    sign_in(page, live_server, "expert1")
    page.goto(live_server.url + reverse("expert-queue", args=[demo.slug]))
    # First the mis-keyed question (readerstudy.demo.MISKEYED), then the leg radiograph's two.
    rows = page.locator("table.queue tbody tr")
    assert "5 of 5 raters chose B, 0 the key A" in rows.first.inner_text()
    top = rows.nth(1)
    assert "demo-mismatch" in top.inner_text()
    assert "2 of 2 readers: question does not fit" in top.inner_text()  # why it ranks here
    # The thumbnail loads lazily, so the page's load event does not wait for it: wait until it
    # has arrived and decoded (a broken image never gets a natural width, and this times out).
    wait_image_loaded(page.locator("table.queue tbody tr img.thumb").first)
    page.screenshot(path=str(artifacts / "expert-queue.png"))

    top.locator("a").first.click()
    page.wait_for_selector("text=✓ correct")
    wait_for_image(page)
    item_id = int(page.url.rstrip("/").rsplit("/", 1)[1])
    viewer = page.locator(".viewer").bounding_box()
    page.locator("#evidence table.evidence-shares").wait_for()  # in the options' place
    for control in (
        "#evidence h3",  # issue 34: the evidence started below the fold
        "#evidence table.evidence-shares",
        "input[name=flags][value=image_mismatch]",
        "input[name=decision][value=reject]",
        "button.primary",
    ):
        assert visible_without_scrolling(page, control), control
        assert page.locator(control).bounding_box()["x"] > viewer["x"] + viewer["width"] - 1
    # Options are shown once, each with who chose it ("A key · most chosen Right lower lobe").
    rows = page.locator("#evidence tbody tr")
    assert rows.count() == 4 and rows.first.inner_text().startswith("A")
    assert page.locator("ul.truth-options").count() == 0
    page.screenshot(path=str(artifacts / "expert-review.png"))

    keys = Keyboard(page)
    keys.press("x")  # Image does not match the question
    keys.press("d")  # only what was judged: image alignment 1 (flagged) and the difficulty
    keys.press("r")  # Reject
    keys.press("Enter")  # save, and open the next question of the queue
    page.wait_for_url(lambda url: not url.rstrip("/").endswith(f"/{item_id}"))
    assert len(keys.presses) <= 5

    review = ExpertReview.objects.get(item_id=item_id, expert__username="expert1")
    assert review.flags == ["image_mismatch"] and review.decision == "reject"
    assert review.image_alignment == 1
    # Ratings nobody gave stay unset: a rejected mismatch says nothing of clinical quality.
    assert review.clinical_quality is None and review.explanation_clarity is None
    assert review.factual_correctness is None
    assert review.difficulty == "medium"
    next_item = int(page.url.rstrip("/").rsplit("/", 1)[1])
    # The next: the queue's best-ranked question not reviewed yet, the mis-keyed one.
    assert StudyQuestion.objects.get(id=next_item).question.source_id == MISKEYED
    assert page.locator("text=Review of").count() == 1


def test_digits_rate_in_order_and_a_missing_choice_is_named_not_lost(page, live_server, demo):
    page.set_viewport_size(SCREEN)
    sign_in(page, live_server, "expert1")
    item = demo.items.order_by("position").first()
    page.goto(live_server.url + reverse("expert-review", args=[demo.slug, item.id]))
    page.wait_for_selector("#review-form")
    for key in "4352":
        page.keyboard.press(key)
    values = [
        page.locator(f"input[name={name}]:checked").get_attribute("value")
        for name in (
            "clinical_quality",
            "explanation_clarity",
            "factual_correctness",
            "image_alignment",
        )
    ]
    assert values == ["4", "3", "5", "2"]
    page.keyboard.press("Enter")  # no decision yet: the browser refuses to submit
    page.wait_for_timeout(300)
    assert not ExpertReview.objects.filter(item=item).exists()
    page.keyboard.press("a")
    page.keyboard.press("h")
    page.keyboard.press("Enter")
    page.wait_for_url(lambda url: not url.rstrip("/").endswith(f"/{item.id}"))
    saved = ExpertReview.objects.get(item=item)
    assert (saved.decision, saved.difficulty, saved.factual_correctness) == ("accept", "hard", 5)
