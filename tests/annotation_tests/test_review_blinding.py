"""Expert blinding (issue 14, finding 2): an expert reads a colleague's review of a question only
once they have saved their own, on the page, through the API and in the queue's agreement."""

import pytest
from django.urls import reverse
from rest_framework.test import APIClient

from annotation.reviews import review_submit, reviews_visible_to
from readerstudy.models import Role
from tests.factories import MembershipFactory, UserFactory

pytestmark = pytest.mark.django_db
RATINGS = {
    "clinical_quality": 4,
    "explanation_clarity": 3,
    "factual_correctness": 5,
    "image_alignment": 2,
}


def review(expert, item, decision="accept", comment=""):
    return review_submit(
        expert=expert,
        item=item,
        flags=["hallucinated"] if decision == "reject" else [],
        ratings=RATINGS,
        difficulty="medium",
        decision=decision,
        comment=comment,
    )


def colleague(study, name="colleague"):
    user = UserFactory(username=name)
    MembershipFactory(study=study, user=user, role=Role.EXPERT)
    return user


@pytest.fixture
def reviewed(study, expert):
    """The colleague reviewed the first two questions; the expert only the second."""
    first, second = list(study.items.order_by("position"))[:2]
    other = colleague(study)
    review(other, first, "reject", comment="SECRET-ON-FIRST")
    review(other, second, "revise", comment="VISIBLE-ON-SECOND")
    review(expert, second, "accept")
    return first, second, other


def api_reviews(user, study, **params):
    client = APIClient()
    client.force_authenticate(user)
    response = client.get(f"/api/v1/studies/{study.slug}/reviews/", params)
    assert response.status_code == 200
    return response.json()["results"]


def test_api_hides_colleagues_reviews_of_questions_the_expert_has_not_reviewed(
    study, expert, reviewed
):
    _, second, _ = reviewed
    rows = api_reviews(expert, study)
    seen = {(r["item_id"], r["expert"]) for r in rows}
    assert seen == {(second.id, "expert"), (second.id, "colleague")}
    assert "SECRET-ON-FIRST" not in str(rows)
    # Filters cannot widen what the expert sees.
    only = api_reviews(expert, study, expert="colleague", decision="reject")
    assert only == []


def test_api_shows_the_colleague_once_the_expert_reviewed_the_question(study, expert, reviewed):
    first, _, _ = reviewed
    review(expert, first, "accept")
    comments = {r["comment"] for r in api_reviews(expert, study)}
    assert "SECRET-ON-FIRST" in comments


def test_a_pi_who_is_not_an_expert_reads_every_review(study, pi, reviewed):
    assert len(api_reviews(pi, study)) == 3


def test_a_pi_who_is_also_an_expert_is_blinded_like_an_expert(study, pi, reviewed):
    MembershipFactory(study=study, user=pi, role=Role.EXPERT)
    assert api_reviews(pi, study) == []


def test_the_page_and_the_api_follow_one_rule(client, study, expert, reviewed):
    first, second, _ = reviewed
    client.force_login(expert)
    page = client.get(reverse("expert-review", args=[study.slug, first.id])).content.decode()
    assert "SECRET-ON-FIRST" not in page and "colleague" not in page
    page = client.get(reverse("expert-review", args=[study.slug, second.id])).content.decode()
    others = page.split('class="other-reviews"')[1].split("</section>")[0]
    assert "VISIBLE-ON-SECOND" in others and "Revise" in others and "Reject" not in others
    visible = set(reviews_visible_to(study, expert).values_list("item_id", "expert__username"))
    assert visible == {(second.id, "expert"), (second.id, "colleague")}


def test_queue_agreement_hidden_from_an_expert_who_has_not_reviewed(client, study, expert):
    a, b = colleague(study, "a"), colleague(study, "b")
    for item in study.items.all():
        review(a, item, "accept")
        review(b, item, "reject")
    client.force_login(expert)
    html = client.get(reverse("expert-queue", args=[study.slug])).content.decode()
    assert "Pairwise agreement" not in html  # no table: it would tell their decisions
    assert "Over the 0 questions you have reviewed" in html


def test_queue_agreement_covers_only_questions_the_expert_reviewed(client, study, expert):
    a = colleague(study, "a")
    items = list(study.items.order_by("position"))
    for item in items:
        review(a, item, "reject")
    review(expert, items[0], "reject")
    client.force_login(expert)
    html = client.get(reverse("expert-queue", args=[study.slug])).content.decode()
    assert "Over the 1 question you have reviewed" in html
    decision_row = html.split("<td>Decision</td>")[1].split("</tr>")[0]
    assert '<td class="num">1</td>' in decision_row  # one question with two reviews, not 4
