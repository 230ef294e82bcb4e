"""Proposed corrections, the experts' votes and the decisions that make them keys.

An expert proposes a correction of a question with "Revise" in the review form (or the API):
a new key, further accepted answers, corrected words or explanation, and the error type. The
study's rule (ReaderStudy.adjudication) decides when it becomes the question's next version:
a PI's decision (the default), or `adjudication_votes` of the study's experts agreeing (the
proposer counts; a proposal identical to an open one is a vote for it). A decision can be
reversed, itself a proposal decided by the same rule, which makes another version. Every
proposal, vote and decision is an AuditEvent with who and when.

Concurrency: every write locks the question's row first, then the proposal's, so two votes
that would each be the N-th at once make exactly one version (the second finds the proposal
decided), and version numbers follow one another.

Secrecy: a proposal is part of its expert's review, so it follows the review's rule
(annotation.reviews.may_see_others): an expert sees a colleague's proposal on a question once
they have reviewed it themselves; a PI who is not an expert sees every proposal.
"""

from __future__ import annotations

from django.db import transaction
from django.utils import timezone

from annotation.correction_models import Correction, CorrectionVote
from annotation.reviews import may_see_others, review_submit
from readerstudy.models import AuditEvent, Membership, Question, ReaderStudy, Role, StudyQuestion
from readerstudy.platform.storable import unstorable_text
from readerstudy.question_versions import QuestionVersion
from readerstudy.services.versions import (
    VersionError,
    checked_content,
    ensure_first_version,
    normalised_accepted,
    reversal_changes,
    version_create,
)
from readerstudy.signals import data_changed
from readerstudy.vocabulary import (
    LETTERS,
    VERSION_FIELD_LABELS,
    VERSION_FIELDS,
    AdjudicationRule,
    ErrorType,
    ProposalKind,
    ProposalStatus,
)

MAX_WORDS = 10_000  # characters of a corrected stem, option or explanation


class CorrectionRefused(ValueError):
    """Nothing was written; the message says why in words."""


def _roles(study: ReaderStudy, user) -> set[str]:
    return set(Membership.objects.filter(study=study, user=user).values_list("role", flat=True))


def study_experts(study: ReaderStudy) -> set[int]:
    return set(
        Membership.objects.filter(study=study, role=Role.EXPERT).values_list("user_id", flat=True)
    )


def rule_words(study: ReaderStudy) -> str:
    """The study's rule in words, as every page, the API and a version's record say it."""
    if study.adjudication == AdjudicationRule.EXPERTS:
        experts = len(study_experts(study))
        return f"{study.adjudication_votes} of the study's {experts} experts agreeing"
    return "a PI's decision"


def may_see_proposal(user, correction: Correction) -> bool:
    """The review rule: a colleague's proposal once this expert reviewed the question."""
    seen = may_see_others(correction.item.study, user)
    return seen is True or correction.proposer_id == user.pk or correction.item_id in seen


def proposed_changes(current: QuestionVersion, values: dict[str, str | list[str]]) -> dict:
    """What `values` (any of VERSION_FIELDS; `accepted` a list or string of letters) change
    in `current`, normalised as stored: the fields that differ, or CorrectionRefused."""
    unknown = set(values) - set(VERSION_FIELDS)
    if unknown:
        raise CorrectionRefused(f"Not a field of a question: {', '.join(sorted(unknown))}.")
    content = current.content()
    for name, value in values.items():
        if name == "accepted":
            continue
        text = str(value).strip()
        if len(text) > MAX_WORDS:
            raise CorrectionRefused(
                f"{VERSION_FIELD_LABELS[name]} is too long ({MAX_WORDS:,} characters at most)."
            )
        if why := unstorable_text(text):
            raise CorrectionRefused(f"{VERSION_FIELD_LABELS[name]} {why}.")
        content[name] = text.upper() if name == "correct" else text
    if "accepted" in values:
        letters = [str(letter).strip().upper() for letter in values["accepted"]]
        if any(letter and letter not in LETTERS for letter in letters):
            raise CorrectionRefused("Accepted answers are letters A-D.")
        content["accepted"] = normalised_accepted(content["correct"], letters)
    elif content["correct"] != current.correct:  # a new key, nothing said of others: only it
        content["accepted"] = content["correct"]
    try:
        checked_content(content)
    except VersionError as exc:
        raise CorrectionRefused(str(exc)) from exc
    return {
        name: content[name] for name in VERSION_FIELDS if content[name] != getattr(current, name)
    }


