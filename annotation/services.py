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

from django.conf import settings
from django.db import IntegrityError, transaction

from annotation.models import Answer, AnswerRevision, ReaderCompletion
from annotation.selectors import is_locked
from readerstudy.models import ReaderStudy, StudyQuestion
from readerstudy.signals import data_changed
from readerstudy.vocabulary import ANSWER_FIELD_NAMES, ANSWER_FIELDS


class AnswerRejected(ValueError):
    """The answer was not saved; the message says why in words a reader understands."""


class AnswerConflict(AnswerRejected):
    """The case was answered elsewhere after the page showed it. `saved`: the answer the
    server holds (the reader's own), so the page can show it beside the reader's draft."""

    def __init__(self, message: str, *, saved: dict[str, str]):
        super().__init__(message)
        self.saved = saved


@dataclass(frozen=True)
class AnswerOutcome:
    answer: Answer
    created: bool
    revised: bool


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
    **values: str | None,
) -> AnswerOutcome:
    """Save `reader`'s answer to `item`: `values` are the answer's fields (`choice`,
    `difficulty`, ...: readerstudy.vocabulary.ANSWER_FIELDS). `base`: the values the page showed
    as saved when the reader changed them (all empty: no answer); None skips that check (API
    clients)."""
    values = _validate(values)
    spent = clamp_time(time_ms)
    outcome = _answer_save(item, reader, values, spent, base)
    if outcome.created or outcome.revised:
        data_changed(item.study)  # the analysis is computed again (debounced)
    return outcome


def _answer_save(item, reader, values: dict, spent: int, base: dict | None) -> AnswerOutcome:
    study = item.study
    try:
        with transaction.atomic():
            if is_locked(study, reader):
                raise AnswerRejected("Your answers for this study are final and locked.")
            existing = Answer.objects.select_for_update().filter(item=item, reader=reader).first()
            if existing is None:
                answer = Answer.objects.create(item=item, reader=reader, time_ms=spent, **values)
                return AnswerOutcome(answer, created=True, revised=False)
            return _revise(existing, reader, values, spent, study, base)
    except IntegrityError:
        # Two requests raced to create the same answer; the other one won. Treat this one as
        # a repeat of it, or as a revision if the values differ.
        with transaction.atomic():
            existing = Answer.objects.select_for_update().get(item=item, reader=reader)
            return _revise(existing, reader, values, spent, study, base)


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
    """The final submit: records completion and locks answers if the study says so."""
    completion, _ = ReaderCompletion.objects.get_or_create(
        study=study, reader=reader, defaults={"locked": study.lock_on_finish}
    )
    return completion
