"""An expert reviews two questions in the browser; a PI excludes one from the dashboard."""

import pytest
from django.urls import reverse

from annotation.models import ExpertReview
from readerstudy.models import Role
from tests.browser.helpers import end_session, sign_in, study_with_radiographs
from tests.factories import PASSWORD, MembershipFactory, UserFactory

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def fill_review(page, decision: str, flag: str | None = None) -> None:
    if flag:
        page.check(f"input[name=flags][value={flag}]")
    for name in (
        "clinical_quality",
        "explanation_clarity",
        "factual_correctness",
        "image_alignment",
    ):
        page.check(f"input[name={name}][value='3']")
    page.check("input[name=difficulty][value=medium]")
    page.check(f"input[name=decision][value={decision}]")
    page.click("button:has-text('Save and next')")


def test_expert_reviews_two_questions_and_pi_excludes_one(page, live_server, artifacts):
    study = study_with_radiographs(3)
    expert = UserFactory(username="expert")
    boss = UserFactory(username="boss")
    MembershipFactory(study=study, user=expert, role=Role.EXPERT)
    MembershipFactory(study=study, user=boss, role=Role.PI)
    first, second = list(study.items.order_by("position"))[:2]

    sign_in(page, live_server, "expert")
    page.click("text=Review questions")
    page.click(f"text={first.question.text}")
    page.wait_for_selector("text=✓ correct")
    fill_review(page, "reject", flag="image_mismatch")
    page.wait_for_url(f"**{reverse('expert-review', args=[study.slug, second.id])}")
    page.screenshot(path=str(artifacts / "expert-review.png"))
    fill_review(page, "accept")
    page.wait_for_selector("text=Review of")
    assert ExpertReview.objects.filter(expert=expert).count() == 2
    assert ExpertReview.objects.get(item=first).flag_image_mismatch

    page.context.clear_cookies()
    sign_in(page, live_server, "boss")
    page.goto(live_server.url + reverse("pi-dashboard", args=[study.slug]))
    page.fill(f"input[aria-label='Reason for {first.question.source_id}']", "leg radiograph")
    page.click("button:has-text('Exclude')")
    page.wait_for_selector("text=1 excluded from analysis")
    page.screenshot(path=str(artifacts / "pi-dashboard.png"), full_page=True)
    first.refresh_from_db()
    assert first.excluded and first.excluded_reason == "leg radiograph"
    assert first.excluded_by == boss


def test_an_expert_review_survives_an_expired_session(page, live_server):
    """Signed out between choosing and saving: after signing in again the review is back in
    the form (not saved, said so), and Enter saves it."""
    study = study_with_radiographs(2)
    expert = UserFactory(username="expert")
    MembershipFactory(study=study, user=expert, role=Role.EXPERT)
    item = study.items.order_by("position").first()
    url = live_server.url + reverse("expert-review", args=[study.slug, item.id])

    sign_in(page, live_server, "expert")
    page.goto(url)
    page.check("input[name=flags][value=image_mismatch]")
    page.check("input[name=decision][value=reject]")
    page.fill("textarea[name=comment]", "a knee, not a chest")
    for name in ("clinical_quality", "explanation_clarity", "factual_correctness"):
        page.check(f"input[name={name}][value='2']")
    page.check("input[name=image_alignment][value='1']")
    page.check("input[name=difficulty][value=medium]")
    end_session(page)  # the session ends (timeout, sign-out in another tab)
    page.click("button:has-text('Save and next')")
    # Without the session's cookies the POST is refused (its CSRF token went with them).
    page.wait_for_selector("text=kept in this browser as a draft")
    assert not ExpertReview.objects.exists()
    page.click("text=Back to the previous page")
    page.wait_for_function("document.activeElement && document.activeElement.name === 'username'")
    page.keyboard.type("expert")
    page.keyboard.press("Tab")
    page.keyboard.type(PASSWORD)
    page.keyboard.press("Enter")
    page.wait_for_selector("text=Your unsaved review of this question was restored")
    assert page.is_checked("input[name=flags][value=image_mismatch]")
    assert page.is_checked("input[name=decision][value=reject]")
    assert page.input_value("textarea[name=comment]") == "a knee, not a chest"
    assert not ExpertReview.objects.exists()  # a draft is never a review

    assert page.is_checked("input[name=image_alignment][value='1']")
    page.keyboard.press("Enter")
    page.wait_for_url(lambda u: u != url)  # saved: on to the next question
    review = ExpertReview.objects.get(expert=expert, item=item)
    assert review.flag_image_mismatch and review.decision == "reject"
    assert review.comment == "a knee, not a chest"

    page.goto(url)  # saved: the page shows the server's review and no restored-draft notice
    page.wait_for_selector("text=Your review, saved")
    assert page.locator("text=Your unsaved review").count() == 0
