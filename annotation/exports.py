"""CSV exports of what people recorded: expert reviews and reader feedback (for PIs)."""

from __future__ import annotations

from annotation.dashboard import is_fast
from annotation.models import Answer
from annotation.reviews import reviews_visible_to
from readerstudy.models import ReaderStudy
from readerstudy.platform.spreadsheets import csv_text
from readerstudy.vocabulary import ANSWER_FIELD_NAMES, RATING_FIELDS, ReviewFlag


def reviews_csv(study: ReaderStudy, *, viewer) -> str:
    """One row per expert review `viewer` may read (annotation.reviews.reviews_visible_to);
    `flags` in words, then one true/false column per flag (free text neutralised against
    formula injection)."""
    flags = [f"flag_{v}" for v in ReviewFlag.values]
    rows = [
        [
            "question_id",
            "task",
            "excluded",
            "expert",
            "flags",
            *flags,
            "other_text",
            *RATING_FIELDS,
            "difficulty",
            "decision",
            "comment",
            "updated_at",
        ]
    ]
    reviews = (
        reviews_visible_to(study, viewer)
        .select_related("item__question", "expert")
        .order_by("item__position", "expert__username")
    )
    for r in reviews:
        rows.append(
            [
                r.item.question.source_id,
                r.item.question.get_task_display(),
                r.item.excluded,
                r.expert.username,
                "; ".join(r.flag_labels),
                *[getattr(r, f) for f in flags],
                r.other_text,
                *[getattr(r, f) for f in RATING_FIELDS],
                r.difficulty,
                r.decision,
                r.comment,
                r.updated_at.isoformat(),
            ]
        )
    return csv_text(rows)


def feedback_csv(study: ReaderStudy) -> str:
    """One row per reader answer with its ratings and comment (not the correctness)."""
    rows = [
        [
            "question_id",
            "task",
            "excluded",
            "reader",
            *ANSWER_FIELD_NAMES,
            "time_ms",
            "too_fast",
            "revisions",
            "updated_at",
        ]
    ]
    if study.designed:  # which arm and session; a second read's first answer (canonical)
        rows[0] += ["arm", "session", "first_choice", "first_confidence"]
    answers = (
        Answer.objects.filter(item__study=study)
        .select_related("item__question", "reader")
        .order_by("item__position", "reader__username", "session")
    )
    for a in answers:
        row = [
            a.item.question.source_id,
            a.item.question.get_task_display(),
            a.item.excluded,
            a.reader.username,
            *(getattr(a, name) for name in ANSWER_FIELD_NAMES),
            a.time_ms,
            is_fast(a.time_ms),
            a.revisions_count,
            a.updated_at.isoformat(),
        ]
        if study.designed:
            row += [a.arm, a.session, a.first_choice, a.first_confidence]
        rows.append(row)
    return csv_text(rows)
