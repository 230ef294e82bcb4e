"""Writes of reader answers. The pages, the API and tests all call these functions.

Rules: one answer per reader per question (database constraint); a repeat of the same values
(double click, second tab) is a no-op, not an error; a change is a revision, kept, and only
allowed while the study allows revision and the reader has not locked their answers. A page
says what it showed as saved (`base`): a change made on a page that did not show the answer
saved since (another tab or window answered the case meanwhile) is refused, never silently
written over it.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from django.conf import settings
from django.db import IntegrityError, transaction
from django.utils import timezone

from annotation.models import Answer, AnswerRevision, ReaderCompletion
from annotation.selectors import is_locked
from annotation.sessions import Reading, reading_of
from readerstudy.models import ReaderStudy, StudyQuestion
from readerstudy.signals import data_changed
from readerstudy.vocabulary import ANSWER_FIELD_NAMES, ANSWER_FIELDS, AidMode


class AnswerRejected(ValueError):
    """The answer was not saved; the message says why in words a reader understands."""


class AnswerConflict(AnswerRejected):
    """The case was answered elsewhere after the page showed it. `saved`: the answer the
    server holds (the reader's own), so the page can show it beside the reader's draft."""

    def __init__(self, message: str, *, saved: dict[str, str] | None = None):
        super().__init__(message)
        self.saved = saved or {}


class SessionNotOpen(AnswerRejected):
    """The reader's second session is still in its washout; `opens_at` says until when."""

    def __init__(self, message: str, opens_at: datetime):
        super().__init__(message)
        self.opens_at = opens_at


class WrongArm(AnswerRejected):
    """The page was shown in another session (arm) than the reader's current one."""


@dataclass(frozen=True)
class AnswerOutcome:
    answer: Answer
    created: bool
    revised: bool
    stage: str = ""  # second read: "first" (the AI is shown next) or "final"


def washout_message(reading: Reading) -> str:
    when = timezone.localtime(reading.opens_at)
    return (
        f"Your second session ({reading.arm}) opens on {when:%A %d %B %Y at %H:%M} "
        f"({timezone.get_current_timezone_name()}), after the study's washout. "
        "Nothing can be answered before then."
    )


def _check_reading(reading: Reading, item: StudyQuestion, session: int | None) -> None:
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


def clamp_time(time_ms: int | None) -> int:
    """Visible time on a case, bounded: a tab left open overnight is not reading time."""
    if time_ms is None or time_ms < 0:
        return 0
    return min(int(time_ms), settings.MAX_CASE_TIME_MS)


def _validate(submitted: dict[str, str | None]) -> dict:
    """The answer's values as stored, each field checked as the vocabulary describes it."""
    unknown = set(submitted) - set(ANSWER_FIELD_NAMES)
    if unknown:
        raise TypeError(f"not answer fields: {sorted(unknown)}")
    values = {}
    for field in ANSWER_FIELDS:
        raw = submitted.get(field.name) or ""
        if field.choices is None:
            if len(raw) > field.max_length:
                raise AnswerRejected(field.error)
            values[field.name] = field.clean(raw)
            continue
        value = field.clean(raw)
        if value not in field.choices.values and (field.required or value):
            raise AnswerRejected(field.error)
        values[field.name] = value
    return values


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
    **values: str | None,
) -> AnswerOutcome:
    """Save `reader`'s answer to `item`: `values` are the answer's fields (`choice`,
    `difficulty`, ...: readerstudy.vocabulary.ANSWER_FIELDS; `choice` in the question's
    canonical letters) in their current session and arm. `base`: the values the page showed
    as saved when the reader changed them (all empty: no answer); None skips that check (API
    clients). `session`: the session the page was shown in; an answer for another one is
    refused. `stage`: "first" when the page was a second read before the AI was shown: a
    repeat of that submit (double click, second tab) never becomes the final answer.

    A second read (aided arm, aid mode second-read) takes two submits: the first stores the
    unaided answer, fixed from then on, and the page shows the AI; the second is the final
    answer. Both are kept (first_choice, choice)."""
    values = _validate(values)
    spent = clamp_time(time_ms)
    outcome = _answer_save(item, reader, values, spent, base, session=session, stage=stage)
    if outcome.created or outcome.revised:
        data_changed(item.study)  # the analysis is computed again (debounced)
    return outcome


