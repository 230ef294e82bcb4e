"""Fixtures of the analysis tests: a study whose one mis-keyed question everybody answers with
the same wrong option (triage), a study answered by two readers and the database task backend
(downloads, off-request)."""

import pytest

from annotation.services import answer_submit
from readerstudy.models import Role
from readerstudy.predictions.services import predictions_import
from tests.factories import (
    MembershipFactory,
    UserFactory,
    build_study,
)


def readers(study, n=3):
    out = []
    for i in range(n):
        user = UserFactory(username=f"reader{i + 1}")
        MembershipFactory(study=study, user=user, role=Role.READER)
        out.append(user)
    return out


def models_answer(study, letters_by_source: dict[str, str], names=("m1", "m2", "m3")):
    rows = "\n".join(f"{q},{letter}" for q, letter in letters_by_source.items())
    for name in names:
        predictions_import(
            dataset=study.dataset,
            model_name=name,
            content=f"question_id,prediction\n{rows}\n".encode(),
            source="test",
            replace=True,
        )


@pytest.fixture
def mis_keyed(db):
    """Six questions; on the one keyed A (position 4), 3 readers and 3 models all chose B.

    Every other question is answered with its key by everyone, except one reader complaint
    ("does not fit") on position 2, so there is other evidence to outrank.
    """
    study = build_study(6)
    items = list(study.items.select_related("question").order_by("position"))
    target = items[4]
    assert target.question.correct == "A"
    people = readers(study)
    for item in items:
        for person in people:
            choice = "B" if item == target else item.question.correct
            alignment = "no" if item == items[2] and person == people[0] else "yes"
            answer_submit(reader=person, item=item, choice=choice, alignment=alignment)
    models_answer(
        study,
        {i.question.source_id: ("B" if i == target else i.question.correct) for i in items},
    )
    expert = UserFactory(username="expert")
    MembershipFactory(study=study, user=expert, role=Role.EXPERT)
    return study, target, expert


@pytest.fixture
def db_backend(settings):
    """Tasks queued in the database, run by `run_db_worker` (test_analysis_downloads)."""
    from tests.analysis_tests.test_analysis_downloads import DB_TASKS

    settings.TASKS = DB_TASKS


@pytest.fixture
def answered(study, reader, other_reader, pi):
    for n, item in enumerate(study.items.order_by("position")):
        answer_submit(reader=reader, item=item, choice=item.question.correct, time_ms=5000 + n)
        answer_submit(reader=other_reader, item=item, choice="A", time_ms=9000)
    return study
