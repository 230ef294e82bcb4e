"""Reads for the PI dashboard: progress of readers and experts, flagged questions."""

from __future__ import annotations

import statistics
from collections import defaultdict
from dataclasses import dataclass
from datetime import datetime

from django.conf import settings
from django.db.models import Count, Max, Q

from annotation.fast_answers import too_fast
from annotation.models import Answer, ExpertReview, ReaderCompletion
from annotation.pacing import Pace
from annotation.reviews import visible_items_q
from annotation.sessions import counted_arm, session_opens, session_opens_words
from readerstudy.models import Membership, ReaderAssignment, ReaderStudy, Role, StudyQuestion
from readerstudy.vocabulary import Alignment, Decision, ReviewFlag


@dataclass(frozen=True)
class ReaderRow:
    """One reader's reading, in one arm when the study has two: a crossover's reader reads
    every case once per arm, so their answers, times and finish are counted per arm (a row
    over both would show 200 answers of 100 cases and mix aided with unaided times)."""

    username: str
    answered: int
    total: int
    median_ms: float | None
    total_ms: int
    last_activity: datetime | None
    finished: datetime | None
    # Answers given in less visible time than the policy's FAST_ANSWER_MS: too fast to be a
    # reading of the image (a key burst, a guess); counted here, marked in the export.
    fast: int = 0
    arm: str = ""  # set in a two-arm study only
    session: int | None = None  # the session this arm is read in (two-arm study)

    @property
    def percent(self) -> int:
        return round(100 * self.answered / self.total) if self.total else 0

    @property
    def left_ms(self) -> int | None:
        """Reading time left at this reader's own pace (annotation.pacing): 0 when done,
        None before they have answered enough to tell."""
        if self.finished:
            return 0
        median = self.median_ms
        pace = Pace(self.answered, max(self.total - self.answered, 0), median)
        return pace.left_ms


def is_fast(time_ms: int) -> bool:
    """An answer given in less visible time than the reading policy's minimum
    (annotation.fast_answers, the rule the analysis applies too)."""
    return bool(too_fast(time_ms, settings.FAST_ANSWER_MS))


def _reader_totals(study: ReaderStudy) -> dict[int, int]:
    """reader id -> cases they read per session: their group's and the anchor (split-plot);
    readers without a group are absent (they read every case)."""
    if not study.reader_groups:
        return {}
    anchors = study.items.filter(anchor=True).count()
    per_group = dict(
        study.items.filter(case_group__isnull=False, anchor=False)
        .values_list("case_group")
        .annotate(n=Count("id"))
        .values_list("case_group", "n")
    )
    return {
        reader_id: per_group.get(group, 0) + anchors
        for reader_id, group in ReaderAssignment.objects.filter(
            study=study, reader_group__isnull=False
        ).values_list("reader_id", "reader_group")
    }


def reader_rows(study: ReaderStudy) -> list[ReaderRow]:
    """Progress and reading time per reader; in a two-arm study one row per reader and arm.
    Only answers count (a second read's first answer alone is not one yet)."""
    items = study.items.count()
    totals = _reader_totals(study)
    two_arms = study.crossover
    readers = list(
        Membership.objects.filter(study=study, role=Role.READER)
        .order_by("user__username")
        .values_list("user_id", "user__username")
    )
    times: dict[tuple[int, str], list[int]] = defaultdict(list)
    last: dict[tuple[int, str], datetime] = {}
    names = dict(readers)
    for reader_id, username, arm, time_ms, updated in (
        Answer.objects.filter(item__study=study)
        .exclude(choice="")
        .values_list("reader_id", "reader__username", "arm", "time_ms", "updated_at")
    ):
        key = (reader_id, arm if two_arms else "")
        names.setdefault(reader_id, username)
        times[key].append(time_ms)
        last[key] = max(last.get(key, updated), updated)
    finished = {
        (reader_id, session): at
        for reader_id, session, at in ReaderCompletion.objects.filter(study=study).values_list(
            "reader_id", "session", "finished_at"
        )
    }
    first_arm = dict(
        ReaderAssignment.objects.filter(study=study).values_list("reader_id", "first_arm")
    )
    order = [r for r, _ in readers] + sorted(
        (r for r in names if r not in dict(readers)), key=lambda r: names[r]
    )
    rows = []
    for reader_id in order:
        for arm in study.arm_list if two_arms else ("",):
            key = (reader_id, arm)
            session = None
            if two_arms:
                session = 1 if first_arm.get(reader_id, study.arm_list[0]) == arm else 2
            spent = times[key]
            rows.append(
                ReaderRow(
                    username=names[reader_id],
                    answered=len(spent),
                    total=totals.get(reader_id, items),
                    median_ms=statistics.median(spent) if spent else None,
                    total_ms=sum(spent),
                    last_activity=last.get(key),
                    finished=finished.get((reader_id, session or 1)),
                    fast=sum(1 for t in spent if is_fast(t)),
                    arm=arm,
                    session=session,
                )
            )
    return rows


