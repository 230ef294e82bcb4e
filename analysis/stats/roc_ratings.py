"""Readers' answers with a confidence, as the ROC and calibration analyses read them.

A study with a confidence scale asks a confidence with every answer: how sure the reader is
that the answer they chose is right. A question bank may declare a question binary: one of
its options says the finding is present (`positive`, a letter), every other option that it
is absent. The rule that turns (answer, confidence) into a rating, stated once here and
written into every output that rests on it (`ConfidenceScale.rule`):

- **points** (an ordinal scale of n labelled points, low..high, e.g. 1-5): the answer decides
  the half of a 2n-point scale, the confidence the distance from its middle. "Present" with
  confidence c rates n + (c - low) + 1, "absent" rates n - (c - low): on a 1-5 scale, absent
  and sure (5) is 1, absent and unsure (1) is 5, present and unsure 6, present and sure 10.
  No reader rating ties across the two answers.
- **percent** (0-100: the reader's probability, in %, that their answer is right): the rating
  is the reader's probability that the finding is present, c/100 after "present" and
  1 - c/100 after "absent"; it is also the probability the calibration analyses read.

Either rating orders the questions as the reader's answer and confidence do, so the empirical
AUC (a rank statistic) is the same under any rule that keeps that order. A question's truth is
1 when its key (the question's key under the key policy, one truth for every reader) is the
positive option.

Input is long, one row per (reader, arm, question), as the design frame gives it:

    reader, arm, case_id, question_id, answer, correct_answer, positive, confidence

`positive` is the declared letter of a binary question (empty for a multiple-choice one);
`confidence` is empty where the reader gave none. A binary question a reader did not answer,
or answered without a confidence, is not rated: it is left out of that reader's AUC (as
MRMCaov leaves out a reader's unrated cases) and counted in `rating_counts`.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from analysis.stats.frame import LETTERS, AnalysisInputError, right

ANSWER_COLUMNS = ("reader", "arm", "case_id", "question_id", "answer", "correct_answer")
RATING_FRAME_COLUMNS = ["reader", "modality", "case_id", "question_id", "truth", "rating"]
COUNT_COLUMNS = [
    "reader",
    "arm",
    "binary_questions",
    "rated",
    "positives",
    "negatives",
    "no_answer",
    "no_confidence",
]
CONFIDENCE_COLUMNS = ["rater", "arm", "case_id", "question_id", "confidence", "correct"]
PROBABILITY_COLUMNS = ["rater", "arm", "case_id", "question_id", "probability", "outcome"]


@dataclass(frozen=True)
class ConfidenceScale:
    """A study's confidence scale: `low`..`high` in whole steps; `percent` when it is the
    reader's probability (%) that their answer is right (0-100), else ordinal points."""

    low: int
    high: int
    percent: bool = False
    labels: tuple[str, ...] = ()  # the points' labels, low first (ordinal scales)

    def __post_init__(self):
        if self.high <= self.low:
            raise AnalysisInputError("a confidence scale needs high > low")
        if self.percent and (self.low, self.high) != (0, 100):
            raise AnalysisInputError("a percent scale runs 0-100")

    @property
    def points(self) -> int:
        return self.high - self.low + 1

    def describe(self) -> str:
        if self.percent:
            return "0–100: the reader's probability (%) that their answer is right"
        labels = ""
        if self.labels:
            labels = " (" + ", ".join(
                f"{self.low + i} {label}" for i, label in enumerate(self.labels)
            ) + ")"
        return f"{self.low}–{self.high}, {self.points} ordinal points{labels}"

    def rule(self) -> str:
        """How a binary question's rating is made (methods.md, README.txt, every ROC table)."""
        n = self.points
        if self.percent:
            return (
                "rating of a binary question = the reader's probability that the finding is "
                "present: confidence/100 after the 'present' option, 1 − confidence/100 after "
                "an 'absent' one"
            )
        return (
            f"rating of a binary question on a {2 * n}-point scale: the answer decides the "
            f"half, the confidence the distance from the middle ('present' with confidence c "
            f"= {n} + (c − {self.low}) + 1, 'absent' = {n} − (c − {self.low}); 1 = absent, "
            f"most sure; {2 * n} = present, most sure)"
        )

    def rating(self, present: np.ndarray, confidence: np.ndarray) -> np.ndarray:
        """The rule above, per row: `present` True where the answer is the positive option."""
        present = np.asarray(present, dtype=bool)
        confidence = np.asarray(confidence, dtype=float)
        if self.percent:
            return np.where(present, confidence / 100.0, 1.0 - confidence / 100.0)
        step = confidence - self.low
        return np.where(present, self.points + step + 1.0, self.points - step)

    def probability(self, confidence: np.ndarray) -> np.ndarray | None:
        """The reader's probability that their answer is right (percent scales), else None."""
        if not self.percent:
            return None
        return np.asarray(confidence, dtype=float) / 100.0


