"""Reviews stay secret until you have reviewed, for every role a person holds (issue 25,
finding 2): a PI who is also an expert of the study read every colleague's review in the
dashboard's reviews.csv, its flag and reject counts and its audit list before reviewing."""

import pytest
from django.urls import reverse

from annotation.reviews import review_submit
from readerstudy.models import Role
from tests.factories import MembershipFactory, UserFactory

pytestmark = pytest.mark.django_db
RATINGS = {
    "clinical_quality": 4,
    "explanation_clarity": 3,
    "factual_correctness": 5,
    "image_alignment": 2,
}


def review(expert, item, decision, comment):
    return review_submit(
        expert=expert,
        item=item,
        flags=["hallucinated"] if decision == "reject" else [],
        ratings=RATINGS,
        difficulty="medium",
        decision=decision,
        comment=comment,
    )


@pytest.fixture
def setting(study, pi):
    """pi is also an expert; a colleague rejected the first question with a secret comment."""
    MembershipFactory(study=study, user=pi, role=Role.EXPERT)
    colleague = UserFactory(username="colleague")
    MembershipFactory(study=study, user=colleague, role=Role.EXPERT)
    first = study.items.order_by("position").first()
    review(colleague, first, "reject", "SECRET-COLLEAGUE-COMMENT")
    return first, colleague


def dashboard(client, study):
    return client.get(reverse("pi-dashboard", args=[study.slug]))


def reviews_csv(client, study) -> str:
    response = client.get(reverse("pi-reviews-csv", args=[study.slug]))
    assert response.status_code == 200
    return (
        b"".join(response.streaming_content).decode()
        if response.streaming
        else (response.content.decode())
    )


def test_a_pi_who_is_an_expert_sees_no_colleague_review_before_reviewing(
    client, study, pi, setting
):
    client.force_login(pi)
    assert "SECRET-COLLEAGUE-COMMENT" not in reviews_csv(client, study)
    assert "colleague" not in reviews_csv(client, study)
    page = dashboard(client, study)
    assert page.context["flagged"] == []
    assert not any(page.context["flag_totals"].values())
    assert not [e for e in page.context["audit"] if e.action.startswith("review.")]
    assert "decision: reject" not in page.content.decode()


def test_after_reviewing_the_pi_expert_sees_the_colleagues_review(client, study, pi, setting):
    first, _ = setting
    review(pi, first, "accept", "mine")
    client.force_login(pi)
    assert "SECRET-COLLEAGUE-COMMENT" in reviews_csv(client, study)
    page = dashboard(client, study)
    assert [row["rejects"] for row in page.context["flagged"]] == [1]
    assert {e.actor.username for e in page.context["audit"] if e.action.startswith("review.")} == {
        "colleague",
        "pi",
    }


def test_a_pi_who_is_not_an_expert_sees_every_review(client, study, setting):
    only_pi = UserFactory(username="only_pi")
    MembershipFactory(study=study, user=only_pi, role=Role.PI)
    client.force_login(only_pi)
    assert "SECRET-COLLEAGUE-COMMENT" in reviews_csv(client, study)
    assert [row["rejects"] for row in dashboard(client, study).context["flagged"]] == [1]


def test_the_dashboard_says_why_a_pi_expert_sees_fewer_reviews(client, study, pi, setting):
    """Counts of 0 while a colleague rejected a question would read as "nothing flagged"."""
    first, _ = setting
    client.force_login(pi)
    total = study.items.count()
    text = " ".join(dashboard(client, study).content.decode().split())
    assert f"only for the 0 of {total} questions you have reviewed yourself" in text
    review(pi, first, "accept", "mine")
    text = " ".join(dashboard(client, study).content.decode().split())
    assert f"only for the 1 of {total} questions you have reviewed yourself" in text
    only_pi = UserFactory(username="only_pi")
    MembershipFactory(study=study, user=only_pi, role=Role.PI)
    client.force_login(only_pi)
    assert "data-reviews-hidden" not in dashboard(client, study).content.decode()