def _answer_save(
    item, reader, values: dict, spent: int, base: dict | None, *, session, stage
) -> AnswerOutcome:
    study = item.study
    reading = reading_of(study, reader)
    _check_reading(reading, item, session)
    second_read = reading.aid_mode == AidMode.SECOND_READ
    mine = Answer.objects.select_for_update().filter(
        item=item, reader=reader, session=reading.session
    )
    try:
        with transaction.atomic():
            if is_locked(study, reader, reading.session):
                raise AnswerRejected("Your answers for this study are final and locked.")
            existing = mine.first()
            if existing is None:
                if second_read:
                    first = {**values, "first_choice": values["choice"], "choice": ""}
                    answer = Answer.objects.create(
                        item=item,
                        reader=reader,
                        time_ms=spent,
                        session=reading.session,
                        arm=reading.arm,
                        ai_shown_at=timezone.now(),
                        **first,
                    )
                    return AnswerOutcome(answer, created=True, revised=False, stage="first")
                answer = Answer.objects.create(
                    item=item,
                    reader=reader,
                    time_ms=spent,
                    session=reading.session,
                    arm=reading.arm,
                    **values,
                )
                return AnswerOutcome(answer, created=True, revised=False)
            if not existing.choice:
                if stage == "first":
                    return _repeat_first(existing, values)
                return _final(existing, values, spent)
            return _revise(existing, reader, values, spent, study, base)
    except IntegrityError:
        # Two requests raced to create the same answer; the other one won. Treat this one as
        # a repeat of it, or as a revision if the values differ.
        with transaction.atomic():
            existing = mine.get()
            if not existing.choice:
                if stage == "first":
                    return _repeat_first(existing, values)
                return _final(existing, values, spent)
            return _revise(existing, reader, values, spent, study, base)


def _repeat_first(existing: Answer, values: dict) -> AnswerOutcome:
    """A second read's first answer sent again from a page that did not show the AI."""
    if values["choice"] == existing.first_choice:
        return AnswerOutcome(existing, created=False, revised=False, stage="first")
    raise AnswerConflict(
        "your first answer to this case is already saved and can no longer change; the AI's "
        "answer is now shown. Open the case again to give your final answer."
    )


def _final(existing: Answer, values: dict, spent: int) -> AnswerOutcome:
    """A second read's final answer, given after the AI was shown; the first stays as it was."""
    for name, value in values.items():
        setattr(existing, name, value)
    existing.time_ms = min(existing.time_ms + spent, 2**31 - 1)
    existing.save()
    return AnswerOutcome(existing, created=True, revised=False, stage="final")


def _revise(
    existing: Answer, reader, values: dict, spent: int, study, base: dict | None = None
) -> AnswerOutcome:
    old = _values(existing)
    if old == values:
        return AnswerOutcome(existing, created=False, revised=False)
    if base is not None and _normalised(base) != old:
        raise AnswerConflict(
            "this case was answered elsewhere (another tab or window) after this page showed "
            f"it: the saved answer is {old['choice']}. Open the case to see it, and submit "
            "again there to replace it.",
            saved={k: "" if v is None else str(v) for k, v in old.items()},
        )
    if not study.allow_revision:
        raise AnswerRejected("This study does not allow changing an answer once given.")
    # The cap is on the case, not on each visit: alternating answers once stored 6.5 h on one
    # case (issue 25). A revision counts only the time left under the cap.
    counted = max(0, min(spent, settings.MAX_CASE_TIME_MS - existing.time_ms))
    AnswerRevision.objects.create(
        answer=existing, editor=reader, old=old, new=values, time_ms=counted
    )
    for name, value in values.items():
        setattr(existing, name, value)
    existing.time_ms += counted
    existing.revisions_count += 1
    existing.save()
    return AnswerOutcome(existing, created=False, revised=True)


@transaction.atomic
def reader_finish(*, reader, study: ReaderStudy) -> ReaderCompletion:
    """The final submit of the reader's current session: records completion and locks its
    answers if the study says so. Finishing session 1 of a crossover starts the washout."""
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
