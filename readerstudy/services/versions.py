"""Writes of question versions: version 1 of every question, and the next version of one.

Only these functions create versions; the services that decide corrections
(annotation.corrections) and the importers call them. A version is never changed or deleted:
a reversal is the next version, with the reversed version's changes undone.
"""

from __future__ import annotations

from collections.abc import Iterable
from datetime import datetime

from django.db import transaction
from django.utils import timezone
from django.utils.dateparse import parse_datetime

from readerstudy.models import Question, ReaderStudy
from readerstudy.question_versions import QuestionVersion
from readerstudy.vocabulary import (
    ACCEPTED_SETS,
    KEY_FIELDS,
    LETTERS,
    OPTION_FIELDS,
    VERSION_FIELD_LABELS,
    VERSION_FIELDS,
    WORDING_FIELDS,
    VersionChange,
)


def original_content(question: Question) -> dict[str, str]:
    """A question's imported content as version 1 holds it."""
    return {
        "text": question.text,
        "option_a": question.option_a,
        "option_b": question.option_b,
        "option_c": question.option_c,
        "option_d": question.option_d,
        "correct": question.correct,
        "accepted": question.correct,
        "explanation": question.explanation,
    }


def first_version(question: Question) -> QuestionVersion:
    """Version 1 of a question (unsaved): its content as imported."""
    return QuestionVersion(
        question=question,
        number=1,
        wording=1,
        change=VersionChange.ORIGINAL,
        **original_content(question),
    )


class VersionError(ValueError):
    """A version cannot be made as asked; the message says why, in words."""


def first_versions_create(question_ids: Iterable[int]) -> int:
    """Version 1 of each of these questions that has none (the importers' bulk path)."""
    ids = set(question_ids)
    have = set(
        QuestionVersion.objects.filter(question_id__in=ids, number=1).values_list(
            "question_id", flat=True
        )
    )
    missing = Question.objects.filter(pk__in=ids - have).order_by("pk")
    created = QuestionVersion.objects.bulk_create(
        [first_version(question) for question in missing], batch_size=2000
    )
    return len(created)


def ensure_first_version(question: Question) -> QuestionVersion:
    """Version 1 of `question`, made now if it has none (a question created by a path that
    wrote no version: a shell, an old fixture)."""
    found = QuestionVersion.objects.filter(question=question, number=1).first()
    if found is not None:
        return found
    version = first_version(question)
    with transaction.atomic():
        Question.objects.select_for_update().filter(pk=question.pk).first()
        found = QuestionVersion.objects.filter(question=question, number=1).first()
        if found is not None:
            return found
        version.save()
    return version


def normalised_accepted(key: str, accepted: Iterable[str]) -> str:
    """The accepted answers as stored: their letters in order, the key among them."""
    letters = {letter.strip().upper() for letter in accepted if letter and letter.strip()}
    letters.add(key)
    return "".join(letter for letter in LETTERS if letter in letters)


def checked_content(content: dict[str, str]) -> dict[str, str]:
    """A version's content, or VersionError naming what is wrong with it."""
    for name in WORDING_FIELDS:
        if not str(content.get(name, "")).strip():
            raise VersionError(f"{VERSION_FIELD_LABELS[name]} cannot be empty.")
    key = content.get("correct", "")
    if key not in LETTERS:
        raise VersionError("The key must be one of A, B, C, D.")
    if content.get("accepted", "") not in ACCEPTED_SETS or key not in content["accepted"]:
        raise VersionError("The accepted answers must be letters A-D, the key among them.")
    return content


def change_of(before: dict[str, str], after: dict[str, str]) -> str:
    """What `after` changes against `before` (readerstudy.vocabulary.VersionChange)."""
    if any(before[name] != after[name] for name in WORDING_FIELDS):
        return VersionChange.WORDING
    if any(before[name] != after[name] for name in KEY_FIELDS):
        return VersionChange.KEY
    return VersionChange.EXPLANATION


def _wording_of(versions: list[QuestionVersion], content: dict[str, str], number: int) -> int:
    words = [content[name] for name in WORDING_FIELDS]
    for version in versions:
        if [getattr(version, name) for name in WORDING_FIELDS] == words:
            return version.wording
    return number


