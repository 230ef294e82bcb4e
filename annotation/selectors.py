"""Reader-facing reads. Everything a reader's page shows is built here, from a view-model
that simply has no field for the correct answer, explanation, report or anyone else's answer.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field, make_dataclass

from django.urls import reverse

from annotation.models import Answer, ReaderCompletion
from readerstudy.models import Image, ReaderStudy, StudyQuestion
from readerstudy.sampling import reader_order
from readerstudy.vocabulary import ANSWER_FIELD_NAMES


@dataclass(frozen=True)
class ReaderImage:
    url: str
    thumbnail_url: str
    label: str
    width: int
    height: int
    # Full depth (sources deeper than 8 bits); the viewer windows these in stored units.
    depth_url: str = ""
    value_offset: float = 0.0
    value_scale: float = 1.0
    value_min: float = 0.0
    value_max: float = 255.0
    monochrome1: bool = False
    presets_json: str = "{}"  # {name: [center, width]} in stored units, from the server


# A reader's own saved answer: one attribute per answer field of the vocabulary.
ReaderAnswer = make_dataclass(
    "ReaderAnswer", [(name, str) for name in ANSWER_FIELD_NAMES], frozen=True
)


@dataclass(frozen=True)
class ReaderCase:
    """Everything a reader may see about one case. No truth, no report, no other readers."""

    study_slug: str
    study_title: str
    number: int  # 1-based position in this reader's order
    total: int
    question: str
    options: list[tuple[str, str]]
    images: list[ReaderImage]
    indication: str | None
    age: int | None
    sex: str | None
    answer: ReaderAnswer | None
    editable: bool
    allow_revision: bool
    prev_number: int | None
    next_number: int | None
    answered_count: int
    preload: list[str] = field(default_factory=list)
    # The case Enter leads to: the first unanswered one after this (wrapping), this one
    # counted as answered. The page prefetches it; the server confirms it after the save.
    next_open: int | None = None


@dataclass(frozen=True)
class ReaderProgress:
    answered: int
    total: int
    finished: bool
    locked: bool

    @property
    def percent(self) -> int:
        return round(100 * self.answered / self.total) if self.total else 0

    @property
    def left(self) -> int:
        return max(self.total - self.answered, 0)

    @property
    def complete(self) -> bool:
        return self.total > 0 and self.answered >= self.total


def image_url(relative: str) -> str:
    return reverse("media-image", kwargs={"path": relative})


def ordered_item_ids(study: ReaderStudy, reader) -> list[int]:
    """The reader's order of study items: per-reader random when the study says so."""
    ids = list(study.items.order_by("position").values_list("id", flat=True))
    if not study.random_order:
        return ids
    order = reader_order(len(ids), study_seed=study.seed, study_id=study.id, reader_id=reader.id)
    return [ids[i] for i in order]


def item_at(
    study: ReaderStudy, reader, number: int, order: list[int] | None = None
) -> StudyQuestion | None:
    """The study question at `number` (1-based) in the reader's order; None when out of range.

    Pages and API resolve a reader's case through this one function; pass `order` when the
    caller already has it so a request computes the order once.
    """
    order = ordered_item_ids(study, reader) if order is None else order
    if not 1 <= number <= len(order):
        return None
    return StudyQuestion.objects.select_related("study", "question__case").get(id=order[number - 1])


def is_locked(study: ReaderStudy, reader) -> bool:
    """True once the reader's final submit locked their answers."""
    return ReaderCompletion.objects.filter(study=study, reader=reader, locked=True).exists()


def answered_item_ids(study: ReaderStudy, reader) -> set[int]:
    return set(
        Answer.objects.filter(item__study=study, reader=reader).values_list("item_id", flat=True)
    )


def completion_of(study: ReaderStudy, reader) -> ReaderCompletion | None:
    return ReaderCompletion.objects.filter(study=study, reader=reader).first()


def progress_of(study: ReaderStudy, reader, total: int | None = None) -> ReaderProgress:
    if total is None:
        total = study.items.count()
    answered = Answer.objects.filter(item__study=study, reader=reader).count()
    completion = completion_of(study, reader)
    return ReaderProgress(
        answered=answered,
        total=total,
        finished=completion is not None,
        locked=bool(completion and completion.locked),
    )


def first_unanswered(order: list[int], answered: set[int], after: int = 0) -> int | None:
    """1-based number of the first unanswered case after `after` (wrapping), else None."""
    n = len(order)
    for step in range(n):
        index = (after + step) % n
        if order[index] not in answered:
            return index + 1
    return None


@dataclass(frozen=True)
class Advance:
    """Where Enter leads after a save: the server's answer to the page's prefetch guess."""

    next_number: int | None  # None: every case is answered
    following: int | None  # the case after that one, for the page's next prefetch


def advance_after(order: list[int], answered: set[int], number: int) -> Advance:
    next_number = first_unanswered(order, answered, after=number)
    if next_number is None:
        return Advance(None, None)
    following = first_unanswered(order, answered | {order[next_number - 1]}, after=next_number)
    return Advance(next_number, following)


