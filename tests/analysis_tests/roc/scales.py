"""Confidence scales for the statistics' own tests, which run without Django: the shape of
readerstudy.vocabulary.Scale (what `analysis.stats.confidence_ratings.RatingScale` reads), with a
rule the tests choose. The study-level tests use the platform's own scales."""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass(frozen=True)
class Scale:
    lowest: int = 1
    highest: int = 5
    ordinal: bool = True
    labels: dict[int, str] = field(default_factory=dict)
    rule: str = "present: 5 + confidence; absent: 6 − confidence"

    def roc_rating(self, *, present: bool, confidence: int) -> float:
        if not self.ordinal:
            return float(confidence if present else 100 - confidence)
        points = self.highest - self.lowest + 1
        if present:
            return float(points + confidence - self.lowest + 1)
        return float(self.highest - confidence + 1)


FIVE = Scale()
PERCENT = Scale(0, 100, ordinal=False, rule="present: confidence; absent: 100 − confidence")
