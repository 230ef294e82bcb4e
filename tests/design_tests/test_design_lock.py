"""A PI's design change and a reader's first answer never interleave (PostgreSQL: SQLite runs
one writer at a time). Without the lock, the answer below was stored under the old design
while the new one was being written, and both committed."""

from __future__ import annotations

import threading

import pytest
from django.db import connection, transaction

from annotation.models import Answer
from annotation.services import WrongArm, answer_submit
from annotation.sessions import reading_of
from readerstudy.design.services import study_design_set
from readerstudy.locks import design_lock
from readerstudy.models import ReaderStudy
from tests.design_tests.conftest import add_model, add_readers, crossover
from tests.factories import build_study

pytestmark = pytest.mark.django_db(transaction=True)


def test_a_first_answer_waits_for_a_design_change_and_is_judged_by_the_new_design():
    if connection.vendor != "postgresql":
        pytest.skip("the advisory lock is PostgreSQL's; SQLite serialises writers")
    study = build_study(4)
    add_model(study)
    reader = add_readers(study, 1)[0]
    study_design_set(study=study, design=crossover(arms="aided"))
    page_layout = reading_of(study, reader).layout
    item = study.items.order_by("position").first()
    locked, release, outcome = threading.Event(), threading.Event(), {}

    def pi_changes_the_design():
        try:
            with transaction.atomic():
                design_lock(study.pk, shared=False)  # as study_design_set does, held open
                locked.set()
                release.wait(10)
                fresh = ReaderStudy.objects.get(pk=study.pk)
                study_design_set(study=fresh, design=crossover(arms="aided", shuffle_options=True))
        finally:
            connection.close()

    def reader_answers():
        try:
            answer_submit(
                reader=reader,
                item=type(item).objects.get(pk=item.pk),
                choice="A",
                layout=page_layout,
            )
            outcome["saved"] = True
        except WrongArm as exc:
            outcome["refused"] = str(exc)
        finally:
            connection.close()

    pi = threading.Thread(target=pi_changes_the_design)
    pi.start()
    assert locked.wait(10)
    answering = threading.Thread(target=reader_answers)
    answering.start()
    answering.join(1.0)
    assert answering.is_alive(), "the answer did not wait for the design change in flight"
    release.set()
    pi.join(10)
    answering.join(10)
    assert "design was changed since this page was shown" in outcome.get("refused", "")
    assert not Answer.objects.exists()
    assert ReaderStudy.objects.get(pk=study.pk).shuffle_options