def _reader_image(img: Image) -> ReaderImage:
    common = {
        "url": image_url(img.display),
        "thumbnail_url": image_url(img.thumbnail) if img.thumbnail else "",
        "label": img.view_label,
        "width": img.width or 0,
        "height": img.height or 0,
    }
    if not img.depth:
        return ReaderImage(**common)
    return ReaderImage(
        **common,
        depth_url=image_url(img.depth),
        value_offset=img.value_offset or 0.0,
        value_scale=img.value_scale or 1.0,
        value_min=img.value_min if img.value_min is not None else 0.0,
        value_max=img.value_max if img.value_max is not None else 65535.0,
        monochrome1=img.monochrome1,
        presets_json=json.dumps(img.window_presets or {}),
    )


def case_images(case_id: int) -> list[ReaderImage]:
    """A case's display images in order (no source paths: nothing but what a reader sees)."""
    images = Image.objects.filter(case_id=case_id).exclude(display="").order_by("position")
    return [_reader_image(img) for img in images]


def _build_case(
    study: ReaderStudy,
    item: StudyQuestion,
    *,
    number: int,
    total: int,
    images: list[ReaderImage],
    mine: Answer | None,
    locked: bool,
    answered_count: int,
    preload: list[str] | None = None,
    next_open: int | None = None,
) -> ReaderCase:
    """The one place that decides what a reader sees of a case: nothing of the truth."""
    question, case = item.question, item.question.case
    return ReaderCase(
        study_slug=study.slug,
        study_title=study.title,
        number=number,
        total=total,
        question=question.text,
        options=question.labelled_options,
        images=images,
        indication=case.indication if study.show_indication else None,
        age=case.patient_age if study.show_indication else None,
        sex=case.get_patient_sex_display() if study.show_indication else None,
        answer=(
            ReaderAnswer(**{name: getattr(mine, name) for name in ANSWER_FIELD_NAMES})
            if mine
            else None
        ),
        editable=not locked and (mine is None or study.allow_revision),
        allow_revision=study.allow_revision,
        prev_number=number - 1 if number > 1 else None,
        next_number=number + 1 if number < total else None,
        answered_count=answered_count,
        preload=preload or [],
        next_open=next_open,
    )


def reader_case(
    study: ReaderStudy, reader, number: int, order: list[int] | None = None
) -> ReaderCase | None:
    """The case at `number` in the reader's order, or None when out of range."""
    order = ordered_item_ids(study, reader) if order is None else order
    item = item_at(study, reader, number, order)
    if item is None:
        return None
    answers = {
        a.item_id: a
        for a in Answer.objects.filter(item__study=study, reader=reader).only(
            "item_id", *ANSWER_FIELD_NAMES
        )
    }
    locked = is_locked(study, reader)
    next_open = first_unanswered(order, set(answers) | {item.id}, after=number)
    preload: list[str] = []
    if next_open is not None:
        next_case_id = (
            StudyQuestion.objects.filter(id=order[next_open - 1])
            .values_list("question__case_id", flat=True)
            .first()
        )
        preload = [
            url for img in case_images(next_case_id) for url in (img.url, img.depth_url) if url
        ]
    return _build_case(
        study,
        item,
        number=number,
        total=len(order),
        images=case_images(item.question.case_id),
        mine=answers.get(item.id),
        locked=locked,
        answered_count=len(answers),
        preload=preload,
        next_open=next_open,
    )


@dataclass(frozen=True)
class ReviewRow:
    number: int
    answered: bool
    choice: str
    # The reader's own saved answer as the form's {field: value} (empty when unanswered): the
    # page drops a draft kept in the browser that equals it, so the list and the finish screen
    # never call a saved case a draft.
    saved: dict[str, str] = field(default_factory=dict)

    @property
    def saved_json(self) -> str:
        return json.dumps(self.saved) if self.answered else ""


def review_rows(study: ReaderStudy, reader) -> list[ReviewRow]:
    order = ordered_item_ids(study, reader)
    mine = {
        row[0]: {
            name: "" if value is None else str(value)
            for name, value in zip(ANSWER_FIELD_NAMES, row[1:], strict=True)
        }
        for row in Answer.objects.filter(item__study=study, reader=reader).values_list(
            "item_id", *ANSWER_FIELD_NAMES
        )
    }
    return [
        ReviewRow(
            number=i + 1,
            answered=item_id in mine,
            choice=mine.get(item_id, {}).get("choice", ""),
            saved=mine.get(item_id, {}),
        )
        for i, item_id in enumerate(order)
    ]


def reader_cases(study: ReaderStudy, reader, numbers: list[int]) -> list[ReaderCase]:
    """Several cases in one go (for the API list): a fixed number of queries per page."""
    order = ordered_item_ids(study, reader)
    wanted = {order[n - 1]: n for n in numbers if 1 <= n <= len(order)}
    items = StudyQuestion.objects.filter(id__in=wanted).select_related("question__case")
    case_ids = [item.question.case_id for item in items]
    images: dict[int, list[ReaderImage]] = {}
    for img in (
        Image.objects.filter(case_id__in=case_ids)
        .exclude(display="")
        .order_by("case_id", "position")
    ):
        images.setdefault(img.case_id, []).append(_reader_image(img))
    answers = {a.item_id: a for a in Answer.objects.filter(item__study=study, reader=reader)}
    locked = is_locked(study, reader)
    return [
        _build_case(
            study,
            item,
            number=wanted[item.id],
            total=len(order),
            images=images.get(item.question.case_id, []),
            mine=answers.get(item.id),
            locked=locked,
            answered_count=len(answers),
        )
        for item in sorted(items, key=lambda i: wanted[i.id])
    ]