@transaction.atomic
def version_create(
    *,
    question: Question,
    changes: dict[str, str],
    base: int | None = None,
    study: ReaderStudy | None = None,
    decided_by=None,
    rule: str = "",
    error_type: str = "",
    note: str = "",
    reverses: QuestionVersion | None = None,
    created_at: datetime | None = None,
) -> QuestionVersion:
    """The next version of `question`: the current one with `changes` applied. `base`: the
    version the changes were proposed against; if a field they change has changed since,
    VersionError (the proposal must be made again against what is there now). The question's
    row is locked, so two decisions at once number their versions one after the other."""
    Question.objects.select_for_update().get(pk=question.pk)
    ensure_first_version(question)
    versions = list(QuestionVersion.objects.filter(question=question).order_by("number"))
    current = versions[-1]
    unknown = set(changes) - set(VERSION_FIELDS)
    if unknown:
        raise VersionError(f"Not a field of a question: {', '.join(sorted(unknown))}.")
    if base is not None and base != current.number:
        then = next((v for v in versions if v.number == base), None)
        moved = [
            name
            for name in changes
            if then is None or getattr(then, name) != getattr(current, name)
        ]
        if moved:
            labels = ", ".join(VERSION_FIELD_LABELS[name].lower() for name in moved)
            raise VersionError(
                f"The question changed since this was proposed (now version {current.number}: "
                f"its {labels}); propose it again against what is there now."
            )
    before = current.content()
    after = checked_content({**before, **changes})
    if after == before:
        raise VersionError("This changes nothing in the question as it is now.")
    number = current.number + 1
    extra = {"created_at": created_at} if created_at is not None else {}
    return QuestionVersion.objects.create(
        question=question,
        number=number,
        wording=_wording_of(versions, after, number),
        change=change_of(before, after),
        error_type=error_type,
        study=study,
        decided_by=decided_by,
        rule=rule,
        note=note,
        reverses=reverses,
        **after,
        **extra,
    )


def reversal_changes(version: QuestionVersion) -> dict[str, str]:
    """What undoes `version`: each field it changed, back to its value before it ({} when
    that is so already). Refused
    (VersionError) for version 1, and when a later version changed one of those fields again
    (reverse that one first)."""
    if version.number == 1:
        raise VersionError("Version 1 is the question as imported: there is nothing to reverse.")
    versions = {
        v.number: v for v in QuestionVersion.objects.filter(question_id=version.question_id)
    }
    before = versions[version.number - 1].content()
    made = version.content()
    current = versions[max(versions)].content()
    changed = [name for name in VERSION_FIELDS if before[name] != made[name]]
    if all(current[name] == before[name] for name in changed):
        return {}  # undone already (by a reversal, or a later correction back)
    later = [name for name in changed if current[name] != made[name]]
    if later:
        labels = ", ".join(VERSION_FIELD_LABELS[name].lower() for name in later)
        raise VersionError(
            f"A later version changed the {labels} again; reverse that version first."
        )
    undo = {name: before[name] for name in changed}
    if "correct" in undo or "accepted" in undo:  # the key and its set go back together
        undo["correct"], undo["accepted"] = before["correct"], before["accepted"]
    return {name: value for name, value in undo.items() if value != current[name]}


def released_versions(question: Question, history) -> list[QuestionVersion]:
    """The versions of an imported corrected bank's question (readerstudy.rexvqa.
    ParsedVersion, in order), unsaved: each as released, its wording and kind of change
    worked out as version_create would."""
    out: list[QuestionVersion] = []
    for parsed in history:
        content = checked_content(
            {
                "text": parsed.text,
                **dict(zip(OPTION_FIELDS, parsed.options, strict=True)),
                "correct": parsed.correct,
                "accepted": parsed.accepted,
                "explanation": parsed.explanation,
            }
        )
        number = parsed.number
        when = parse_datetime(parsed.decided_at) if parsed.decided_at else None
        extra = {"created_at": when} if when is not None and timezone.is_aware(when) else {}
        out.append(
            QuestionVersion(
                question=question,
                number=number,
                wording=_wording_of(out, content, number),
                change=VersionChange.ORIGINAL
                if number == 1
                else change_of(out[-1].content(), content),
                error_type=parsed.error_type if number > 1 else "",
                rule=parsed.decided if number > 1 else "",
                note=parsed.note,
                **content,
                **extra,
            )
        )
    return out


def link_reversals(versions: list[QuestionVersion], history) -> None:
    """Point each saved released version at the version it reverses (by number)."""
    by_number = {v.number: v for v in versions}
    for version, parsed in zip(versions, history, strict=True):
        if parsed.reverses and parsed.reverses in by_number:
            version.reverses = by_number[parsed.reverses]
            version.save(update_fields=["reverses"])
