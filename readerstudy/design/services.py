"""Setting a study's design: the one entry point, in the layer that owns the AI models.

Why here: the aided arm shows an AI model's answers, and models and predictions live in this
(top) layer, while reading happens in `annotation` and studies in `readerstudy`. Rather than
let the lower layers import predictions, this service writes a *snapshot* of the model's answer
per study item (readerstudy.ItemAid: letter, option text as imported, the model's words, usable
or not) when the design is set; the reading pages then show the snapshot. The snapshot also
keeps a running study stable if predictions are re-imported later.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from django.db import transaction

from annotation.models import Answer, ReaderCompletion
from readerstudy.locks import design_lock
from readerstudy.models import ReaderStudy
from readerstudy.predictions.models import AIModel, Prediction
from readerstudy.services.design import AidSnapshot, Design, DesignError, study_design_write
from readerstudy.services.studies import StudyCreated
from readerstudy.vocabulary import LETTERS


class DesignFrozen(DesignError):
    """The design was refused because readers have answered under it; nothing was written."""


def design_frozen(study: ReaderStudy) -> str:
    """Why the study's design can no longer change, in words ("" while it still may): answers
    were given under it, or a reader finished a session under it (possibly leaving every case
    unanswered): that completion names the session and arm, and opens the washout, of this
    design."""
    answered = Answer.objects.filter(item__study=study).count()
    if answered:
        recorded = "1 answer is" if answered == 1 else f"{answered} answers are"
        why = f"{recorded} already recorded under it"
    else:
        finished = ReaderCompletion.objects.filter(study=study).count()
        if not finished:
            return ""
        sessions = "1 reading session was" if finished == 1 else f"{finished} reading sessions were"
        why = f"{sessions} already finished under it"
    return (
        f"The design of {study.slug!r} cannot change: {why}. Create a new study for a new design."
    )


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
    study_design_write(study=study, design=design, aid=aid, actor=actor)
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