def _check(frame: pd.DataFrame, scale: ConfidenceScale) -> pd.Series:
    missing = [c for c in (*ANSWER_COLUMNS, "confidence") if c not in frame.columns]
    if missing:
        raise AnalysisInputError(f"missing column(s): {', '.join(missing)}")
    confidence = pd.to_numeric(frame["confidence"], errors="coerce")
    given = frame["confidence"].notna() & (frame["confidence"].astype(str) != "")
    bad = given & (confidence.isna() | ~confidence.between(scale.low, scale.high))
    if bad.any():
        first = frame.loc[bad].iloc[0]
        raise AnalysisInputError(
            f"{int(bad.sum())} confidence value(s) outside the scale {scale.low}–{scale.high} "
            f"(first: reader {first['reader']}, question {first['question_id']}: "
            f"{first['confidence']!r})"
        )
    return confidence


def _positive(frame: pd.DataFrame) -> pd.Series:
    """Each row's declared positive letter, None for a multiple-choice question."""
    if "positive" not in frame.columns:
        return pd.Series(None, index=frame.index, dtype=object)
    positive = frame["positive"].where(frame["positive"].notna(), None)
    positive = positive.map(lambda v: v if v else None)
    bad = positive.notna() & ~positive.isin(LETTERS)
    if bad.any():
        raise AnalysisInputError(
            f"{int(bad.sum())} positive option(s) not a letter A-D "
            f"(first: {positive[bad].iloc[0]!r})"
        )
    return positive


def is_binary(frame: pd.DataFrame) -> np.ndarray:
    """Per row, whether its question is declared binary."""
    return _positive(frame).notna().to_numpy()


def roc_ratings(
    frame: pd.DataFrame, scale: ConfidenceScale
) -> tuple[pd.DataFrame, pd.DataFrame]:
    """(ratings, counts): the binary questions' ratings, long (reader, modality = arm,
    case_id, question_id, truth, rating: `roc_frame`'s input), and per reader and arm the
    binary questions, those rated (positives, negatives) and those left out (no answer; an
    answer without a confidence). See the module docstring for the rule."""
    confidence = _check(frame, scale)
    positive = _positive(frame)
    binary = positive.notna()
    rows = frame[binary]
    confidence, positive = confidence[binary], positive[binary]
    answered = rows["answer"].notna() & (rows["answer"].astype(str) != "")
    rated = answered & confidence.notna()
    truth = (rows["correct_answer"] == positive).astype(int)
    ratings = pd.DataFrame(
        {
            "reader": rows["reader"].astype(str),
            "modality": rows["arm"].astype(str),
            "case_id": rows["case_id"],
            "question_id": rows["question_id"],
            "truth": truth,
            "rating": scale.rating(rows["answer"] == positive, confidence.to_numpy()),
        }
    )[rated.to_numpy()].reset_index(drop=True)
    counts = (
        pd.DataFrame(
            {
                "reader": rows["reader"].astype(str),
                "arm": rows["arm"].astype(str),
                "binary_questions": 1,
                "rated": rated.astype(int),
                "positives": (rated & (truth == 1)).astype(int),
                "negatives": (rated & (truth == 0)).astype(int),
                "no_answer": (~answered).astype(int),
                "no_confidence": (answered & confidence.isna()).astype(int),
            }
        )
        .groupby(["reader", "arm"], sort=True)
        .sum()
        .reset_index()
    )
    return ratings, counts[COUNT_COLUMNS]


def confidence_answers(frame: pd.DataFrame, scale: ConfidenceScale) -> pd.DataFrame:
    """Every answered question with a confidence (binary or not): rater, arm, case_id,
    question_id, confidence, correct (scored as every accuracy table scores it: `right`)."""
    confidence = _check(frame, scale)
    keep = (frame["answer"].notna() & confidence.notna()).to_numpy()
    rows = frame[keep]
    return pd.DataFrame(
        {
            "rater": rows["reader"].astype(str),
            "arm": rows["arm"].astype(str),
            "case_id": rows["case_id"],
            "question_id": rows["question_id"],
            "confidence": confidence[keep].to_numpy(),
            "correct": right(rows).astype(int),
        }
    ).reset_index(drop=True)[CONFIDENCE_COLUMNS]


def reader_probabilities(frame: pd.DataFrame, scale: ConfidenceScale) -> pd.DataFrame:
    """On a percent scale, each answer's stated probability of being right and whether it
    was (`calibration`'s input, event "the chosen answer is correct"); empty otherwise."""
    answers = confidence_answers(frame, scale)
    probability = scale.probability(answers["confidence"].to_numpy())
    if probability is None:
        return pd.DataFrame(columns=PROBABILITY_COLUMNS)
    return answers.assign(probability=probability, outcome=answers["correct"])[
        PROBABILITY_COLUMNS
    ]
