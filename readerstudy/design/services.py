"""Setting a study's design: the one entry point (`study_design_set`), checked, all or nothing,
audited, and refused once anyone has answered under the design in place.

An aided arm shows an AI model's answers: the design writes a *snapshot* of the model's answer
per study item (readerstudy.ItemAid: letter, option text as imported, the model's words, usable
or not), which the reading pages then show. The snapshot also keeps a running study stable if
predictions are re-imported later.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from django.db import transaction

from readerstudy.design.assignments import assignment_for
from readerstudy.design.rules import (
    AidSnapshot,
    Design,
    DesignError,
    DesignFrozen,
    design_frozen,
    study_design_problems,
)
from readerstudy.locks import design_lock
from readerstudy.models import (
    AuditEvent,
    ItemAid,
    Membership,
    ReaderAssignment,
    ReaderStudy,
    Role,
    StudyQuestion,
)
from readerstudy.predictions.models import AIModel, Prediction
from readerstudy.sampling import Candidate, SamplingError, split_groups
from readerstudy.services.studies import StudyCreated
from readerstudy.vocabulary import LETTERS


@dataclass(frozen=True)
class DesignSet:
    study: ReaderStudy
    aid_usable: int  # items with a usable AI answer (aided arm), else 0
    aid_missing: int  # items the aided arm shows "no usable answer" for


def aid_snapshots(study: ReaderStudy, model_name: str) -> dict[int, AidSnapshot]:
    """The named model's answer to each of the study's items, as the aided arm shows it.

    Raises DesignError when the model does not exist for the study's dataset or has no
    prediction for any sampled question (naming the count)."""
    model = AIModel.objects.filter(dataset=study.dataset, name=model_name).first()
    if model is None:
        known = list(AIModel.objects.filter(dataset=study.dataset).values_list("name", flat=True))
        raise DesignError(
            f"no AI model named {model_name!r} for dataset {study.dataset.name!r} "
            f"(imported: {', '.join(known) or 'none'}; use import_predictions first)."
        )
    items = list(study.items.select_related("question"))
    predictions = {
        p.question_id: p
        for p in Prediction.objects.filter(model=model, question__study_items__study=study)
    }
    if not predictions:
        raise DesignError(
            f"AI model {model_name!r} has predictions for 0 of the {len(items)} sampled "
            "questions; import its predictions for these questions first."
        )
    out = {}
    for item in items:
        prediction = predictions.get(item.question_id)
        if prediction is None or prediction.letter not in LETTERS:
            out[item.id] = AidSnapshot("", "", "")
            continue
        raw = prediction.raw_response.strip()
        out[item.id] = AidSnapshot(
            letter=prediction.letter,
            option_text=item.question.options[LETTERS.index(prediction.letter)],
            rationale=raw if raw.upper() != prediction.letter else "",
        )
    return out


@transaction.atomic
def study_design_set(*, study: ReaderStudy, design: Design, actor=None) -> DesignSet:
    """Set (or change) a study's design; all or nothing. Refused once anyone has answered:
    the answers were given under the old design (DesignFrozen)."""
    # Answers and finishes in flight commit first and are counted below; later ones wait and
    # then see this design (readerstudy.locks; held until this function's transaction ends).
    design_lock(study.pk, shared=False)
    frozen = design_frozen(study)
    if frozen:
        raise DesignFrozen(frozen)
    aid = aid_snapshots(study, design.aid_model) if design.aided and design.aid_model else {}
    _write(study=study, design=design, aid=aid, actor=actor)
    usable = sum(1 for snap in aid.values() if snap.usable)
    return DesignSet(study, usable, len(aid) - usable if aid else 0)


def designed_study_create(
    *, design: Design, create: Callable[[], StudyCreated], actor=None
) -> tuple[StudyCreated, DesignSet]:
    """Create a study (by `create`, e.g. study_create) and set its design, both or neither."""
    with transaction.atomic():
        created = create()
        result = study_design_set(study=created.study, design=design, actor=actor)
    return created, result


def _write(
    *, study: ReaderStudy, design: Design, aid: dict[int, AidSnapshot], actor=None
) -> ReaderStudy:
    """Store a design: its rules checked, the study's fields, the items' groups and aid
    snapshots, and a balanced assignment for every reader."""
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
    study.confidence_scale = design.confidence_scale
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
