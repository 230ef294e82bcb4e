"""Reads of corrections for the expert and PI pages and the API: who may see which proposal
(the review rule, annotation.corrections.may_see_proposal), each proposal's changes in words,
its votes against the study's rule, a question's versions, and how many answers stay scored
against earlier words."""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field

from django.db.models import Q, QuerySet

from annotation.correction_models import Correction, CorrectionVote
from annotation.corrections import rule_words, study_experts
from annotation.models import Answer
from annotation.reviews import may_see_others
from readerstudy.keys import KeyBook
from readerstudy.models import Membership, ReaderStudy, Role, StudyQuestion
from readerstudy.question_versions import QuestionVersion
from readerstudy.vocabulary import (
    VERSION_FIELD_LABELS,
    VERSION_FIELDS,
    AdjudicationRule,
    ProposalStatus,
)


def proposals_visible_to(study: ReaderStudy, user, seen=None) -> QuerySet[Correction]:
    """The study's proposals `user` may read: every one for a PI who is not an expert, else
    their own and those on questions they reviewed (the review rule; `seen`: its answer, when
    the caller has it)."""
    proposals = Correction.objects.filter(item__study=study)
    seen = may_see_others(study, user) if seen is None else seen
    if seen is True:
        return proposals
    return proposals.filter(Q(proposer=user) | Q(item_id__in=seen))


def open_counts(study: ReaderStudy) -> Counter:
    """item id -> open proposals: how many, never what (every reviewer may know that one is
    open, as they know how many reviews a question has)."""
    return Counter(
        Correction.objects.filter(item__study=study, status=ProposalStatus.OPEN).values_list(
            "item_id", flat=True
        )
    )


def shown(field_name: str, value: str) -> str:
    if field_name == "accepted":
        return ", ".join(value)
    return value


@dataclass(frozen=True)
class Change:
    field: str
    label: str
    old: str
    new: str

    @property
    def short(self) -> bool:
        return len(self.old) + len(self.new) < 120


def changes_of(before: dict[str, str], changes: dict[str, str]) -> list[Change]:
    return [
        Change(name, VERSION_FIELD_LABELS[name], shown(name, before[name]), shown(name, value))
        for name, value in sorted(changes.items(), key=lambda kv: VERSION_FIELDS.index(kv[0]))
    ]


@dataclass
class ProposalRow:
    correction: Correction
    changes: list[Change]
    agree: list[str] = field(default_factory=list)
    disagree: list[str] = field(default_factory=list)
    standing: str = ""  # where it stands against the rule, in words
    my_vote: bool | None = None
    can_vote: bool = False
    can_decide: bool = False
    can_withdraw: bool = False

    @property
    def summary(self) -> str:
        """One line: "Wrong key: A → B"."""
        parts = [f"{c.label}: {c.old} → {c.new}" for c in self.changes if c.short]
        longer = [c.label.lower() for c in self.changes if not c.short]
        if longer:
            parts.append("new " + ", ".join(longer))
        kind = self.correction.get_error_type_display() or self.correction.get_kind_display()
        return f"{kind}: " + "; ".join(parts)


def proposal_rows(study: ReaderStudy, user, corrections) -> list[ProposalRow]:
    corrections = list(corrections)
    if not corrections:
        return []
    roles = set(Membership.objects.filter(study=study, user=user).values_list("role", flat=True))
    experts = study_experts(study)
    votes: dict[int, list[CorrectionVote]] = {}
    for vote in CorrectionVote.objects.filter(correction__in=corrections).select_related("voter"):
        votes.setdefault(vote.correction_id, []).append(vote)
    rows = []
    for correction in corrections:
        mine = votes.get(correction.pk, [])
        agree = [v.voter.get_username() for v in mine if v.agree]
        disagree = [v.voter.get_username() for v in mine if not v.agree]
        counted = sum(v.agree for v in mine if v.voter_id in experts)
        if study.adjudication == AdjudicationRule.EXPERTS:
            standing = (
                f"{counted} of {study.adjudication_votes} agreeing experts needed "
                f"({len(experts)} experts in the study)"
            )
        else:
            standing = "the experts' votes are advice"
        is_open = correction.is_open
        my_vote = next((v.agree for v in mine if v.voter_id == user.pk), None)
        rows.append(
            ProposalRow(
                correction=correction,
                changes=changes_of(correction.base.content(), correction.changes),
                agree=agree,
                disagree=disagree,
                standing=standing,
                my_vote=my_vote,
                can_vote=is_open and Role.EXPERT in roles and correction.proposer_id != user.pk,
                can_decide=is_open
                and Role.PI in roles
                and study.adjudication == AdjudicationRule.PI,
                can_withdraw=is_open and correction.proposer_id == user.pk,
            )
        )
    return rows


def item_proposals(item: StudyQuestion, user) -> tuple[list[ProposalRow], int]:
    """The proposals on `item` `user` may read (open first), and how many open ones they may
    not read yet (until they review the question)."""
    visible = (
        proposals_visible_to(item.study, user)
        .filter(item=item)
        .select_related("proposer", "base", "version", "decided_by")
        .order_by("-status", "-created_at")
    )
    rows = proposal_rows(item.study, user, visible)
    rows.sort(key=lambda r: (not r.correction.is_open, -r.correction.pk))
    hidden = (
        Correction.objects.filter(item=item, status=ProposalStatus.OPEN)
        .exclude(pk__in=[r.correction.pk for r in rows])
        .count()
    )
    return rows, hidden


@dataclass(frozen=True)
class VersionRow:
    version: QuestionVersion
    changes: list[Change]
    decided_here: bool


def version_rows(item: StudyQuestion) -> list[VersionRow]:
    """The question's versions, newest first, each with what it changed against the one
    before it."""
    versions = list(
        QuestionVersion.objects.filter(question_id=item.question_id)
        .select_related("study", "decided_by", "reverses")
        .order_by("number")
    )
    rows = []
    for before, version in zip([None, *versions], versions, strict=False):
        changes = []
        if before is not None:
            old, new = before.content(), version.content()
            changes = changes_of(old, {n: new[n] for n in VERSION_FIELDS if old[n] != new[n]})
        rows.append(VersionRow(version, changes, version.study_id == item.study_id))
    return list(reversed(rows))


def earlier_words_answers(study: ReaderStudy, question_ids=None) -> dict[int, int]:
    """question id -> this study's answers given to words other than the question's current
    ones: they stay scored against the words their readers saw (readerstudy.keys)."""
    answers = Answer.objects.filter(item__study=study).exclude(choice="")
    if question_ids is not None:
        answers = answers.filter(item__question_id__in=list(question_ids))
    rows = list(answers.values_list("item__question_id", "question_version__wording"))
    book = KeyBook.of({q for q, _ in rows})
    out: Counter = Counter()
    for question_id, wording in rows:
        if wording != book.current(question_id).wording:
            out[question_id] += 1
    return dict(out)


def rule_of(study: ReaderStudy) -> str:
    return rule_words(study)
