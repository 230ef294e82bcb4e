"""Adjudication: the study's rule decides when a proposal becomes the key (a PI by default,
or N of M experts), every proposal, vote and decision is audited with who and when, and a
reversal is itself a new version. Permissions for each role, explicitly."""

from __future__ import annotations

import pytest

from annotation.correction_models import Correction, CorrectionVote
from annotation.corrections import (
    CorrectionRefused,
    adjudication_rule_set,
    correction_decide,
    correction_propose,
    correction_vote,
    correction_withdraw,
    reversal_propose,
)
from readerstudy.keys import question_key
from readerstudy.models import AuditEvent, Role
from readerstudy.question_versions import QuestionVersion
from readerstudy.vocabulary import AdjudicationRule, KeyPolicy, ProposalStatus
from tests.corrections_tests.conftest import propose, review
from tests.factories import MembershipFactory, UserFactory, build_study

pytestmark = pytest.mark.django_db


def versions(item) -> list[tuple[int, str, str]]:
    return list(
        QuestionVersion.objects.filter(question=item.question)
        .order_by("number")
        .values_list("number", "correct", "accepted")
    )


def experts_rule(study, pi, votes: int) -> None:
    adjudication_rule_set(pi=pi, study=study, rule=AdjudicationRule.EXPERTS, votes=votes)


def test_by_default_a_pi_decides_and_the_proposal_becomes_version_2(item, expert, pi):
    correction = propose(expert, item, correct="B", note="The report says B.")
    assert correction.status == ProposalStatus.OPEN and versions(item) == [(1, "A", "A")]
    assert correction.changes == {"correct": "B", "accepted": "B"}
    correction_decide(pi=pi, correction=correction, accept=True)
    correction.refresh_from_db()
    assert correction.status == ProposalStatus.ACCEPTED and correction.decided_by == pi
    assert versions(item) == [(1, "A", "A"), (2, "B", "B")]
    v2 = correction.version
    assert (v2.study, v2.decided_by, v2.rule, v2.error_type) == (
        item.study,
        pi,
        "a PI's decision",
        "wrong_key",
    )
    assert v2.note == "The report says B."
    assert question_key(item.question).key == "B"
    assert question_key(item.question, policy=KeyPolicy.ORIGINAL).key == "A"
    events = list(
        AuditEvent.objects.filter(action__startswith="correction.").order_by("created_at", "id")
    )
    assert [(e.action, e.actor) for e in events] == [
        ("correction.propose", expert),
        ("correction.accept", pi),
    ]
    assert all(e.created_at and e.detail["question"] == item.question.source_id for e in events)
    assert events[1].detail["version"] == 2


def test_a_pi_rejects_and_nothing_changes(item, expert, pi):
    correction = propose(expert, item, correct="B")
    correction_decide(pi=pi, correction=correction, accept=False, note="The key is right.")
    correction.refresh_from_db()
    assert correction.status == ProposalStatus.REJECTED and versions(item) == [(1, "A", "A")]
    assert AuditEvent.objects.filter(action="correction.reject", actor=pi).exists()
    with pytest.raises(CorrectionRefused, match="rejected already"):
        correction_decide(pi=pi, correction=correction, accept=True)


def test_with_n_of_m_a_proposal_becomes_the_key_only_at_the_nth_agreeing_expert(
    study, item, experts, pi
):
    experts_rule(study, pi, votes=3)
    first, second, third = experts
    correction = propose(first, item, correct="B")
    review(second, item)
    correction_vote(voter=second, correction=correction, agree=True)
    assert versions(item) == [(1, "A", "A")]  # 2 of 3 agreeing: not yet
    review(third, item)
    correction_vote(voter=third, correction=correction, agree=True)
    correction.refresh_from_db()
    assert correction.status == ProposalStatus.ACCEPTED
    assert versions(item) == [(1, "A", "A"), (2, "B", "B")]
    assert correction.version.decided_by == third
    assert correction.version.rule == "3 of the study's 3 experts agreed"
    votes = AuditEvent.objects.filter(action="correction.vote").order_by("id")
    assert [e.actor for e in votes] == [second, third]


