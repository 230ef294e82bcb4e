"""Pacing: how long a reader's remaining cases will take at their own pace, and how long the
whole study is expected to take. Computed here, once, for the reader's top bar, the save
receipt, the instructions and the PI dashboard; the page's script only shows the words.

A reader's pace is the median visible time per case over their own answers (the time the page
measured while the case was on screen and not paused, as stored, capped by MAX_CASE_TIME_MS).
The median, not the mean: one case left open during a phone call should not move the estimate.
"""

from __future__ import annotations

import statistics
from dataclasses import dataclass

from django.conf import settings

from annotation.models import Answer
from readerstudy.models import ReaderStudy

# Answers needed before a reader's own pace is trusted for an estimate.
MIN_PACE_ANSWERS = 3


@dataclass(frozen=True)
class Pace:
    """A reader's pace: the median time per answered case and the reading time left."""

    answered: int
    left: int
    per_case_ms: float | None

    @property
    def left_ms(self) -> int | None:
        if self.left == 0:
            return 0
        if self.per_case_ms is None or self.answered < MIN_PACE_ANSWERS:
            return None
        return round(self.left * self.per_case_ms)

    @property
    def text(self) -> str:
        """What the reader's top bar says."""
        if self.left == 0:
            return ""
        if self.left_ms is None:
            return "time left: after a few cases"
        return f"{approximately(self.left_ms)} left at your pace"

    def as_json(self) -> dict:
        return {"left_ms": self.left_ms, "per_case_ms": self.per_case_ms, "text": self.text}


def pace_of(times_ms: list[int], left: int) -> Pace:
    """The pace from a reader's answer times (ms) and the cases they have left."""
    median = float(statistics.median(times_ms)) if times_ms else None
    return Pace(answered=len(times_ms), left=max(left, 0), per_case_ms=median)


def reader_pace(study: ReaderStudy, reader, left: int) -> Pace:
    """`reader`'s pace over their answers in this study (every session), `left` cases to go."""
    times = list(
        Answer.objects.filter(item__study=study, reader=reader)
        .exclude(choice="")
        .values_list("time_ms", flat=True)
    )
    return pace_of(times, left)


# The study's expected time per case is the median of its latest answers (bounded, so the
# instructions page costs the same in a study of 40,000 answers).
EXPECTED_FROM_LATEST = 2000


def expected_case_ms(study: ReaderStudy) -> float:
    """What a case of this study is expected to take: the median over the readers' latest
    answers, or the policy's READER_EXPECTED_CASE_MS before enough answers exist."""
    times = list(
        Answer.objects.filter(item__study=study)
        .exclude(choice="")
        .order_by("-updated_at")
        .values_list("time_ms", flat=True)[:EXPECTED_FROM_LATEST]
    )
    if len(times) < MIN_PACE_ANSWERS:
        return float(settings.READER_EXPECTED_CASE_MS)
    return float(statistics.median(times))


def approximately(ms: float) -> str:
    """A duration as an estimate: "about 25 min", "about 1 h 40 min", "under a minute"."""
    minutes = round(ms / 60_000)
    if minutes < 1:
        return "under a minute"
    if minutes < 60:
        return f"about {minutes} min"
    hours, minutes = divmod(minutes, 60)
    if minutes == 0:
        return f"about {hours} h"
    return f"about {hours} h {minutes:02d} min"


@dataclass(frozen=True)
class Expected:
    """What the instructions say about the study's length."""

    cases: int
    per_case_ms: float
    break_minutes: int

    @property
    def total_ms(self) -> float:
        return self.cases * self.per_case_ms

    @property
    def text(self) -> str:
        cases = f"{self.cases} case{'s' if self.cases != 1 else ''}"
        return (
            f"{cases}: expect {approximately(self.total_ms)} of reading"
            f" (about {round(self.per_case_ms / 1000)} s a case)."
        )


def expected_for(study: ReaderStudy, cases: int) -> Expected:
    return Expected(cases, expected_case_ms(study), study.break_minutes)
