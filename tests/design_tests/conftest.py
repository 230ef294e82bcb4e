"""Designed studies: a study with an imported AI model, readers, and a helper to set designs."""

from __future__ import annotations

import pytest

from readerstudy.design.rules import Design
from readerstudy.design.services import study_design_set
from readerstudy.models import Role
from readerstudy.predictions.models import AIModel, Prediction
from readerstudy.services.studies import membership_add
from tests.factories import UserFactory, build_study


def add_model(study, name="MedGemma", *, skip=(), failed=(), words=True):
    """An imported model answering every question but `skip` (positions), failing `failed`."""
    model = AIModel.objects.create(dataset=study.dataset, name=name)
    for item in study.items.select_related("question"):
        if item.position in skip:
            continue
        letter = "" if item.position in failed else item.question.correct
        raw = f"I think the answer is ({letter})." if words and letter else letter or "unclear"
        Prediction.objects.create(
            model=model, question=item.question, letter=letter, raw_response=raw
        )
    return model


def add_readers(study, n, prefix="r"):
    users = []
    for i in range(n):
        user = UserFactory(username=f"{prefix}{i}")
        membership_add(study=study, user=user, role=Role.READER)
        users.append(user)
    return users


def crossover(**kw) -> Design:
    values = {"arms": "unaided,aided", "aid_model": "MedGemma", "aid_mode": "concurrent"}
    values.update(kw)
    return Design(**values)


@pytest.fixture
def design_study(db):
    study = build_study(8)
    add_model(study)
    return study


@pytest.fixture
def set_design():
    def apply(study, design):
        return study_design_set(study=study, design=design)

    return apply
