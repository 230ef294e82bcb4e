"""Writes of reader answers. The pages, the API and tests all call these functions.

Rules: one answer per reader per question (database constraint); a repeat of the same values
(double click, second tab) is a no-op, not an error; a change is a revision, kept, and only
allowed while the study allows revision and the reader has not locked their answers. A page
says what it showed as saved (`base`): a change made on a page that did not show the answer
saved since (another tab or window answered the case meanwhile) is refused, never silently
written over it.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime

from django.conf import settings
from django.db import IntegrityError, transaction
from django.utils import timezone

from annotation.models import Answer, AnswerRevision, ReaderCompletion
from annotation.selectors import is_locked, screen_letters, to_screen
from annotation.sessions import Reading, hold_design, reading_of, washout_message
from readerstudy.models import ReaderStudy, StudyQuestion
from readerstudy.question_versions import QuestionVersion
from readerstudy.services.versions import ensure_first_version
from readerstudy.signals import data_changed
from readerstudy.vocabulary import (
    ANSWER_FIELD_NAMES,
    ANSWER_FIELDS,
    AidMode,
    AnswerField,
    ConfidenceScale,
    Scale,
    confidence_scale,
)


class AnswerRejected(ValueError):
    """The answer was not saved; the message says why in words a reader understands."""


class InvalidAnswerValue(AnswerRejected):
    """One field of the answer holds a value its rule refuses (a letter outside the options,
    a confidence off the study's scale): `field` names it, so the API reports it as that
    field's error (400) and the page beside the answer."""

    def __init__(self, message: str, *, field: str):
        super().__init__(message)
        self.field = field


class AnswerConflict(AnswerRejected):
    """The case was answered elsewhere after the page showed it. `saved`: the answer the
    server holds (the reader's own), so the page can show it beside the reader's draft. The
    message and `saved` speak the reader's screen letters (shuffled options), never the
    canonical ones: they are built here, once, for every page and the API."""

    def __init__(self, message: str, *, saved: dict[str, str] | None = None):
        super().__init__(message)
        self.saved = saved or {}


class SessionNotOpen(AnswerRejected):
    """The reader's second session is still in its washout; `opens_at` says until when."""

    def __init__(self, message: str, opens_at: datetime):
        super().__init__(message)
        self.opens_at = opens_at


class ReadingClosed(AnswerRejected):
    """A PI closed the study's reading (readerstudy.services.studies.study_reading_close)."""


class WrongArm(AnswerRejected):
    """The page was shown in another session (arm) than the reader's current one."""


@dataclass(frozen=True)
class AnswerOutcome:
    answer: Answer
    created: bool
    revised: bool
    stage: str = ""  # second read: "first" (the AI is shown next) or "final"


def layout_check(reading: Reading, layout: str | None) -> None:
    """Refuse (WrongArm) an answer from a page made under another design than the reader's
    now (`layout`: the page's Reading.layout; None or "" is not checked)."""
    if layout and layout != reading.layout:
        raise WrongArm(
            "The study's design was changed since this page was shown: its case numbers or "
            "option letters may now stand for others. Reload the page; nothing was saved."
        )


def scale_check(study: ReaderStudy, asked: str | None) -> None:
    """Refuse (WrongArm) an answer from a page that asked for the rating on another scale than
    the study's now (`asked`: the page's `scale`; None is not checked). The scale moves no case
    and no letter, so the layout stamp leaves it out; but a PI may change it until the first
    answer, and a 4 rated on 1-5 ("Confident") would be stored as 4 % on 0-100."""
    if asked is None or asked == study.confidence_scale:
        return

    def words(name: str, verb: str) -> str:
        if name not in ConfidenceScale.values:
            return f"{verb} for your confidence on another scale"
        scale = confidence_scale(name)
        if scale is None:
            return f"{verb} for no confidence rating"
        return f"{verb} for your confidence on the {scale.lowest}–{scale.highest} scale"

    now = words(study.confidence_scale, "asks").replace("asks for your confidence", "asks it")
    raise WrongArm(
        f"This page {words(asked, 'asked')}; the study now {now}, so the rating would mean "
        "something else. Reload the page; nothing was saved."
    )


def _check_reading(
    reading: Reading, item: StudyQuestion, session: int | None, layout: str | None = None
) -> None:
    layout_check(reading, layout)
    if session is not None and session != reading.session:
        raise WrongArm(
            f"This page was for session {session}, which is over: you are now in session "
            f"{reading.session} ({reading.arm}). Reload the page; nothing was saved."
        )
    if not reading.is_open:
        raise SessionNotOpen(washout_message(reading), reading.opens_at)
    group = reading.assignment.reader_group if reading.assignment else None
    if group is not None and not item.anchor and item.case_group != group:
        raise AnswerRejected("This case is not in your group of the study.")


CLOSED = "A PI closed this study's reading: no more answers are taken, and nothing was saved."


def _check_open(study: ReaderStudy) -> None:
    """Refuse an answer or a finish once a PI closed the study's reading."""
    if study.reading_closed_at is not None:
        raise ReadingClosed(CLOSED)


def clamp_time(time_ms: int | None) -> int:
    """Visible time on a case, bounded: a tab left open overnight is not reading time."""
    if time_ms is None or time_ms < 0:
        return 0
    return min(int(time_ms), settings.MAX_CASE_TIME_MS)


def _validate(submitted: dict[str, object], scale: Scale | None) -> dict:
    """The answer's values as stored, each field checked as the vocabulary describes it;
    a point of the confidence scale against `scale`, the study's (None: it asks for none)."""
    values = {}
    for field in ANSWER_FIELDS:
        given = submitted.get(field.name)
        raw = "" if given is None else str(given)
        if field.scaled:
            values[field.name] = _on_scale(field, raw, scale)
            continue
        if field.choices is None:
            if len(raw) > field.max_length:
                raise InvalidAnswerValue(field.error, field=field.name)
            values[field.name] = field.clean(raw)
            continue
        value = field.clean(raw)
        if value not in field.choices.values and (field.required or value):
            raise InvalidAnswerValue(field.error, field=field.name)
        values[field.name] = value
    return values


def _on_scale(field: AnswerField, raw: str, scale: Scale | None) -> int | None:
    """A confidence rating checked against the study's scale: required when it has one,
    refused when it has none."""
    value = field.clean(raw)
    if scale is None:
        if value is not None:
            raise InvalidAnswerValue(field.error, field=field.name)
        return None
    if not isinstance(value, int) or value not in scale.points:
        raise InvalidAnswerValue(scale.refusal(), field=field.name)
    return value


def _values(answer: Answer) -> dict:
    return {f: getattr(answer, f) for f in ANSWER_FIELD_NAMES}


def _normalised(base: dict) -> dict:
    return {f.name: f.clean(str(base.get(f.name) or "").strip()) for f in ANSWER_FIELDS}


def answer_submit(
    *,
    reader,
    item: StudyQuestion,
    time_ms: int | None = 0,
    base: dict | None = None,
    session: int | None = None,
    stage: str | None = None,
    layout: str | None = None,
    words: str | None = None,
    scale: str | None = None,
    **values: str | int | None,
) -> AnswerOutcome:
    """Save `reader`'s answer to `item`: `values` are the answer's fields (`choice`,
    `difficulty`, `confidence`, ...: readerstudy.vocabulary.ANSWER_FIELDS; `choice` in the
    question's canonical letters; `confidence` a whole number on the study's confidence scale,
    required when it has one, refused when not) in their current session and arm. `base`: the
    values the page showed as saved when the reader changed them (all empty: no answer); None
    skips that check (API clients). `session`: the session the page was shown in; an answer for
    another one is refused. `layout`: the page's `Reading.layout`; an answer from a page made
    under another design (changed before anyone answered) is refused. `stage`: "first" when the
    page was a second read before the AI was shown: a repeat of that submit (double click,
    second tab) never becomes the final answer. `words`: the stamp of the question's words the
    page showed (QuestionVersion.words_stamp); the answer is recorded against the version with
    those words (None: the current version, for API clients). `scale`: the confidence scale the
    page asked the rating on (ReaderStudy.confidence_scale); a page of another scale is refused
    (None: not checked, API clients).

    A second read (aided arm, aid mode second-read) takes two submits: the first stores the
    unaided answer, fixed from then on, and the page shows the AI; the second is the final
    answer. Both are kept (first_choice, choice)."""
    if unknown := set(values) - set(ANSWER_FIELD_NAMES):
        raise TypeError(f"not answer fields: {sorted(unknown)}")
    spent = clamp_time(time_ms)
    outcome = _answer_save(
        item,
        reader,
        values,
        spent,
        base,
        session=session,
        stage=stage,
        layout=layout,
        words=words,
        scale=scale,
    )
    if outcome.created or outcome.revised:
        data_changed(item.study)  # the analysis is computed again (debounced)
    return outcome


def shown_version(item: StudyQuestion, words: str | None) -> QuestionVersion:
    """The version of `item`'s question whose words a page showed (`words`: its stamp), the
    latest with those words; the current version when the page said nothing (API clients).
    A stamp of no version of the question is refused: the page was not made here."""
    versions = list(
        QuestionVersion.objects.filter(question_id=item.question_id).order_by("-number")
    )
    if not versions:  # a question some path wrote without its version 1
        versions = [ensure_first_version(item.question)]
    if not words:
        return versions[0]
    found = next((v for v in versions if v.words_stamp == words), None)
    if found is None:
        raise AnswerRejected(
            "This page showed the question in words the server does not know. Reload the "
            "page; nothing was saved."
        )
    return found


def _answer_save(
    item,
    reader,
    values: dict,
    spent: int,
    base: dict | None,
    *,
    session,
    stage,
    layout,
    words,
    scale,
) -> AnswerOutcome:
    with transaction.atomic():
        hold_design(item.study)  # never under a design a PI replaced meanwhile
        scale_check(item.study, scale)  # before the rating is read on the scale of now
        values = _validate(values, item.study.scale)  # the scale as the design now has it
        shown = shown_version(item, words)
        return _answer_save_locked(
            item,
            reader,
            values,
            spent,
            base,
            session=session,
            stage=stage,
            layout=layout,
            shown=shown,
        )


def _answer_save_locked(
    item, reader, values: dict, spent: int, base: dict | None, *, session, stage, layout, shown
) -> AnswerOutcome:
    study = item.study
    reading = reading_of(study, reader)
    _check_open(study)
    _check_reading(reading, item, session, layout)
    second_read = reading.aid_mode == AidMode.SECOND_READ
    # Whatever this refuses with goes back to the reader: in the letters of their screen.
    mapping = screen_letters(study, reading, item.question_id)

    def screen(answer: Answer) -> dict[str, str]:
        return _on_screen(answer, mapping)

    mine = Answer.objects.select_for_update().filter(
        item=item, reader=reader, session=reading.session
    )
    try:
        with transaction.atomic():
            if is_locked(study, reader, reading.session):
                raise AnswerRejected("Your answers for this study are final and locked.")
            existing = mine.first()
            if existing is None:
                stored = values
                if second_read:  # the unaided answer: kept as first_choice, the AI shown next
                    stored = {
                        **values,
                        "first_choice": values["choice"],
                        "first_confidence": values["confidence"],
                        "choice": "",
                        "ai_shown_at": timezone.now(),
                    }
                answer = Answer.objects.create(
                    item=item,
                    reader=reader,
                    time_ms=spent,
                    session=reading.session,
                    arm=reading.arm,
                    practice=study.practice,  # never data of a research analysis
                    question_version=shown,
                    **stored,
                )
                created = "first" if second_read else ""
                return AnswerOutcome(answer, created=True, revised=False, stage=created)
            if stage == "first":  # the page never showed the AI: it cannot give a final
                return _repeat_first(existing, values, mapping)
            if not existing.choice:
                return _final(existing, values, spent, shown)
            return _revise(existing, reader, values, spent, study, base, screen, shown)
    except IntegrityError:
        # Two requests raced to create the same answer; the other one won. Treat this one as
        # a repeat of it, or as a revision if the values differ.
        with transaction.atomic():
            existing = mine.get()
            if stage == "first":  # the page never showed the AI: it cannot give a final
                return _repeat_first(existing, values, mapping)
            if not existing.choice:
                return _final(existing, values, spent, shown)
            return _revise(existing, reader, values, spent, study, base, screen, shown)


OnScreen = Callable[[Answer], dict[str, str]]


def _on_screen(answer: Answer, mapping: dict[str, str]) -> dict[str, str]:
    """The reader's saved answer as their page's form holds it: every answer field as text,
    letters as on their screen. A second read before its final answer holds its first answer
    (the one that can no longer change) as the choice, so a conflict never reports nothing."""
    saved = {k: "" if v is None else str(v) for k, v in _values(answer).items()}
    saved["choice"] = to_screen(mapping, answer.choice or answer.first_choice)
    return saved


def _repeat_first(existing: Answer, values: dict, mapping: dict[str, str]) -> AnswerOutcome:
    """A second read's first answer sent again from a page that did not show the AI: a
    repeat is harmless; anything else (another choice, or another confidence) is refused,
    never taken as the final answer nor dropped without a word."""
    given = (values["choice"], values.get("confidence"))
    if given == (existing.first_choice, existing.first_confidence):
        return AnswerOutcome(existing, created=False, revised=False, stage="first")
    first = to_screen(mapping, existing.first_choice)
    if existing.first_confidence is not None:
        first = f"{first} (confidence {existing.first_confidence})"
    then = "give your final answer" if not existing.choice else "see your final answer"
    raise AnswerConflict(
        f"your first answer to this case, {first}, is already saved and can no longer change; "
        f"the AI's answer is now shown. Open the case again to {then}.",
        saved=_on_screen(existing, mapping),
    )


def _final(existing: Answer, values: dict, spent: int, shown: QuestionVersion) -> AnswerOutcome:
    """A second read's final answer, given after the AI was shown; the first stays as it was."""
    for name, value in values.items():
        setattr(existing, name, value)
    existing.question_version = shown
    existing.time_ms = min(existing.time_ms + spent, 2**31 - 1)
    existing.save()
    return AnswerOutcome(existing, created=True, revised=False, stage="final")


def _revise(
    existing: Answer,
    reader,
    values: dict,
    spent: int,
    study,
    base: dict | None,
    screen: OnScreen,
    shown: QuestionVersion,
) -> AnswerOutcome:
    old = _values(existing)
    if old == values:
        return AnswerOutcome(existing, created=False, revised=False)
    if base is not None and _normalised(base) != old:
        saved = screen(existing)
        raise AnswerConflict(
            "this case was answered elsewhere (another tab or window) after this page showed "
            f"it: the saved answer is {saved['choice']}. Open the case to see it, and submit "
            "again there to replace it.",
            saved=saved,
        )
    if not study.allow_revision:
        raise AnswerRejected("This study does not allow changing an answer once given.")
    # The cap is on the case, not on each visit, so alternating answers cannot store hours on
    # one case: a revision counts only the time left under the cap.
    counted = max(0, min(spent, settings.MAX_CASE_TIME_MS - existing.time_ms))
    AnswerRevision.objects.create(
        answer=existing, editor=reader, old=old, new=values, time_ms=counted
    )
    for name, value in values.items():
        setattr(existing, name, value)
    existing.question_version = shown  # the revision answers the words now on screen
    existing.time_ms += counted
    existing.revisions_count += 1
    existing.save()
    return AnswerOutcome(existing, created=False, revised=True)


@transaction.atomic
def reader_finish(*, reader, study: ReaderStudy) -> ReaderCompletion:
    """The final submit of the reader's current session: records completion and locks its
    answers if the study says so. Finishing session 1 of a crossover starts the washout."""
    with transaction.atomic():
        hold_design(study)  # a finished session fixes the design too
        return _finish_locked(reader=reader, study=study)


def _finish_locked(*, reader, study: ReaderStudy) -> ReaderCompletion:
    _check_open(study)
    reading = reading_of(study, reader)
    if not reading.is_open:
        raise SessionNotOpen(washout_message(reading), reading.opens_at)
    completion, _ = ReaderCompletion.objects.get_or_create(
        study=study,
        reader=reader,
        session=reading.session,
        defaults={"locked": study.lock_on_finish or study.crossover},
    )
    return completion
