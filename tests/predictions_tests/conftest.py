"""Fixtures of the predictions tests: a second study on the study's dataset, and its PI."""

import pytest

from readerstudy.models import Role
from tests.factories import (
    MembershipFactory,
    QuestionFactory,
    ReaderStudyFactory,
    StudyQuestionFactory,
    UserFactory,
)


@pytest.fixture
def study_b(study):
    """Study B on the study's dataset: its first two questions and one of B's own
    ("b-only"), so predictions on the shared ones change what both studies show."""
    b = ReaderStudyFactory(dataset=study.dataset, slug="study-b", title="Study B")
    for position, item in enumerate(study.items.order_by("position")[:2]):
        StudyQuestionFactory(study=b, question=item.question, position=position)
    own = QuestionFactory(dataset=study.dataset, source_id="b-only")
    StudyQuestionFactory(study=b, question=own, position=2)
    return b


@pytest.fixture
def pi_b(study_b):
    user = UserFactory(username="pi_b")
    MembershipFactory(study=study_b, user=user, role=Role.PI)
    return user
