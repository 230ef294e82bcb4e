"""A study's design in the domain: arms, washout, split-plot groups and the anchor, shuffled
options, and each reader's recorded place in it (arm order, group, order seed).

The rules that need only the domain are checked here. The AI model's answers (the aided arm's
snapshot) and the "frozen once anyone answered" rule need the layers above, so the one entry
point that sets a design is `analysis.design.study_design_set`, which calls these functions.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass

from django.db import transaction

from readerstudy.blinding import membership_conflict
from readerstudy.models import (
    AuditEvent,
    ItemAid,
    Membership,
    ReaderAssignment,
    ReaderStudy,
    Role,
    StudyQuestion,
)
from readerstudy.sampling import (
    Candidate,
    SamplingError,
    balanced_choice,
    order_seed_for,
    split_groups,
)
from readerstudy.selectors import sample_xrays
from readerstudy.vocabulary import ARM_LAYOUTS, AidMode, Arm

# The longest washout a design may have: longer is a number typed by mistake (and a date
# thousands of years ahead is past what the pages can say when session 2 opens).
MAX_WASHOUT_DAYS = 365
# The study's fields a design sets (study_design_write); shown read-only in the admin, and
# read again by an answer under the design lock (readerstudy.locks).
DESIGN_FIELDS = (
    "arms",
    "aid_model",
    "aid_mode",
    "washout_days",
    "reader_groups",
    "anchor_size",
    "shuffle_options",
)


class DesignError(ValueError):
    """The design was refused; nothing was written. The message lists every problem."""


@dataclass(frozen=True)
class Design:
    arms: str = "unaided"
    aid_model: str = ""
    aid_mode: str = ""
    washout_days: int = 0
    groups: int = 0
    anchor: int = 0
    shuffle_options: bool = False

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


def _split(study: ReaderStudy, design: Design) -> dict[int, int | None]:
    rows = list(
        study.items.values_list("id", "question__task", "question__case_id").order_by("position")
    )
    candidates = [Candidate(str(pk), task, str(case)) for pk, task, case in rows]
    try:
        split = split_groups(
            candidates, groups=design.groups, anchor=design.anchor, seed=study.seed
        )
    except SamplingError as exc:
        raise DesignError(str(exc)) from exc
    return {int(pk): group for pk, group in split.items()}


@transaction.atomic
def study_design_write(
    *, study: ReaderStudy, design: Design, aid: dict[int, AidSnapshot], actor=None
) -> ReaderStudy:
    """Store a checked design: the study's fields, the items' groups and aid snapshots, and a
    balanced assignment for every reader. Callers check the layers' rules first."""
    problems = study_design_problems(study, design)
    if problems:
        raise DesignError("; ".join(problems) + ".")
    # The split may still refuse (an anchor that would cut an X-ray's questions): before the
    # study object changes, so a refused design leaves it as stored.
    split = _split(study, design) if design.groups >= 2 else {}
    study.arms = design.arms
    study.aid_model = design.aid_model if design.aided else ""
    study.aid_mode = design.aid_mode if design.aided else ""
    study.washout_days = design.washout_days
    study.reader_groups = design.groups
    study.anchor_size = design.anchor
    study.shuffle_options = design.shuffle_options
    study.save()
    items = list(study.items.all())
    for item in items:
        group = split.get(item.id)
        item.anchor = bool(split) and group is None
        item.case_group = group
    StudyQuestion.objects.bulk_update(items, ["anchor", "case_group"])
    ItemAid.objects.filter(item__study=study).delete()
    if design.aided:
        ItemAid.objects.bulk_create(
            ItemAid(
                item=item,
                model_name=design.aid_model,
                letter=snap.letter,
                option_text=snap.option_text,
                rationale=snap.rationale,
                usable=snap.usable,
            )
            for item in items
            for snap in [aid.get(item.id, AidSnapshot("", "", ""))]
        )
    ReaderAssignment.objects.filter(study=study).delete()
    if study.designed:
        for membership in Membership.objects.filter(study=study, role=Role.READER).order_by(
            "created_at", "id"
        ):
            assignment_for(study=study, reader=membership.user)
    AuditEvent.objects.create(
        study=study, actor=actor, action="design.set", detail=design.__dict__.copy()
    )
    return study


def assignment_for(*, study: ReaderStudy, reader) -> ReaderAssignment | None:
    """The reader's recorded place in the design, created on first need so that readers added
    later keep the arms (and groups) balanced within one. None for a study without a design.
    Every reading request asks: the common case is a plain read, outside any transaction."""
    if not study.designed:
        return None
    existing = ReaderAssignment.objects.filter(study=study, reader=reader).first()
    if existing is not None:
        return existing
    return _assign(study, reader)


@transaction.atomic
def _assign(study: ReaderStudy, reader) -> ReaderAssignment:
    existing = ReaderAssignment.objects.filter(study=study, reader=reader).first()
    if existing is not None:  # assigned meanwhile by another request
        return existing
    taken = list(
        ReaderAssignment.objects.select_for_update()
        .filter(study=study)
        .values_list("first_arm", "reader_group")
    )
    group = None
    if study.reader_groups >= 2:
        per_group = Counter(g for _, g in taken)
        group = balanced_choice({g: per_group[g] for g in range(1, study.reader_groups + 1)})
    arms = study.arm_list
    overall = Counter(a for a, _ in taken)
    in_group = Counter(a for a, g in taken if g == group)
    first_arm = balanced_choice({a: in_group[a] for a in arms}, {a: overall[a] for a in arms})
    return ReaderAssignment.objects.create(
        study=study,
        reader=reader,
        first_arm=first_arm,
        reader_group=group,
        order_seed=order_seed_for(study_seed=study.seed, study_id=study.id, reader_id=reader.pk),
    )
