"""The acceptance walk-throughs on the demo itself (`seed_demo`), as a new user would do them."""

import io

import pandas as pd
import pytest
from django.contrib.auth import get_user_model
from django.urls import reverse

from annotation.models import Answer, ExpertReview, ReaderCompletion
from annotation.reviews import review_submit
from readerstudy.models import Question
from tests.browser.helpers import (
    press_on_autofocus,
    sign_in,
    sign_in_with_form,
    wait_seen,
    wait_until,
)

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def hidden_texts(study) -> set[str]:
    """What a reader must never receive: explanations and the source reports."""
    texts = set()
    for q in Question.objects.filter(dataset=study.dataset).select_related("case"):
        texts |= {q.explanation, q.case.findings, q.case.impression}
    return {t for t in texts if len(t) > 20}


def test_reader1_completes_the_demo_with_the_keyboard_alone(page, live_server, demo):
    received: list[str] = []
    page.on(
        "response",
        lambda r: (
            received.append(r.text()) if "text/html" in r.headers.get("content-type", "") else None
        ),
    )
    total = demo.items.count()
    sign_in_with_form(page, live_server, "reader1")  # the one walk-through that types it
    page.goto(live_server.url + reverse("reader-start", args=[demo.slug]))
    page.wait_for_selector("text=Begin with case 1")  # the instructions come first
    press_on_autofocus(page)
    for number in range(1, total + 1):
        page.wait_for_selector(f"text=Case {number} of {total}")
        wait_seen(page, number)
        page.keyboard.press("ABCD"[number % 4])
        page.keyboard.press("Enter")
    page.wait_for_url(f"**{reverse('reader-review', args=[demo.slug])}")
    page.wait_for_selector(f"text=All {total} cases are answered")
    for _ in range(60):  # Tab to the confirmation box, as a keyboard user does
        if page.evaluate("document.activeElement.name") == "confirm":
            break
        page.keyboard.press("Tab")
    page.keyboard.press("Space")
    page.keyboard.press("Tab")
    # Enter once no answer is still being sent (the final button waits for them).
    wait_until(page, "() => !document.querySelector('[data-final-submit]').disabled")
    page.keyboard.press("Enter")
    page.wait_for_url(f"**{reverse('reader-done', args=[demo.slug])}")

    assert Answer.objects.filter(item__study=demo, reader__username="reader1").count() == total
    assert ReaderCompletion.objects.filter(study=demo, reader__username="reader1").exists()
    leaks = [t for t in hidden_texts(demo) if any(t in html for html in received)]
    assert len(received) > total and not leaks


def test_expert1_flags_the_mismatch_at_the_top_and_pi1_excludes_it(page, live_server, demo):
    sign_in(page, live_server, "expert1")
    page.goto(live_server.url + reverse("expert-queue", args=[demo.slug]))
    # After the mis-keyed question (readerstudy.demo.MISKEYED), the leg radiograph's.
    row = page.locator("table tbody tr", has_text="demo-mismatch").first
    assert "does not fit" in row.inner_text()  # readers said "does not fit" in the demo
    row.locator("a").first.click()
    page.wait_for_selector("text=✓ correct")
    item_id = int(page.url.rstrip("/").rsplit("/", 1)[1])
    page.check("input[name=flags][value=image_mismatch]")
    for name in ("clinical_quality", "explanation_clarity", "factual_correctness"):
        page.check(f"input[name={name}][value='3']")
    page.check("input[name=image_alignment][value='1']")
    page.check("input[name=difficulty][value=hard]")
    page.check("input[name=decision][value=reject]")
    page.click("button:has-text('Save and next')")
    page.wait_for_url(lambda url: not url.endswith(f"/{item_id}/"))
    review = ExpertReview.objects.get(item_id=item_id, expert__username="expert1")
    assert review.flag_image_mismatch and review.decision == "reject"

    source_id = review.item.question.source_id
    page.context.clear_cookies()
    sign_in(page, live_server, "pi1")
    page.goto(live_server.url + reverse("pi-dashboard", args=[demo.slug]))
    # pi1 is also an expert of the demo: expert1's flags stay hidden from them until they
    # have reviewed the question themselves (issue 25: reviews secret by person).
    assert "Image does not match the question 1" not in page.inner_text("body")
    review_submit(
        expert=get_user_model().objects.get(username="pi1"),
        item=review.item,
        flags=["image_mismatch"],
        ratings={"image_alignment": 1},
        difficulty="hard",
        decision="reject",
    )
    page.reload()
    body = page.inner_text("body")
    assert "Image does not match the question 1" in body  # one question flagged so
    assert "Image does not match the question × 2" in body  # by two experts
    page.fill(f"input[aria-label='Reason for {source_id}']", "extremity radiograph")
    page.click(f"tr:has-text('{source_id}') button:has-text('Exclude')")
    page.wait_for_selector("text=1 excluded from analysis")

    client = page.context.request
    reviews = client.get(live_server.url + reverse("pi-reviews-csv", args=[demo.slug])).text()
    assert source_id in reviews
    questions = pd.read_csv(
        io.StringIO(
            client.get(
                live_server.url + reverse("analysis-table", args=[demo.slug, "responses", "csv"])
            ).text()
        ),
    )
    excluded = questions.loc[questions.question_id == source_id, "excluded"]
    assert len(excluded) and excluded.all()
