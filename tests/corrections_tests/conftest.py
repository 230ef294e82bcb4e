"""A study whose questions can be corrected: two more experts beside the personas', and the
review every expert saves before they see colleagues' proposals."""

from __future__ import annotations

import pytest

from annotation.corrections import correction_propose
from annotation.reviews import review_submit
from readerstudy.keys import KeyBook
from readerstudy.models import Role
from tests.factories import MembershipFactory, UserFactory

RATINGS = {
    "clinical_quality": 3,
    "explanation_clarity": 3,
    "factual_correctness": 3,
    "image_alignment": 3,
}


def review(expert, item, decision: str = "revise") -> None:
    review_submit(
        expert=expert,
        item=item,
        flags=[],
        ratings=RATINGS,
        difficulty="medium",
        decision=decision,
    )


def propose(expert, item, error_type: str = "wrong_key", note: str = "", **values):
    """`expert` reviews `item` and proposes `values` against its current version."""
    review(expert, item)
    current = KeyBook.of([item.question_id]).current(item.question_id).number
    return correction_propose(
        expert=expert, item=item, base=current, error_type=error_type, values=values, note=note
    )


@pytest.fixture
def experts(study, expert):
    """Three experts of the study: the persona and two more."""
    more = [UserFactory(username=f"expert{n}") for n in (2, 3)]
    for user in more:
        MembershipFactory(study=study, user=user, role=Role.EXPERT)
    return [expert, *more]


@pytest.fixture
def item(study):
    """The study's first question, keyed A (build_study keys A, B, C, D in turn)."""
    first = study.items.order_by("position").first()
    return first