def test_an_identical_independent_proposal_is_a_vote_for_the_open_one(study, item, experts, pi):
    experts_rule(study, pi, votes=2)
    first, second, _ = experts
    correction = propose(first, item, correct="B")
    again = propose(second, item, correct="B", note="Agree: B.")
    assert again.pk == correction.pk
    correction.refresh_from_db()
    assert correction.status == ProposalStatus.ACCEPTED and versions(item)[-1] == (2, "B", "B")
    assert Correction.objects.count() == 1


def test_disagreement_that_leaves_n_out_of_reach_rejects(study, item, experts, pi):
    experts_rule(study, pi, votes=3)
    first, second, _ = experts
    correction = propose(first, item, correct="B")
    review(second, item)
    correction_vote(voter=second, correction=correction, agree=False)
    correction.refresh_from_db()
    assert correction.status == ProposalStatus.REJECTED
    assert "can no longer be reached" in correction.decision_note
    assert versions(item) == [(1, "A", "A")]


def test_a_reversal_is_a_new_version_decided_by_the_same_rule(study, item, experts, pi):
    experts_rule(study, pi, votes=2)
    first, second, _ = experts
    accepted = propose(first, item, correct="B")
    propose(second, item, correct="B")
    accepted.refresh_from_db()
    reversal = reversal_propose(user=first, study=study, version=accepted.version, note="Oops")
    assert reversal.status == ProposalStatus.OPEN and versions(item)[-1] == (2, "B", "B")
    correction_vote(voter=second, correction=reversal, agree=True)
    reversal.refresh_from_db()
    assert versions(item) == [(1, "A", "A"), (2, "B", "B"), (3, "A", "A")]
    assert reversal.version.reverses == accepted.version
    assert question_key(item.question).key == "A"
    assert AuditEvent.objects.filter(action="correction.reversal", actor=first).exists()


def test_a_pi_reverses_at_once_under_the_pis_rule(study, item, expert, pi):
    correction = propose(expert, item, correct="B")
    correction_decide(pi=pi, correction=correction, accept=True)
    correction.refresh_from_db()
    reversal = reversal_propose(user=pi, study=study, version=correction.version)
    assert reversal.status == ProposalStatus.ACCEPTED and versions(item)[-1] == (3, "A", "A")
    with pytest.raises(CorrectionRefused, match="undone already"):
        reversal_propose(user=pi, study=study, version=correction.version)


def test_a_proposal_against_a_version_since_replaced_is_refused(item, expert, pi, experts):
    correction = propose(expert, item, correct="B")
    correction_decide(pi=pi, correction=correction, accept=True)
    review(experts[1], item)
    with pytest.raises(CorrectionRefused, match="corrected since this page was shown"):
        correction_propose(
            expert=experts[1], item=item, base=1, error_type="wrong_key", values={"correct": "C"}
        )


def test_proposals_say_what_changes_and_the_error_type(item, expert):
    review(expert, item)
    base = {"expert": expert, "item": item, "base": 1}
    with pytest.raises(CorrectionRefused, match="error type"):
        correction_propose(**base, error_type="", values={"correct": "B"})
    with pytest.raises(CorrectionRefused, match="proposes no change"):
        correction_propose(**base, error_type="wrong_key", values={"correct": "A"})
    with pytest.raises(CorrectionRefused, match="Option B cannot be empty"):
        correction_propose(**base, error_type="unclear_options", values={"option_b": " "})
    with pytest.raises(CorrectionRefused, match="letters A-D"):
        correction_propose(**base, error_type="several_valid", values={"accepted": ["E"]})
    several = correction_propose(
        **base, error_type="several_valid", values={"correct": "A", "accepted": ["C"]}
    )
    assert several.changes == {"accepted": "AC"}
    # A new proposal by the same expert replaces their open one (withdrawn, audited).
    replaced = correction_propose(**base, error_type="wrong_key", values={"correct": "D"})
    several.refresh_from_db()
    assert several.status == ProposalStatus.WITHDRAWN and replaced.is_open
    correction_withdraw(user=expert, correction=replaced)
    assert not Correction.objects.filter(status=ProposalStatus.OPEN).exists()


