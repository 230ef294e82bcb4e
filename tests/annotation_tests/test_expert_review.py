"""Expert review: service rules, the queue order, the review page, agreement, permissions."""

import re

import pytest
from django.urls import reverse

from analysis.agreement import expert_agreement
from annotation.models import ExpertReview, ReviewFlag
from annotation.reviews import ReviewRejected, review_submit
from annotation.services import answer_submit
from readerstudy.models import Case, Question, Role
from readerstudy.question_versions import QuestionVersion
from tests.factories import MembershipFactory, UserFactory, build_study

pytestmark = pytest.mark.django_db
RATINGS = {
    "clinical_quality": 4,
    "explanation_clarity": 3,
    "factual_correctness": 5,
    "image_alignment": 2,
}
FORM = {
    "clinical_quality": "4",
    "explanation_clarity": "3",
    "factual_correctness": "5",
    "image_alignment": "2",
    "difficulty": "hard",
    "decision": "reject",
}


def review(expert, item, decision="accept", flags=()):
    return review_submit(
        expert=expert,
        item=item,
        flags=list(flags),
        ratings=RATINGS,
        difficulty="medium",
        decision=decision,
    )


def test_review_is_created_then_updated_not_duplicated(study, expert):
    item = study.items.first()
    review(expert, item, "accept")
    review(expert, item, "reject", flags=[ReviewFlag.MULTIPLE_VALID])
    saved = ExpertReview.objects.get()
    assert saved.decision == "reject" and saved.flags == ["multiple_valid"]


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"flags": ["other"]}, "Describe"),
        ({"flags": ["made_up"]}, "unknown flag"),
        ({"ratings": {**RATINGS, "clinical_quality": 6}}, "1 to 5"),
        ({"ratings": {"clinical_quality": 3}}, "1 to 5"),
        ({"decision": "maybe"}, "decision"),
    ],
)
def test_invalid_reviews_are_rejected(study, expert, kwargs, message):
    args = {"flags": [], "ratings": RATINGS, "difficulty": "easy", "decision": "accept", **kwargs}
    with pytest.raises(ReviewRejected, match=message):
        review_submit(expert=expert, item=study.items.first(), **args)
    assert not ExpertReview.objects.exists()


def test_expert_page_shows_truth_report_and_anonymous_reader_feedback(
    client, study, reader, expert
):
    item = study.items.first()
    Question.objects.filter(pk=item.question_id).update(explanation="EXPLAINED-HERE")
    QuestionVersion.objects.filter(question_id=item.question_id).update(
        explanation="EXPLAINED-HERE"
    )
    Case.objects.filter(pk=item.question.case_id).update(
        findings="FINDINGS-HERE", impression="IMPRESSION-HERE"
    )
    answer_submit(reader=reader, item=item, choice="A", alignment="no", comment="wrong film")
    client.force_login(expert)
    html = client.get(reverse("expert-review", args=[study.slug, item.id])).content.decode()
    correct = item.question.correct
    assert f"{correct}. " in html and "✓ correct" in html
    for text in ("EXPLAINED-HERE", "FINDINGS-HERE", "IMPRESSION-HERE", "wrong film"):
        assert text in html
    # The section itself (it ends with its <details>): no reader is named in it. (Bounded by
    # "Your review" it ran to the page's end, where every signed-in page loads reader-store.js.)
    said = html.split("What readers said")[1].split("</details>")[0]
    assert "reader" not in said.replace("readers", "")


def test_submit_review_through_the_page_goes_to_next_unreviewed(client, study, expert):
    items = list(study.items.order_by("position"))
    client.force_login(expert)
    response = client.post(
        reverse("expert-review", args=[study.slug, items[0].id]),
        {**FORM, "flags": ["image_mismatch"], "comment": "leg film"},
    )
    assert response.status_code == 302
    assert response.url == reverse("expert-next", args=[study.slug])
    assert client.get(response.url).url == reverse("expert-review", args=[study.slug, items[1].id])
    saved = ExpertReview.objects.get()
    assert saved.flag_image_mismatch and saved.decision == "reject" and saved.comment == "leg film"
    response = client.post(reverse("expert-review", args=[study.slug, items[1].id]), {})
    assert response.status_code == 200 and ExpertReview.objects.count() == 1


def test_other_experts_reviews_hidden_until_own_review(client, study, expert):
    item = study.items.first()
    colleague = UserFactory(username="colleague")
    MembershipFactory(study=study, user=colleague, role=Role.EXPERT)
    review(colleague, item, "reject")
    client.force_login(expert)
    url = reverse("expert-review", args=[study.slug, item.id])
    assert "colleague" not in client.get(url).content.decode()
    review(expert, item, "accept")
    assert "colleague" in client.get(url).content.decode()


