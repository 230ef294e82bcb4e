"""Reader-facing reads. Everything a reader's page shows is built here, from a view-model
that simply has no field for the correct answer, explanation, report or anyone else's answer.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field, make_dataclass
from datetime import datetime
from urllib.parse import urlencode

from django.db.models import Q
from django.urls import reverse

from annotation.models import Answer, ReaderCompletion
from annotation.sessions import Reading, reading_of, washout_message
from readerstudy.blinding import may_see_answers
from readerstudy.keys import answer_key, current_versions, key_words
from readerstudy.models import Image, ItemAid, ReaderStudy, StudyQuestion
from readerstudy.question_versions import QuestionVersion
from readerstudy.sampling import option_order, reader_order, session_order
from readerstudy.vocabulary import (
    ANSWER_FIELD_NAMES,
    ANSWER_FIELDS,
    LETTERS,
    NO_USABLE_AID,
    AidMode,
    ConfidenceScale,
)


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
    modality: str = ""  # the viewer remembers a reader's preset choice per modality


# A reader's own saved answer: one attribute per answer field of the vocabulary.
ReaderAnswer = make_dataclass(
    "ReaderAnswer",
    [(field.name, int | None if field.scaled else str) for field in ANSWER_FIELDS],
    frozen=True,
)


@dataclass(frozen=True)
class ReaderAid:
    """The AI's answer as the aided arm shows it: the letter on this reader's screen, the
    option's text and the model's words exactly as imported; or that it gave none."""

    model_name: str
    usable: bool
    letter: str
    option_text: str
    rationale: str

    @property
    def message(self) -> str:
        """What the page says instead of an answer: only when there is none."""
        return "" if self.usable else NO_USABLE_AID


@dataclass(frozen=True)
class Feedback:
    """What a practice set shows once a case is answered: right or wrong, the key and the
    explanation (on this reader's screen letters). Built only for a practice set's own
    answered case, and only when blinding lets the reader see the X-ray's answers."""

    right: bool
    choice: str
    key: str
    key_text: str
    explanation: str
    key_version: str  # what the key rests on (readerstudy.keys.key_words)


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
    # The design: session and arm of this reading, the AI's answer when the arm shows it,
    # and for a second read the reader's own first answer (on their screen's letters).
    session: int = 1
    sessions: int = 1
    arm: str = "unaided"
    aid_mode: str = ""
    aid: ReaderAid | None = None
    first_choice: str = ""
    first_confidence: int | None = None  # the rating given with first_choice (rated studies)
    store_key: str = ""
    designed: bool = False
    layout: str = ""  # sessions.layout_stamp: the answer is refused if the design changed
    practice: bool = False  # a practice set: the key and explanation follow each answer
    feedback: Feedback | None = None
    # The stamp of the question's words shown (QuestionVersion.words_stamp): the answer is
    # recorded against the version with these words. It changes only with the words.
    words: str = ""
    # The study's confidence scale (ConfidenceScale): "none", or what each answer is rated on.
    confidence_scale: str = ConfidenceScale.NONE

    @property
    def answer_query(self) -> str:
        """The answer form's query: the session, the stage of a second read, the layout and
        the confidence scale the page was made under, each checked by the server
        (annotation.services)."""
        query: dict[str, object] = {"session": self.session} if self.sessions > 1 else {}
        if self.awaiting_first:
            query["stage"] = "first"
        if self.layout:
            query["layout"] = self.layout
        if self.words:
            query["words"] = self.words
        query["scale"] = self.confidence_scale
        return "?" + urlencode(query)

    @property
    def awaiting_first(self) -> bool:
        """Second read, before the unaided answer: the AI is not shown yet."""
        return self.aid_mode == AidMode.SECOND_READ and not self.first_choice

    @property
    def awaiting_final(self) -> bool:
        return bool(self.first_choice) and self.answer is None


@dataclass(frozen=True)
class ReaderProgress:
    """A reader's progress in their current session (the second, once the first is done)."""

    answered: int
    total: int
    finished: bool
    locked: bool
    session: int = 1
    sessions: int = 1
    arm: str = ""
    opens_at: datetime | None = None  # only while the session waits for its washout
    washout: str = ""  # the same in words (sessions.washout_message)

    @property
    def waiting(self) -> bool:
        """The session cannot be answered yet: it opens at `opens_at`."""
        return self.opens_at is not None

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


def _reading(study: ReaderStudy, reader, reading: Reading | None) -> Reading:
    return reading if reading is not None else reading_of(study, reader)


def ordered_item_ids(study: ReaderStudy, reader, reading: Reading | None = None) -> list[int]:
    """The reader's order of study items: per-reader random when the study says so; in a
    designed study, their group's items and the anchor, per session from their recorded seed."""
    reading = _reading(study, reader, reading)
    items = study.items.order_by("position")
    assignment = reading.assignment
    if assignment is not None and assignment.reader_group is not None:
        items = items.filter(Q(case_group=assignment.reader_group) | Q(anchor=True))
    ids = list(items.values_list("id", flat=True))
    if not study.random_order:
        return ids
    if assignment is None:
        order = reader_order(
            len(ids), study_seed=study.seed, study_id=study.id, reader_id=reader.id
        )
    else:
        order = session_order(len(ids), order_seed=assignment.order_seed, session=reading.session)
    return [ids[i] for i in order]


def screen_letters(study: ReaderStudy, reading: Reading, question_id: int) -> dict[str, str]:
    """Screen letter -> canonical letter of one question for this reader (identity unless the
    study shuffles options). Pages and the API speak screen letters; answers are stored in the
    canonical ones, converted here and only here."""
    if not study.shuffle_options or reading.assignment is None:
        return {letter: letter for letter in LETTERS}
    order = option_order(order_seed=reading.assignment.order_seed, question_id=question_id)
    return {LETTERS[screen]: LETTERS[canonical] for screen, canonical in enumerate(order)}


def to_screen(mapping: dict[str, str], canonical: str) -> str:
    return next((s for s, c in mapping.items() if c == canonical), "") if canonical else ""


def item_at(
    study: ReaderStudy,
    reader,
    number: int,
    order: list[int] | None = None,
    reading: Reading | None = None,
) -> StudyQuestion | None:
    """The study question at `number` (1-based) in the reader's order; None when out of range.

    Pages and API resolve a reader's case through this one function; pass `order` when the
    caller already has it so a request computes the order once.
    """
    order = ordered_item_ids(study, reader, reading) if order is None else order
    if not 1 <= number <= len(order):
        return None
    return StudyQuestion.objects.select_related("study", "question__case").get(id=order[number - 1])


def _session(study: ReaderStudy, reader, session: int | None) -> int:
    if session is not None:
        return session
    return reading_of(study, reader).session if study.crossover else 1


def is_locked(study: ReaderStudy, reader, session: int | None = None) -> bool:
    """True once the reader's final submit (of this session) locked their answers."""
    session = _session(study, reader, session)
    return ReaderCompletion.objects.filter(
        study=study, reader=reader, locked=True, session=session
    ).exists()


def my_answers(study: ReaderStudy, reader, session: int | None = None):
    """The reader's answers of one session (the current one by default): never another's."""
    return Answer.objects.filter(
        item__study=study, reader=reader, session=_session(study, reader, session)
    )


def answered_item_ids(study: ReaderStudy, reader, session: int | None = None) -> set[int]:
    """Items with an answer; a second read counts once its final answer is given."""
    return set(
        my_answers(study, reader, session).exclude(choice="").values_list("item_id", flat=True)
    )


def completion_of(
    study: ReaderStudy, reader, session: int | None = None
) -> ReaderCompletion | None:
    session = _session(study, reader, session)
    return ReaderCompletion.objects.filter(study=study, reader=reader, session=session).first()


def progress_of(
    study: ReaderStudy, reader, total: int | None = None, reading: Reading | None = None
) -> ReaderProgress:
    reading = _reading(study, reader, reading)
    if total is None:
        total = (
            len(ordered_item_ids(study, reader, reading))
            if study.reader_groups
            else study.items.count()
        )
    answered = my_answers(study, reader, reading.session).exclude(choice="").count()
    completion = completion_of(study, reader, reading.session)
    return ReaderProgress(
        answered=answered,
        total=total,
        finished=completion is not None,
        locked=bool(completion and completion.locked),
        session=reading.session,
        sessions=reading.sessions,
        arm=reading.arm,
        opens_at=None if reading.is_open else reading.opens_at,
        washout="" if reading.is_open else washout_message(reading),
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
        "modality": img.modality,
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


def _aid_view(study: ReaderStudy, item: StudyQuestion, mapping: dict[str, str]) -> ReaderAid:
    aid: ItemAid | None = getattr(item, "aid", None)
    if aid is None or not aid.usable:
        name = aid.model_name if aid is not None else study.aid_model
        return ReaderAid(name, False, "", "", "")
    # The model's own words name options by the question's letters ("<answer>C</answer>"):
    # beside shuffled options they would point at another option, so they are left out.
    rationale = "" if study.shuffle_options else aid.rationale
    return ReaderAid(
        aid.model_name, True, to_screen(mapping, aid.letter), aid.option_text, rationale
    )


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
    reading: Reading,
    words: QuestionVersion,
    preload: list[str] | None = None,
    next_open: int | None = None,
    reveal: bool = False,
) -> ReaderCase:
    """The one place that decides what a reader sees of a case: nothing of the truth, the
    question's current words (`words`, its current version: no key, no explanation, no sign of
    a correction but the words themselves), the options in this reader's screen order, the
    AI's answer only in the aided arm (in a second read, only once the reader's own first
    answer is fixed), and only this session's answer. A practice set's answered case
    (`reveal`: the caller asked blinding) adds its feedback: right or wrong, the key and the
    explanation."""
    question, case = item.question, item.question.case
    mapping = screen_letters(study, reading, question.id)
    canonical = dict(words.labelled_options)
    first_choice = to_screen(mapping, mine.first_choice) if mine else ""
    final = mine if mine is not None and mine.choice else None
    show_aid = reading.aided and (reading.aid_mode == AidMode.CONCURRENT or bool(first_choice))
    return ReaderCase(
        study_slug=study.slug,
        study_title=study.title,
        number=number,
        total=total,
        question=words.text,
        options=[(screen, canonical[c]) for screen, c in mapping.items()],
        images=images,
        indication=case.indication if study.show_indication else None,
        age=case.patient_age if study.show_indication else None,
        sex=case.get_patient_sex_display() if study.show_indication else None,
        answer=(
            ReaderAnswer(
                **{
                    name: to_screen(mapping, final.choice)
                    if name == "choice"
                    else getattr(final, name)
                    for name in ANSWER_FIELD_NAMES
                }
            )
            if final
            else None
        ),
        editable=not locked
        and reading.is_open
        and study.reading_closed_at is None
        and (final is None or study.allow_revision),
        allow_revision=study.allow_revision,
        confidence_scale=study.confidence_scale,
        prev_number=number - 1 if number > 1 else None,
        next_number=number + 1 if number < total else None,
        answered_count=answered_count,
        preload=preload or [],
        next_open=next_open,
        session=reading.session,
        sessions=reading.sessions,
        arm=reading.arm,
        aid_mode=reading.aid_mode,
        aid=_aid_view(study, item, mapping) if show_aid else None,
        first_choice=first_choice,
        first_confidence=mine.first_confidence if mine else None,
        store_key=reading.store_key,
        designed=study.designed,
        layout=reading.layout,
        practice=study.practice,
        feedback=_feedback(final, mapping) if reveal and final else None,
        words=words.words_stamp,
    )


def _feedback(answer: Answer, mapping: dict[str, str]) -> Feedback:
    """Scored as the analysis scores it (readerstudy.keys, the default key policy), against
    the words the reader was shown."""
    scoring = answer_key(answer)
    shown = answer.question_version
    keyed = (
        shown
        if scoring.version == shown.number
        else shown.question.versions.get(number=scoring.version)
    )
    return Feedback(
        right=bool(scoring.correct(answer.choice)),
        choice=to_screen(mapping, answer.choice),
        key=to_screen(mapping, scoring.key),
        key_text=dict(shown.labelled_options)[scoring.key],
        explanation=keyed.explanation,
        key_version=key_words(scoring),
    )


def reveals(study: ReaderStudy, reader, case) -> bool:
    """Whether a case page of `study` may show `reader` the key of this X-ray (`case`) once
    answered: only in a practice set, and only when blinding by person allows it."""
    return study.practice and may_see_answers(reader, case)


def reader_case(
    study: ReaderStudy,
    reader,
    number: int,
    order: list[int] | None = None,
    reading: Reading | None = None,
) -> ReaderCase | None:
    """The case at `number` in the reader's order, or None when out of range."""
    reading = _reading(study, reader, reading)
    order = ordered_item_ids(study, reader, reading) if order is None else order
    item = item_at(study, reader, number, order)
    if item is None:
        return None
    answers = {
        a.item_id: a
        for a in my_answers(study, reader, reading.session).only(
            "item_id", "first_choice", *ANSWER_FIELD_NAMES
        )
    }
    done = {i for i, a in answers.items() if a.choice}
    locked = is_locked(study, reader, reading.session)
    next_open = first_unanswered(order, done | {item.id}, after=number)
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
        answered_count=len(done),
        reading=reading,
        words=current_versions([item.question_id])[item.question_id],
        preload=preload,
        next_open=next_open,
        reveal=reveals(study, reader, item.question.case),
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


def review_rows(study: ReaderStudy, reader, reading: Reading | None = None) -> list[ReviewRow]:
    """The reader's cases in their order, with their own saved answer (in screen letters) so
    the page can tell a real draft from one equal to what is saved."""
    reading = _reading(study, reader, reading)
    order = ordered_item_ids(study, reader, reading)
    mine: dict[int, dict[str, str]] = {}
    for row in (
        my_answers(study, reader, reading.session)
        .exclude(choice="")
        .values_list("item_id", "item__question_id", *ANSWER_FIELD_NAMES)
    ):
        item_id, question_id = row[0], row[1]
        saved = {
            name: "" if value is None else str(value)
            for name, value in zip(ANSWER_FIELD_NAMES, row[2:], strict=True)
        }
        if study.shuffle_options and saved.get("choice"):
            saved["choice"] = to_screen(
                screen_letters(study, reading, question_id), saved["choice"]
            )
        mine[item_id] = saved
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
    reading = reading_of(study, reader)
    order = ordered_item_ids(study, reader, reading)
    wanted = {order[n - 1]: n for n in numbers if 1 <= n <= len(order)}
    items = StudyQuestion.objects.filter(id__in=wanted).select_related("question__case", "aid")
    case_ids = [item.question.case_id for item in items]
    images: dict[int, list[ReaderImage]] = {}
    for img in (
        Image.objects.filter(case_id__in=case_ids)
        .exclude(display="")
        .order_by("case_id", "position")
    ):
        images.setdefault(img.case_id, []).append(_reader_image(img))
    answers = {a.item_id: a for a in my_answers(study, reader, reading.session)}
    locked = is_locked(study, reader, reading.session)
    words = current_versions([item.question_id for item in items])
    return [
        _build_case(
            study,
            item,
            number=wanted[item.id],
            total=len(order),
            images=images.get(item.question.case_id, []),
            mine=answers.get(item.id),
            locked=locked,
            answered_count=sum(1 for a in answers.values() if a.choice),
            reading=reading,
            reveal=reveals(study, reader, item.question.case),
            words=words[item.question_id],
        )
        for item in sorted(items, key=lambda i: wanted[i.id])
    ]
