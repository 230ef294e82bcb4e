"""An expert reviews two questions in the browser; a PI excludes one from the dashboard."""

import pytest
from django.urls import reverse

from annotation.models import ExpertReview
from readerstudy.models import Role
from tests.browser.helpers import sign_in, study_with_radiographs
from tests.factories import MembershipFactory, UserFactory

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