def test_who_may_propose_vote_decide_and_set_the_rule(study, item, expert, pi, reader, outsider):
    other_study = build_study(1)
    foreign_expert = UserFactory(username="foreign_expert")
    MembershipFactory(study=other_study, user=foreign_expert, role=Role.EXPERT)
    correction = propose(expert, item, correct="B")
    for person in (reader, outsider, foreign_expert, pi):
        with pytest.raises(CorrectionRefused, match="Only the study's experts propose"):
            correction_propose(
                expert=person, item=item, base=1, error_type="wrong_key", values={"correct": "C"}
            )
        with pytest.raises(CorrectionRefused, match="Only the study's experts vote"):
            correction_vote(voter=person, correction=correction, agree=True)
    for person in (reader, outsider, foreign_expert, expert):
        with pytest.raises(CorrectionRefused, match="Only the study's PIs decide"):
            correction_decide(pi=person, correction=correction, accept=True)
        with pytest.raises(CorrectionRefused, match="Only the study's PIs set"):
            adjudication_rule_set(pi=person, study=study, rule="experts", votes=1)
    with pytest.raises(CorrectionRefused, match="your proposal is your vote"):
        correction_vote(voter=expert, correction=correction, agree=False)
    with pytest.raises(CorrectionRefused, match="Only its proposer"):
        correction_withdraw(user=pi, correction=correction)
    assert versions(item) == [(1, "A", "A")] and CorrectionVote.objects.count() == 1


def test_an_expert_votes_only_once_they_reviewed_the_question(item, experts):
    correction = propose(experts[0], item, correct="B")
    with pytest.raises(CorrectionRefused, match="Review this question first"):
        correction_vote(voter=experts[1], correction=correction, agree=True)
    review(experts[1], item, decision="accept")
    correction_vote(voter=experts[1], correction=correction, agree=False)
    assert CorrectionVote.objects.get(voter=experts[1]).agree is False


def test_a_pi_who_is_also_an_expert_decides_once_they_reviewed(item, expert, pi):
    MembershipFactory(study=item.study, user=pi, role=Role.EXPERT)
    correction = propose(expert, item, correct="B")
    with pytest.raises(CorrectionRefused, match="review this question first"):
        correction_decide(pi=pi, correction=correction, accept=True)
    review(pi, item)
    correction_decide(pi=pi, correction=correction, accept=True)
    assert versions(item)[-1] == (2, "B", "B")


def test_under_the_experts_rule_a_pi_cannot_decide(study, item, experts, pi):
    experts_rule(study, pi, votes=2)
    correction = propose(experts[0], item, correct="B")
    with pytest.raises(CorrectionRefused, match="2 of the study's 3 experts agreeing"):
        correction_decide(pi=pi, correction=correction, accept=True)


def test_the_rule_is_checked_audited_and_fixed_while_a_proposal_is_open(study, item, experts, pi):
    with pytest.raises(CorrectionRefused, match="between 1 and the study's 3 experts"):
        experts_rule(study, pi, votes=4)
    experts_rule(study, pi, votes=2)
    event = AuditEvent.objects.get(action="adjudication.set")
    assert event.actor == pi and event.detail["after"] == {"rule": "experts", "votes": 2}
    propose(experts[0], item, correct="B")
    with pytest.raises(CorrectionRefused, match="1 proposal is open"):
        adjudication_rule_set(pi=pi, study=study, rule="pi", votes=1)
