"""Two experts casting the N-th agreeing vote at the same moment make exactly one version
(PostgreSQL: SQLite runs one writer at a time). Both votes lock the question's row, then the
proposal's: the second finds the proposal accepted and is told so."""

from __future__ import annotations

import threading

import pytest
from django.db import connection

from annotation.correction_models import Correction
from annotation.corrections import CorrectionRefused, adjudication_rule_set, correction_vote
from readerstudy.question_versions import QuestionVersion
from readerstudy.vocabulary import AdjudicationRule, ProposalStatus
from tests.corrections_tests.conftest import propose, review

pytestmark = pytest.mark.django_db(transaction=True)


def test_two_nth_votes_at_once_make_one_version(study, item, experts, pi):
    if connection.vendor != "postgresql":
        pytest.skip("needs concurrent writers: PostgreSQL")
    adjudication_rule_set(pi=pi, study=study, rule=AdjudicationRule.EXPERTS, votes=2)
    first, second, third = experts
    correction = propose(first, item, correct="B")
    review(second, item)
    review(third, item)
    start = threading.Barrier(2)
    outcomes: dict[str, str] = {}

    def vote(voter):
        try:
            start.wait(5)
            correction_vote(
                voter=voter, correction=Correction.objects.get(pk=correction.pk), agree=True
            )
            outcomes[voter.username] = "counted"
        except CorrectionRefused as exc:
            outcomes[voter.username] = str(exc)
        finally:
            connection.close()

    threads = [threading.Thread(target=vote, args=(voter,)) for voter in (second, third)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(20)
    assert QuestionVersion.objects.filter(question=item.question).count() == 2
    correction.refresh_from_db()
    assert correction.status == ProposalStatus.ACCEPTED and correction.version.number == 2
    # One vote made the version; the other found the proposal decided, and was told so.
    assert sorted(outcomes.values()) == [
        "This proposal is accepted already (version 2).",
        "counted",
    ]
