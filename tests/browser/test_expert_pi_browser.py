"""An expert reviews two questions in the browser; a PI excludes one from the dashboard."""

import pytest
from django.urls import reverse
from playwright.sync_api import expect

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
    # The page after the save also says "Review of": wait for the navigation the save makes,
    # not for text the page it leaves already shows.
    with page.expect_navigation():
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
    """Signed out between choosing and saving: "Save and next" asks to sign in on the page
    itself (no "This form has expired"), then sends the review as it was chosen."""
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
    page.wait_for_selector("#session-signin:not([hidden])")
    assert "This form has expired" not in page.inner_text("body")
    assert page.url == url and not ExpertReview.objects.exists()
    # The password field has the focus; the username is the page's user.
    expect(page.locator("#session-signin input[name=password]")).to_be_focused()
    assert page.input_value("#session-signin input[name=username]") == "expert"
    page.keyboard.type(PASSWORD)
    page.keyboard.press("Enter")
    page.wait_for_url(lambda u: u != url)  # sent once signed in: on to the next question
    review = ExpertReview.objects.get(expert=expert, item=item)
    assert review.flag_image_mismatch and review.decision == "reject"
    assert review.comment == "a knee, not a chest" and review.image_alignment == 1


def test_a_pi_form_is_sent_after_signing_in_again_in_place(page, live_server):
    """The PI's add-member form, sent after the session ended: sign-in on the dashboard (a
    wrong password is said there, nothing sent), then the member is added."""
    study = study_with_radiographs(2)
    boss = UserFactory(username="boss")
    UserFactory(username="newresident")
    MembershipFactory(study=study, user=boss, role=Role.PI)
    sign_in(page, live_server, "boss")
    page.goto(live_server.url + reverse("pi-dashboard", args=[study.slug]))
    page.fill("input[name=username]:visible", "newresident")
    page.fill("input[name=seniority]", "PGY-2")
    end_session(page)
    page.click("button:has-text('Add member')")
    page.wait_for_selector("#session-signin:not([hidden])")
    page.fill("#session-signin input[name=password]", "wrong password")
    page.click("#session-signin button:has-text('Sign in and send')")
    page.wait_for_selector("#session-signin .signin-error:not([hidden])")
    assert not study.memberships.filter(user__username="newresident").exists()
    page.fill("#session-signin input[name=password]", PASSWORD)
    page.click("#session-signin button:has-text('Sign in and send')")
    page.wait_for_selector("text=Saved newresident as reader (PGY-2).")
    added = study.memberships.get(user__username="newresident")
    assert added.role == Role.READER and added.seniority == "PGY-2"
