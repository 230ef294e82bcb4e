"""A study's design and its rules: arms, washout, split-plot groups and the anchor, shuffled
options and the AI model of an aided arm; every rule a design must keep, in words a PI
understands, and when a design may no longer change (`design_frozen`).
"""

from __future__ import annotations

from dataclasses import dataclass

from readerstudy.blinding import membership_conflict
from readerstudy.models import Membership, ReaderStudy, Role, StudyQuestion
from readerstudy.selectors import sample_xrays
from readerstudy.vocabulary import ARM_LAYOUTS, AidMode, Arm, ConfidenceScale

# The longest washout a design may have: longer is a number typed by mistake (and a date
# thousands of years ahead is past what the pages can say when session 2 opens).
MAX_WASHOUT_DAYS = 365
# The study's fields a design sets (services.study_design_set); shown read-only in the admin, and
# read again by an answer under the design lock (readerstudy.locks).
DESIGN_FIELDS = (
    "arms",
    "aid_model",
    "aid_mode",
    "washout_days",
    "reader_groups",
    "anchor_size",
    "shuffle_options",
    "confidence_scale",
)


class DesignError(ValueError):
    """The design was refused; nothing was written. The message lists every problem."""


class DesignFrozen(DesignError):
    """The design was refused because readers have answered under it; nothing was written."""


@dataclass(frozen=True)
class Design:
    arms: str = "unaided"
    aid_model: str = ""
    aid_mode: str = ""
    washout_days: int = 0
    groups: int = 0
    anchor: int = 0
    shuffle_options: bool = False
    confidence_scale: str = ConfidenceScale.NONE

    @property
    def aided(self) -> bool:
        return Arm.AIDED in ARM_LAYOUTS.get(self.arms, ())

    @classmethod
    def of(cls, study: ReaderStudy) -> Design:
        """The design a study has now (what the design page starts from)."""
        return cls(
            arms=study.arms,
            aid_model=study.aid_model,
            aid_mode=study.aid_mode,
            washout_days=study.washout_days,
            groups=study.reader_groups,
            anchor=study.anchor_size,
            shuffle_options=study.shuffle_options,
            confidence_scale=study.confidence_scale,
        )


def aid_mode_or_default(arms: str, aid_mode: str) -> str:
    """The aid mode a design asked for, or concurrent when it has an aided arm and left the
    mode unsaid (the form's "—", no --aid-mode): the one place that default is decided."""
    if aid_mode:
        return aid_mode
    return AidMode.CONCURRENT if Arm.AIDED in ARM_LAYOUTS.get(arms, ()) else ""


@dataclass(frozen=True)
class AidSnapshot:
    """The AI's answer to one item as the aided arm shows it (see ItemAid)."""

    letter: str
    option_text: str
    rationale: str

    @property
    def usable(self) -> bool:
        return bool(self.letter)


def design_problems(
    study: ReaderStudy, design: Design, *, readers: int, x_rays: int | None = None
) -> list[str]:
    """Every domain rule the design breaks, in words a PI understands (empty: fine).
    `x_rays`: the X-rays of the sample when known (a sampled study); groups are dealt whole
    X-rays, so there must be one per group. A study still being planned (the new-study form)
    knows only its questions."""
    problems = []
    if design.confidence_scale not in ConfidenceScale.values:
        problems.append(
            f"the confidence scale must be one of: {', '.join(ConfidenceScale.values)} "
            f"(got {design.confidence_scale!r})"
        )
    if design.arms not in ARM_LAYOUTS:
        problems.append(f"arms must be one of: {', '.join(ARM_LAYOUTS)} (got {design.arms!r})")
    if design.aided:
        if not design.aid_model:
            problems.append("an aided arm needs an AI model (--aid-model)")
        if design.aid_mode not in AidMode.values:
            problems.append(f"the aid mode must be one of: {', '.join(AidMode.values)}")
    elif design.aid_model or design.aid_mode:
        problems.append("an AI model and aid mode need an aided arm (--arms unaided,aided)")
    if design.washout_days < 0:
        problems.append(f"the washout cannot be negative (got {design.washout_days} days)")
    elif design.washout_days > MAX_WASHOUT_DAYS:
        problems.append(
            f"the washout is at most {MAX_WASHOUT_DAYS} days (got {design.washout_days})"
        )
    n_items = study.items.count()
    if design.groups < 0 or design.groups == 1:
        problems.append("groups must be 0 (everyone reads every question) or at least 2")
    if design.groups >= 2:
        if design.groups > readers:
            problems.append(f"{design.groups} groups are more than the {readers} readers")
        if design.groups > n_items:
            problems.append(f"{design.groups} groups are more than the {n_items} questions")
        elif x_rays is not None and design.groups > x_rays:
            problems.append(f"{design.groups} groups are more than the {x_rays} X-rays")
    if design.anchor < 0:
        problems.append("the anchor cannot be negative")
    elif design.anchor > n_items:
        problems.append(f"the anchor ({design.anchor}) is larger than the sample ({n_items})")
    elif design.anchor and design.groups < 2:
        problems.append("an anchor set needs split-plot groups (--groups 2 or more)")
    return problems


def study_design_problems(study: ReaderStudy, design: Design) -> list[str]:
    """design_problems for an existing study, against its readers and X-rays now; and, when
    the arms change, blinding: an aided arm would show the AI's answers to a reader who reads
    these X-rays unaided in another study, an unaided arm would be read by one shown the AI's
    answers on them elsewhere (readerstudy.blinding, as for a new member)."""
    readers = Membership.objects.filter(study=study, role=Role.READER).select_related("user")
    problems = design_problems(study, design, readers=readers.count(), x_rays=sample_xrays(study))
    if design.arms in ARM_LAYOUTS and design.arms != study.arms:
        for membership in readers.order_by("user__username"):
            conflict = membership_conflict(
                user=membership.user, study=study, role=Role.READER, arms=design.arms
            )
            if conflict:
                problems.append(conflict.rstrip("."))
    return problems


def _answers(study: ReaderStudy) -> int:
    """The answers given in the study: annotation's Answer, reached through its relation's
    name, so that the domain imports nothing above it (as readerstudy.blinding does)."""
    answer = StudyQuestion._meta.get_field("answers").related_model
    return answer.objects.filter(item__study=study).count()


def _finished_sessions(study: ReaderStudy) -> int:
    """The reading sessions finished in the study (annotation's ReaderCompletion, by name)."""
    completion = ReaderStudy._meta.get_field("completions").related_model
    return completion.objects.filter(study=study).count()


def design_frozen(study: ReaderStudy) -> str:
    """Why the study's design can no longer change, in words ("" while it still may): answers
    were given under it, or a reader finished a session under it (possibly leaving every case
    unanswered): that completion names the session and arm, and opens the washout, of this
    design."""
    answered = _answers(study)
    if answered:
        recorded = "1 answer is" if answered == 1 else f"{answered} answers are"
        why = f"{recorded} already recorded under it"
    else:
        finished = _finished_sessions(study)
        if not finished:
            return ""
        sessions = "1 reading session was" if finished == 1 else f"{finished} reading sessions were"
        why = f"{sessions} already finished under it"
    return (
        f"The design of {study.slug!r} cannot change: {why}. Create a new study for a new design."
    )
