"""The PI dashboard counts reviews, not reviews x answers (issue 15: "×3, Reject 3")."""

import re

import pytest
from django.urls import reverse

from annotation.dashboard import flagged_items
from annotation.reviews import review_submit
from annotation.services import answer_submit
from readerstudy.models import Role
from tests.factories import MembershipFactory, UserFactory

pytestmark = pytest.mark.django_db
RATINGS = {
    "clinical_quality": 2,
    "explanation_clarity": 3,
    "factual_correctness": 4,
    "image_alignment": 1,
}


def _readers_answer(study, item, n: int) -> None:
    for i in range(n):
        reader = UserFactory(username=f"r{i}")
        MembershipFactory(study=study, user=reader, role=Role.READER)
        answer_submit(reader=reader, item=item, choice="A", alignment="no")


def _expert_reviews(study, item, name: str, flags: list[str], decision: str) -> None:
    expert = UserFactory(username=name)
    MembershipFactory(study=study, user=expert, role=Role.EXPERT)
    review_submit(
        expert=expert,
        item=item,
        flags=flags,
        ratings=RATINGS,
        difficulty="hard",
        decision=decision,
    )


def test_one_review_with_one_flag_on_a_question_three_readers_answered_shows_1(client, study, pi):
    item = study.items.first()
    _readers_answer(study, item, 3)
    _expert_reviews(study, item, "e1", ["image_mismatch"], "reject")
    rows, totals = flagged_items(study, viewer=pi)
    assert rows[0]["flags"] == {"Image does not match the question": 1}
    assert rows[0]["rejects"] == 1 and rows[0]["reviews"] == 1 and rows[0]["misfit"] == 3
    assert totals["Image does not match the question"] == 1
    client.force_login(pi)
    html = client.get(reverse("pi-dashboard", args=[study.slug])).content.decode()
    assert "Image does not match the question × 1<" in html
    row = re.search(r"<tr class=\"\">.*?</tr>", html, re.S).group(0)
    assert re.findall(r'<td class="num">(\d+)</td>', row) == ["1", "3"]  # rejects, "no" fits
    audit = html.split('class="audit"')[1]
    assert "flags: Image does not match the question" in audit and "image_mismatch" not in audit


def test_two_reviews_and_several_answers_count_two(study, pi):
    item = study.items.first()
    _readers_answer(study, item, 4)
    _expert_reviews(study, item, "e1", ["image_mismatch", "hallucinated"], "reject")
    _expert_reviews(study, item, "e2", ["image_mismatch"], "revise")
    rows, _ = flagged_items(study, viewer=pi)
    assert rows[0]["flags"] == {
        "Finding not supported by the report": 1,
        "Image does not match the question": 2,
    }
    assert rows[0]["rejects"] == 1 and rows[0]["reviews"] == 2 and rows[0]["misfit"] == 4
