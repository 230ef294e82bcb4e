"""Expert reviews: the write service, who may read whose review, and the review page's reads.

The queue that ranks questions for review uses AI predictions, so it lives a layer up
(analysis.triage).
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass

import pandas as pd
from django.db import transaction
from django.db.models import Q, QuerySet

from annotation.models import ExpertReview
from annotation.sessions import counted_answers, counted_scope
from readerstudy.models import AuditEvent, Membership, ReaderStudy, Role, StudyQuestion
from readerstudy.vocabulary import (
    PROBLEM_DECISIONS,
    RATING_FIELDS,
    RATING_RANGE,
    Alignment,
    Decision,
    Difficulty,
    ReviewFlag,
)

# Who opens a study's review pages: its experts, and its PIs (who read but do not review).
REVIEWERS = [Role.EXPERT, Role.PI]


class ReviewRejected(ValueError):
    pass


@transaction.atomic
def review_submit(
    *,
    expert,
    item: StudyQuestion,
    flags: list[str],
    other_text: str = "",
    ratings: dict[str, int | None],
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
    ratings = {name: ratings.get(name) for name in RATING_FIELDS} if ratings else {}
    if set(ratings) != set(RATING_FIELDS) or not all(
        v is None or int(v) in RATING_RANGE for v in ratings.values()
    ):
        raise ReviewRejected("Rate each quality from 1 to 5, or leave it not rated.")
    if difficulty not in Difficulty.values or decision not in Decision.values:
        raise ReviewRejected("Choose a difficulty and a decision.")
    judged_fine = not flags and decision not in PROBLEM_DECISIONS
    if judged_fine and any(v is None for v in ratings.values()):
        raise ReviewRejected(
            "Rate each of the four qualities from 1 to 5 (ratings may stay unset only when "
            "you flag a problem or reject the question)."
        )
    values = {f"flag_{flag}": flag in flags for flag in ReviewFlag.values}
    values.update({k: None if v is None else int(v) for k, v in ratings.items()})
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


def may_see_others(study: ReaderStudy, user) -> bool | set[int]:
    """Whose reviews `user` may read, question by question: the review page's rule.

    True: every review (a PI who is not an expert of the study: they never review, so there
    is nothing to bias). Otherwise the ids of the study questions this expert has reviewed:
    an expert sees another expert's review of a question only once they saved their own.
    The rule is by person, whatever role a page serves them in: a PI who is also an expert
    gets the expert's view on the PI's pages and exports too.
    """
    if not Membership.objects.filter(study=study, user=user, role=Role.EXPERT).exists():
        return True
    return set(
        ExpertReview.objects.filter(item__study=study, expert=user).values_list(
            "item_id", flat=True
        )
    )


def reviews_hidden_from(study: ReaderStudy, user) -> tuple[int, int] | None:
    """For the pages that count reviews: None when `user` reads every review; else (how many
    questions they reviewed, how many the study has), the only ones whose colleagues'
    reviews they see, so a page can say why its counts are lower than the experts' work."""
    seen = may_see_others(study, user)
    if seen is True:
        return None
    return len(seen), StudyQuestion.objects.filter(study=study).count()


def visible_items_q(study: ReaderStudy, user, prefix: str = "") -> Q:
    """A filter on study questions (`prefix` + id) whose reviews `user` may read: every one,
    or the ones they reviewed. For counts over reviews (the PI dashboard)."""
    seen = may_see_others(study, user)
    return Q() if seen is True else Q(**{f"{prefix}id__in": seen})


def audit_visible_to(study: ReaderStudy, user) -> QuerySet[AuditEvent]:
    """The study's audit events `user` may read: a review's event carries its decision and
    flags (a correction's, what it proposes), so a PI who is also an expert sees a
    colleague's only once they reviewed that question themselves (the dashboard's audit list
    included)."""
    events = AuditEvent.objects.filter(study=study)
    seen = may_see_others(study, user)
    if seen is True:
        return events
    reviewed = StudyQuestion.objects.filter(id__in=seen).values_list(
        "question__source_id", flat=True
    )
    # A proposed correction, a vote on one and its decision carry what the expert judged too.
    judged = Q(action__startswith="review.") | Q(action__startswith="correction.")
    return events.exclude(judged & ~Q(actor=user) & ~Q(detail__question__in=list(reviewed)))


def reviews_visible_to(study: ReaderStudy, user) -> QuerySet[ExpertReview]:
    """The study's reviews `user` may read (see `may_see_others`); every view and API uses it."""
    reviews = ExpertReview.objects.filter(item__study=study)
    seen = may_see_others(study, user)
    if seen is True:
        return reviews
    return reviews.filter(Q(expert=user) | Q(item_id__in=seen))


@dataclass(frozen=True)
class ReaderFeedback:
    answered: int
    difficulty: dict[str, int]
    alignment: dict[str, int]
    comments: list[str]  # anonymised: no names, in submission order
    scope: str = ""  # whose answers count, in a two-arm study (`counted_scope`)


def reader_feedback(item: StudyQuestion) -> ReaderFeedback:
    """Readers' votes and comments on the question, counted as the queue counts them: one
    answer per reader (in a crossover, from the unaided session; `counted_answers`)."""
    study = item.study
    rows = list(
        counted_answers(study)
        .filter(item=item)
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
        scope=counted_scope(study),
    )


def reviews_frame(reviews: QuerySet[ExpertReview]) -> pd.DataFrame:
    rows = reviews.values(
        "item__question__source_id",
        "expert__username",
        "decision",
        *[f"flag_{f}" for f in ReviewFlag.values],
    )
    return pd.DataFrame(list(rows))