def test_agreement_between_experts(study, expert):
    colleague = UserFactory(username="colleague")
    MembershipFactory(study=study, user=colleague, role=Role.EXPERT)
    items = list(study.items.order_by("position"))
    for item, (a, b) in zip(
        items,
        [("accept", "accept"), ("reject", "reject"), ("accept", "reject"), ("revise", "revise")],
        strict=True,
    ):
        review(expert, item, a)
        review(colleague, item, b)
    decision = expert_agreement(study, expert)[0]
    assert decision["what"] == "Decision" and decision["questions"] == 4
    assert decision["agreement"] == pytest.approx(0.75)
    assert -1 <= decision["fleiss_kappa"] <= 1


@pytest.mark.parametrize("persona", ["reader", "outsider"])
def test_readers_and_outsiders_never_reach_review_pages(client, study, request, persona):
    user = request.getfixturevalue(persona)
    client.force_login(user)
    item = study.items.first()
    assert client.get(reverse("expert-queue", args=[study.slug])).status_code == 404
    assert client.get(reverse("expert-review", args=[study.slug, item.id])).status_code == 404
    assert (
        client.post(reverse("expert-review", args=[study.slug, item.id]), FORM).status_code == 404
    )
    assert not ExpertReview.objects.exists()


def test_expert_of_one_study_sees_nothing_of_another(client, study, expert):
    other = build_study(2)
    client.force_login(expert)
    assert client.get(reverse("expert-queue", args=[other.slug])).status_code == 404
    item = other.items.first()
    assert client.get(reverse("expert-review", args=[other.slug, item.id])).status_code == 404
    # An item of another study through this study's URL is not found either.
    assert client.get(reverse("expert-review", args=[study.slug, item.id])).status_code == 404


def test_pi_can_read_reviews_but_not_write_them(client, study, pi, expert):
    item = study.items.first()
    review(expert, item, "reject")
    client.force_login(pi)
    html = client.get(reverse("expert-review", args=[study.slug, item.id])).content.decode()
    assert "expert" in html and "Reject" in html and "Your review" not in html
    assert (
        client.post(reverse("expert-review", args=[study.slug, item.id]), FORM).status_code == 404
    )


NOT_RATED = dict.fromkeys(RATINGS)


def test_a_flagged_or_rejected_review_may_leave_ratings_unset(study, expert):
    item = study.items.first()
    review_submit(
        expert=expert,
        item=item,
        flags=[ReviewFlag.IMAGE_MISMATCH],
        ratings={**NOT_RATED, "image_alignment": 1},
        difficulty="medium",
        decision="reject",
    )
    saved = ExpertReview.objects.get()
    assert saved.image_alignment == 1
    assert saved.clinical_quality is None and saved.factual_correctness is None


def test_a_question_judged_fine_needs_all_four_ratings(study, expert):
    with pytest.raises(ReviewRejected, match="flag a problem or reject"):
        review_submit(
            expert=expert,
            item=study.items.first(),
            flags=[],
            ratings={**RATINGS, "clinical_quality": None},
            difficulty="medium",
            decision="accept",
        )
    assert not ExpertReview.objects.exists()


def test_review_page_keeps_not_rated_and_shows_it_to_other_experts(client, study, expert):
    item = study.items.first()
    client.force_login(expert)
    url = reverse("expert-review", args=[study.slug, item.id])
    form = {**FORM, "flags": ["image_mismatch"], "clinical_quality": "", "explanation_clarity": ""}
    client.post(url, form)
    saved = ExpertReview.objects.get(expert=expert)
    assert saved.clinical_quality is None and saved.explanation_clarity is None
    assert saved.factual_correctness == 5
    page = client.get(url).content.decode()
    # The saved "not rated" is shown checked again, not silently turned into a number.
    assert re.search(r'name="clinical_quality" value="none" id="[^"]+" checked', page)
    assert not re.search(r'name="clinical_quality" value="\d" id="[^"]+" checked', page)
    colleague = UserFactory(username="colleague")
    MembershipFactory(study=study, user=colleague, role=Role.EXPERT)
    review_submit(
        expert=colleague, item=item, flags=[], ratings=RATINGS, difficulty="easy", decision="accept"
    )
    client.force_login(colleague)
    assert "–/–/5/2" in client.get(url).content.decode()


def test_a_new_review_form_has_no_rating_checked(client, study, expert):
    """Nothing is rated until the expert rates it (digits and `d` fill the unset ones)."""
    client.force_login(expert)
    page = client.get(reverse("expert-review", args=[study.slug, study.items.first().id]))
    html = page.content.decode()
    for name in RATINGS:
        assert not re.search(rf'name="{name}" value="[^"]*" id="[^"]+" checked', html)
