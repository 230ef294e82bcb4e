"""Expert reviews: the write service and the reads for the queue and the review page."""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass

import pandas as pd
from django.db import transaction
from django.db.models import Count, Q

from annotation.agreement import panel_agreement
from annotation.models import Answer, ExpertReview
from readerstudy.models import AuditEvent, ReaderStudy, StudyQuestion
from readerstudy.vocabulary import (
    RATING_FIELDS,
    RATING_RANGE,
    Alignment,
    Decision,
    Difficulty,
    ReviewFlag,
)


class ReviewRejected(ValueError):
    pass


@transaction.atomic
def review_submit(
    *,
    expert,
    item: StudyQuestion,
    flags: list[str],
    other_text: str = "",
    ratings: dict[str, int],
    difficulty: str,
    decision: str,
    comment: str = "",
) -> ExpertReview:
    """Create or update this expert's review of the question (one per expert)."""
    unknown = set(flags) - set(ReviewFlag.values)
    if unknown:
        raise ReviewRejected(f"unknown flag(s): {', '.join(sorted(unknown))}")
    if ReviewFlag.OTHER in flags and not other_text.strip():
        raise ReviewRejected("Describe the 'other' problem.")
    if set(ratings) != set(RATING_FIELDS) or not all(
        int(v) in RATING_RANGE for v in ratings.values()
    ):
        raise ReviewRejected("Rate each of the four qualities from 1 to 5.")
    if difficulty not in Difficulty.values or decision not in Decision.values:
        raise ReviewRejected("Choose a difficulty and a decision.")
    values = {f"flag_{flag}": flag in flags for flag in ReviewFlag.values}
    values.update({k: int(v) for k, v in ratings.items()})
    values.update(
        other_text=other_text.strip() if ReviewFlag.OTHER in flags else "",
        difficulty=difficulty,
        decision=decision,
        comment=comment.strip(),
    )
    review, created = ExpertReview.objects.update_or_create(
        item=item, expert=expert, defaults=values
    )
    AuditEvent.objects.create(
        study=item.study,
        actor=expert,
        action="review.create" if created else "review.update",
        detail={"question": item.question.source_id, "decision": decision, "flags": flags},
    )
    return review


@dataclass(frozen=True)
class QueueRow:
    item: StudyQuestion
    complaints: int
    alignment_no: int
    alignment_partly: int
    comments: int
    reviews: int
    reviewed_by_me: bool


def review_queue(study: ReaderStudy, expert) -> list[QueueRow]:
    """Most reader complaints first (alignment "no"/"partly"), then unreviewed, then order."""
    items = (
        StudyQuestion.objects.filter(study=study)
        .select_related("question")
        .annotate(
            n_no=Count("answers", filter=Q(answers__alignment=Alignment.NO), distinct=True),
            n_partly=Count("answers", filter=Q(answers__alignment=Alignment.PARTLY), distinct=True),
            n_comments=Count("answers", filter=~Q(answers__comment=""), distinct=True),
            n_reviews=Count("reviews", distinct=True),
            n_mine=Count("reviews", filter=Q(reviews__expert=expert), distinct=True),
        )
    )
    rows = [
        QueueRow(
            item=i,
            complaints=i.n_no + i.n_partly,
            alignment_no=i.n_no,
            alignment_partly=i.n_partly,
            comments=i.n_comments,
            reviews=i.n_reviews,
            reviewed_by_me=i.n_mine > 0,
        )
        for i in items
    ]
    rows.sort(
        key=lambda r: (-r.complaints, -r.alignment_no, r.reviewed_by_me, r.reviews, r.item.position)
    )
    return rows


@dataclass(frozen=True)
class ReaderFeedback:
    answered: int
    difficulty: dict[str, int]
    alignment: dict[str, int]
    comments: list[str]  # anonymised: no names, in submission order


def reader_feedback(item: StudyQuestion) -> ReaderFeedback:
    rows = list(
        Answer.objects.filter(item=item)
        .order_by("created_at")
        .values_list("difficulty", "alignment", "comment")
    )
    difficulty = Counter(d for d, _, _ in rows if d)
    alignment = Counter(a for _, a, _ in rows if a)
    return ReaderFeedback(
        answered=len(rows),
        difficulty={label: difficulty.get(value, 0) for value, label in Difficulty.choices},
        alignment={label: alignment.get(value, 0) for value, label in Alignment.choices},
        comments=[c for _, _, c in rows if c],
    )


def reviews_frame(study: ReaderStudy) -> pd.DataFrame:
    rows = ExpertReview.objects.filter(item__study=study).values(
        "item__question__source_id",
        "expert__username",
        "decision",
        *[f"flag_{f}" for f in ReviewFlag.values],
    )
    return pd.DataFrame(list(rows))


def expert_agreement(study: ReaderStudy) -> list[dict]:
    """Agreement between experts on the decision and on each flag."""
    frame = reviews_frame(study)
    if frame.empty:
        return []
    frame = frame.rename(
        columns={"item__question__source_id": "question_id", "expert__username": "rater"}
    )
    out = [{"what": "Decision", **panel_agreement(frame.assign(answer=frame["decision"]))}]
    for value, label in ReviewFlag.choices:
        out.append({"what": label, **panel_agreement(frame.assign(answer=frame[f"flag_{value}"]))})
    return out