def _audit(study, actor, action: str, correction: Correction, **detail) -> None:
    AuditEvent.objects.create(
        study=study,
        actor=actor,
        action=action,
        detail={
            "question": correction.item.question.source_id,
            "correction": correction.pk,
            "kind": correction.kind,
            **detail,
        },
    )


def _locked(correction: Correction) -> Correction:
    """The proposal, its question's row locked first (the one lock order of every write)."""
    Question.objects.select_for_update().get(pk=correction.item.question_id)
    return (
        Correction.objects.select_for_update()
        .select_related("item__study", "item__question", "base")
        .get(pk=correction.pk)
    )


def _current(question: Question) -> QuestionVersion:
    ensure_first_version(question)
    return QuestionVersion.objects.filter(question=question).order_by("-number").first()


@transaction.atomic
def correction_propose(
    *,
    expert,
    item: StudyQuestion,
    base: int,
    error_type: str,
    values: dict,
    note: str = "",
) -> Correction:
    """`expert` proposes that `item`'s question, as shown in version `base`, change to
    `values` (any of VERSION_FIELDS, unchanged ones allowed). One open proposal per expert
    and question: a new one replaces theirs; one identical to a colleague's open proposal is
    an agreeing vote for it."""
    study = item.study
    if Role.EXPERT not in _roles(study, expert):
        raise CorrectionRefused("Only the study's experts propose corrections.")
    if error_type not in ErrorType.values:
        raise CorrectionRefused("Choose the error type of the correction.")
    if len(note) > MAX_WORDS or unstorable_text(note):
        raise CorrectionRefused("The note is too long or holds text that cannot be stored.")
    Question.objects.select_for_update().get(pk=item.question_id)
    current = _current(item.question)
    if base != current.number:
        raise CorrectionRefused(
            f"The question was corrected since this page was shown (it is at version "
            f"{current.number} now): reload the page to see it, then propose again."
        )
    changes = proposed_changes(current, values)
    if not changes:
        raise CorrectionRefused(
            "This proposes no change: give a new key, accepted answers or corrected words "
            "(or review the question without a correction)."
        )
    open_here = Correction.objects.select_for_update().filter(
        item=item, status=ProposalStatus.OPEN, kind=ProposalKind.CORRECTION, base=current
    )
    same = next((c for c in open_here if c.changes == changes and c.proposer_id != expert.pk), None)
    if same is not None:  # independently the same correction: a vote for it
        _vote(same, expert, agree=True, note=note or "proposed the same correction")
        return same
    mine = next((c for c in open_here if c.proposer_id == expert.pk), None)
    if mine is not None:
        if mine.changes == changes and mine.error_type == error_type and mine.note == note.strip():
            return mine
        _close(mine, expert, ProposalStatus.WITHDRAWN, "replaced by a new proposal")
    correction = Correction.objects.create(
        item=item,
        base=current,
        proposer=expert,
        error_type=error_type,
        changes=changes,
        note=note.strip(),
    )
    CorrectionVote.objects.create(correction=correction, voter=expert, agree=True)
    _audit(
        study,
        expert,
        "correction.propose",
        correction,
        error_type=error_type,
        changes=changes,
        base=current.number,
    )
    _apply_rule(correction, expert)
    return correction


@transaction.atomic
def review_with_correction_submit(*, expert, item: StudyQuestion, review: dict, correction=None):
    """The review form's one write: the review, and with "Revise" the proposed correction
    (`correction`: base, error_type, values, note), both or neither."""
    saved = review_submit(expert=expert, item=item, **review)
    proposal = correction_propose(expert=expert, item=item, **correction) if correction else None
    return saved, proposal


def _vote(correction: Correction, voter, *, agree: bool, note: str = "") -> None:
    CorrectionVote.objects.update_or_create(
        correction=correction, voter=voter, defaults={"agree": agree, "note": note.strip()}
    )
    _audit(correction.item.study, voter, "correction.vote", correction, agree=agree)
    _apply_rule(correction, voter)