def expert_rows(study: ReaderStudy) -> list[dict]:
    total = study.items.count()
    experts = Membership.objects.filter(study=study, role=Role.EXPERT).values_list(
        "user__username", flat=True
    )
    done = {
        row["expert__username"]: row
        for row in ExpertReview.objects.filter(item__study=study)
        .values("expert__username")
        .annotate(n=Count("id"), last=Max("updated_at"))
    }
    return [
        {
            "username": name,
            "reviewed": done.get(name, {}).get("n", 0),
            "total": total,
            "last": done.get(name, {}).get("last"),
        }
        for name in experts
    ]


FLAG_FIELDS = [(f"flag_{value}", label) for value, label in ReviewFlag.choices]


def flagged_items(study: ReaderStudy, *, viewer) -> tuple[list[dict], dict[str, int]]:
    """Questions any expert flagged or rejected, with counts per flag; and totals per flag.
    Reviews count only where `viewer` may read them (annotation.reviews.visible_items_q)."""
    visible = visible_items_q(study, viewer)
    # Reviews and answers are joined in one query, so every count is of distinct rows: without
    # distinct, one review of a question three readers answered counted three times.
    annotations = {
        field: Count("reviews", filter=Q(**{f"reviews__{field}": True}) & visible, distinct=True)
        for field, _ in FLAG_FIELDS
    }
    items = (
        StudyQuestion.objects.filter(study=study)
        .select_related("question", "excluded_by")
        .annotate(
            **annotations,
            n_reviews=Count("reviews", filter=visible, distinct=True),
            n_reject=Count(
                "reviews", filter=Q(reviews__decision=Decision.REJECT) & visible, distinct=True
            ),
            # Readers, from the session that counts (annotation.sessions): a crossover's
            # reader answers each case twice, the second time beside the model's answer.
            n_misfit=Count(
                "answers__reader",
                filter=Q(answers__alignment=Alignment.NO, answers__arm=counted_arm(study)),
                distinct=True,
            ),
        )
        .order_by("position")
    )
    rows, totals = [], {label: 0 for _, label in FLAG_FIELDS}
    for item in items:
        flags = {label: getattr(item, field) for field, label in FLAG_FIELDS}
        for label, n in flags.items():
            totals[label] += 1 if n else 0
        if any(flags.values()) or item.n_reject or item.excluded or item.n_misfit:
            rows.append(
                {
                    "item": item,
                    "flags": {k: v for k, v in flags.items() if v},
                    "reviews": item.n_reviews,
                    "rejects": item.n_reject,
                    "misfit": item.n_misfit,
                }
            )
    rows.sort(
        key=lambda r: (-(sum(r["flags"].values()) + r["rejects"] + r["misfit"]), r["item"].position)
    )
    return rows, totals


@dataclass(frozen=True)
class SessionRow:
    """One reader's progress in one session of a designed study."""

    username: str
    session: int
    arm: str
    group: int | None
    answered: int
    total: int
    finished: datetime | None
    opens_at: datetime | None  # session 2: when it opens (None: session 1 not finished)
    opens: str  # in words: "open" (session 1), the date, or the rule before it is known

    @property
    def percent(self) -> int:
        return round(100 * self.answered / self.total) if self.total else 0


def session_rows(study: ReaderStudy) -> list[SessionRow]:
    """Progress per reader per session, with the date each second session opens."""
    assignments = list(
        ReaderAssignment.objects.filter(
            study=study, reader__memberships__study=study, reader__memberships__role=Role.READER
        )
        .select_related("reader", "study")
        .order_by("reader__username")
    )
    items = study.items.count()
    anchors = study.items.filter(anchor=True).count()
    per_group = dict(
        study.items.filter(case_group__isnull=False)
        .values_list("case_group")
        .annotate(n=Count("id"))
        .values_list("case_group", "n")
    )
    answered = {
        (reader, session): n
        for reader, session, n in Answer.objects.filter(item__study=study)
        .exclude(choice="")
        .values_list("reader_id", "session")
        .annotate(n=Count("id"))
        .values_list("reader_id", "session", "n")
    }
    finished = {
        (reader, session): at
        for reader, session, at in ReaderCompletion.objects.filter(study=study).values_list(
            "reader_id", "session", "finished_at"
        )
    }
    rows = []
    for a in assignments:
        total = items if a.reader_group is None else per_group.get(a.reader_group, 0) + anchors
        for session in range(1, len(study.arm_list) + 1):
            first_done = finished.get((a.reader_id, 1))
            opens_at = session_opens(study, first_done) if session == 2 else None
            rows.append(
                SessionRow(
                    username=a.reader.username,
                    session=session,
                    arm=a.arm_of(session),
                    group=a.reader_group,
                    answered=answered.get((a.reader_id, session), 0),
                    total=total,
                    finished=finished.get((a.reader_id, session)),
                    opens_at=opens_at,
                    opens="open" if session == 1 else session_opens_words(study, opens_at),
                )
            )
    return rows
