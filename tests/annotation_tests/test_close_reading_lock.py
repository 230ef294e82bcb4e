"""A PI closing reading and a reader's answer never interleave (PostgreSQL: SQLite runs one
writer at a time): an answer sent while the study's reading is being closed waits, then is
refused, so nothing is saved after reading closed (issue 36)."""

from __future__ import annotations

import threading

import pytest
from django.db import connection, transaction

from annotation.models import Answer
from annotation.services import ReadingClosed, answer_submit
from readerstudy.models import ReaderStudy, Role
from readerstudy.services.studies import study_reading_close
from tests.factories import MembershipFactory, UserFactory, build_study

pytestmark = pytest.mark.django_db(transaction=True)


def test_an_answer_waits_for_reading_being_closed_and_is_refused():
    if connection.vendor != "postgresql":
        pytest.skip("the advisory lock is PostgreSQL's; SQLite serialises writers")
    study = build_study(2)
    reader, pi = UserFactory(username="reader"), UserFactory(username="pi")
    MembershipFactory(study=study, user=reader, role=Role.READER)
    item = study.items.order_by("position").first()
    locked, release, outcome = threading.Event(), threading.Event(), {}

    def pi_closes_reading():
        try:
            with transaction.atomic():
                study_reading_close(study=ReaderStudy.objects.get(pk=study.pk), actor=pi)
                locked.set()  # closed, not committed yet: the lock is held until the commit
                release.wait(10)
        finally:
            connection.close()

    def reader_answers():
        try:
            answer_submit(reader=reader, item=type(item).objects.get(pk=item.pk), choice="A")
            outcome["saved"] = True
        except ReadingClosed as exc:
            outcome["refused"] = str(exc)
        finally:
            connection.close()

    closing = threading.Thread(target=pi_closes_reading)
    closing.start()
    assert locked.wait(10)
    answering = threading.Thread(target=reader_answers)
    answering.start()
    answering.join(1.0)
    assert answering.is_alive(), "the answer did not wait for reading being closed"
    release.set()
    closing.join(10)
    answering.join(10)
    assert "closed this study's reading" in outcome.get("refused", "")
    assert not Answer.objects.exists()