@transaction.atomic
def correction_vote(*, voter, correction: Correction, agree: bool, note: str = "") -> Correction:
    """An expert agrees with a colleague's proposal, or not; under the experts' rule the
    N-th agreeing vote makes the version, and disagreement that leaves N out of reach closes
    it. A vote can change while the proposal is open."""
    correction = _locked(correction)
    study = correction.item.study
    if Role.EXPERT not in _roles(study, voter):
        raise CorrectionRefused("Only the study's experts vote on proposals.")
    if not may_see_proposal(voter, correction):
        raise CorrectionRefused("Review this question first: then you see its proposals.")
    if not correction.is_open:
        raise CorrectionRefused(
            f"This proposal is {correction.get_status_display().lower()} already"
            + (f" (version {correction.version.number})." if correction.version_id else ".")
        )
    if correction.proposer_id == voter.pk:
        raise CorrectionRefused("You proposed it: your proposal is your vote.")
    _vote(correction, voter, agree=agree, note=note)
    return correction


@transaction.atomic
def correction_decide(*, pi, correction: Correction, accept: bool, note: str = "") -> Correction:
    """A PI accepts (the next version of the question) or rejects a proposal, under the
    PI's rule."""
    correction = _locked(correction)
    study = correction.item.study
    if Role.PI not in _roles(study, pi):
        raise CorrectionRefused("Only the study's PIs decide proposals.")
    if study.adjudication != AdjudicationRule.PI:
        raise CorrectionRefused(
            f"This study's rule is {rule_words(study)}: the experts' votes decide."
        )
    if not may_see_proposal(pi, correction):
        raise CorrectionRefused(
            "As an expert of this study, review this question first: then you see its "
            "proposals and can decide them."
        )
    if not correction.is_open:
        raise CorrectionRefused(
            f"This proposal is {correction.get_status_display().lower()} already."
        )
    if accept:
        _accept(correction, pi, rule_words(study), note)
    else:
        _close(correction, pi, ProposalStatus.REJECTED, note)
    return correction


@transaction.atomic
def correction_withdraw(*, user, correction: Correction) -> Correction:
    correction = _locked(correction)
    if correction.proposer_id != user.pk:
        raise CorrectionRefused("Only its proposer withdraws a proposal.")
    if not correction.is_open:
        raise CorrectionRefused("This proposal is decided already.")
    _close(correction, user, ProposalStatus.WITHDRAWN, "")
    return correction


@transaction.atomic
def reversal_propose(*, user, study: ReaderStudy, version: QuestionVersion, note: str = ""):
    """Propose to reverse the decision that made `version` (one of this study's): the next
    version undoes what it changed. A PI under the PI's rule decides it at once."""
    roles = _roles(study, user)
    if not roles & {Role.PI, Role.EXPERT}:
        raise CorrectionRefused("Only the study's PIs and experts reverse decisions.")
    if version.study_id != study.pk:
        raise CorrectionRefused(
            "Only a decision made in this study can be reversed here; propose a correction instead."
        )
    item = StudyQuestion.objects.filter(study=study, question_id=version.question_id).first()
    if item is None:
        raise CorrectionRefused("This study no longer holds the question.")
    Question.objects.select_for_update().get(pk=version.question_id)
    try:
        changes = reversal_changes(version)
    except VersionError as exc:
        raise CorrectionRefused(str(exc)) from exc
    if not changes:
        raise CorrectionRefused(f"Version {version.number}'s changes are undone already.")
    if Correction.objects.filter(reverses=version, status=ProposalStatus.OPEN, item=item).exists():
        raise CorrectionRefused(f"A reversal of version {version.number} is open already.")
    correction = Correction.objects.create(
        item=item,
        base=_current(item.question),
        kind=ProposalKind.REVERSAL,
        reverses=version,
        proposer=user,
        error_type=version.error_type,
        changes=changes,
        note=note.strip(),
    )
    if Role.EXPERT in roles:
        CorrectionVote.objects.create(correction=correction, voter=user, agree=True)
    _audit(study, user, "correction.reversal", correction, reverses=version.number, changes=changes)
    if study.adjudication == AdjudicationRule.PI and Role.PI in roles:
        _accept(correction, user, rule_words(study), note)
    else:
        _apply_rule(correction, user)
    return correction


def _apply_rule(correction: Correction, actor) -> None:
    """Under the experts' rule: accept at the N-th agreeing expert; reject once the experts
    who disagree leave N out of reach."""
    study = correction.item.study
    if study.adjudication != AdjudicationRule.EXPERTS or not correction.is_open:
        return
    experts = study_experts(study)
    votes = list(CorrectionVote.objects.filter(correction=correction, voter_id__in=experts))
    agree = sum(v.agree for v in votes)
    disagree = len(votes) - agree
    needed = study.adjudication_votes
    if agree >= needed:
        _accept(correction, actor, f"{agree} of the study's {len(experts)} experts agreed")
    elif len(experts) - disagree < needed:
        _close(
            correction,
            actor,
            ProposalStatus.REJECTED,
            f"{disagree} of the study's {len(experts)} experts disagreed: {needed} agreeing "
            "can no longer be reached",
        )


def _accept(correction: Correction, actor, rule: str, note: str = "") -> None:
    study = correction.item.study
    try:
        version = version_create(
            question=correction.item.question,
            changes=correction.changes,
            base=correction.base.number,
            study=study,
            decided_by=actor,
            rule=rule,
            error_type=correction.error_type,
            note=correction.note,
            reverses=correction.reverses,
        )
    except VersionError as exc:
        raise CorrectionRefused(str(exc)) from exc
    correction.status = ProposalStatus.ACCEPTED
    correction.version = version
    correction.decided_at = timezone.now()
    correction.decided_by = actor
    correction.decision_note = note.strip()
    correction.save()
    _audit(
        study,
        actor,
        "correction.accept",
        correction,
        version=version.number,
        change=version.change,
        rule=rule,
        changes=correction.changes,
    )
    for holding in ReaderStudy.objects.filter(items__question_id=version.question_id).distinct():
        data_changed(holding)  # what its analysis may score against changed


def _close(correction: Correction, actor, status: str, note: str) -> None:
    correction.status = status
    correction.decided_at = timezone.now()
    correction.decided_by = actor
    correction.decision_note = note.strip()
    correction.save()
    action = "correction.reject" if status == ProposalStatus.REJECTED else "correction.withdraw"
    _audit(correction.item.study, actor, action, correction, note=note.strip())


@transaction.atomic
def adjudication_rule_set(*, pi, study: ReaderStudy, rule: str, votes: int) -> ReaderStudy:
    """A PI sets who decides the study's proposals. Not while one is open: it was proposed
    under the rule in force, and changing the rule would decide it or leave it undecidable."""
    if Role.PI not in _roles(study, pi):
        raise CorrectionRefused("Only the study's PIs set the rule.")
    if rule not in AdjudicationRule.values:
        raise CorrectionRefused("Choose a rule: a PI decides, or N of the study's experts.")
    experts = len(study_experts(study))
    if rule == AdjudicationRule.EXPERTS and not 1 <= votes <= experts:
        raise CorrectionRefused(
            f"N must be between 1 and the study's {experts} experts."
            if experts
            else "The study has no experts: add experts first, or let a PI decide."
        )
    ReaderStudy.objects.select_for_update().get(pk=study.pk)
    pending = Correction.objects.filter(item__study=study, status=ProposalStatus.OPEN).count()
    if pending:
        raise CorrectionRefused(
            f"{pending} proposal{'s are' if pending != 1 else ' is'} open under the present "
            "rule: decide or withdraw them first."
        )
    before = {"rule": study.adjudication, "votes": study.adjudication_votes}
    study.adjudication = rule
    if rule == AdjudicationRule.EXPERTS:
        study.adjudication_votes = votes
    study.save(update_fields=["adjudication", "adjudication_votes"])
    AuditEvent.objects.create(
        study=study,
        actor=pi,
        action="adjudication.set",
        detail={"before": before, "after": {"rule": rule, "votes": study.adjudication_votes}},
    )
    return study
