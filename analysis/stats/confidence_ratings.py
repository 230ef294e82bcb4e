"""Readers' answers with a confidence, as the ROC and calibration analyses read them.

A study with a confidence scale asks a confidence with every answer: how sure the reader is
that the answer they chose is right. A question bank may declare a question binary: one of
its options says the finding is present (`present_option`, a letter), every other option that it
is absent. How (answer, confidence) becomes a binary question's rating is the scale's own
rule (`RatingScale.roc_rating`, declared once with the scale: readerstudy.vocabulary), and
its words (`RatingScale.rule`) go into every output that rests on it. Any rule that orders
the questions as the reader's answer and confidence do gives the same empirical AUC (a rank
statistic). A question's truth is 1 when its key (the question's key under the key policy,
one truth for every reader) is the positive option; a key accepting both the positive option
and another (several valid answers) gives none, and the question is left out of the ROC.

Input is long, one row per (reader, arm, question), as the design frame gives it:

    reader, arm, case_id, question_id, answer, correct_answer, present_option,
    confidence

`present_option` is the declared letter of a binary question (empty for a multiple-choice one);
`confidence` is empty where the reader gave none. A binary question a reader did not answer,
or answered without a confidence, is not rated: it is left out of that reader's AUC (as
MRMCaov leaves out a reader's unrated cases) and counted in `roc_ratings`' counts.

On a scale of probabilities (not `ordinal`: 0-100, the chance in per cent that the answer is
right) confidence / 100 is also the probability the calibration analyses read.
"""

from __future__ import annotations

from typing import Protocol

import numpy as np
import pandas as pd

from analysis.stats.frame import ACCEPTED, LETTERS, AnalysisInputError, right

PRESENT_OPTION = "present_option"  # a binary question's option saying the finding is present
ANSWER_COLUMNS = ("reader", "arm", "case_id", "question_id", "answer", "correct_answer")
COUNT_COLUMNS = [
    "reader",
    "arm",
    "binary_questions",
    "rated",
    "positives",
    "negatives",
    "no_answer",
    "no_confidence",
    "no_truth",
]
CONFIDENCE_COLUMNS = ["rater", "arm", "case_id", "question_id", "confidence", "correct"]
PROBABILITY_COLUMNS = ["rater", "arm", "case_id", "question_id", "probability", "outcome"]


class RatingScale(Protocol):
    """A confidence scale as these analyses read it (readerstudy.vocabulary.Scale): whole
    points `lowest`..`highest`, labelled points, `ordinal` (else a probability in per cent),
    the rule making a binary question's rating and that rule in words."""

    lowest: int
    highest: int
    labels: dict[int, str]
    ordinal: bool

    def roc_rating(self, *, present: bool, confidence: int) -> float: ...

    @property
    def rule(self) -> str: ...


def describe_scale(scale: RatingScale) -> str:
    """The scale in words, with its labelled points."""
    labels = ", ".join(f"{point} {label}" for point, label in sorted(scale.labels.items()))
    kind = "ordinal points" if scale.ordinal else "per cent, the chance the answer is right"
    return (
        f"{scale.lowest}–{scale.highest} ({kind}; {labels})"
        if labels
        else (f"{scale.lowest}–{scale.highest} ({kind})")
    )


def ratings_of(scale: RatingScale, present: np.ndarray, confidence: np.ndarray) -> np.ndarray:
    """`scale.roc_rating` per row (evaluated once per distinct answer and confidence)."""
    present = np.asarray(present, dtype=bool)
    confidence = np.asarray(confidence, dtype=float)
    out = np.full(len(present), np.nan)
    rated = ~np.isnan(confidence)
    pairs = set(zip(present[rated].tolist(), confidence[rated].astype(int).tolist(), strict=True))
    table = {(p, c): float(scale.roc_rating(present=p, confidence=c)) for p, c in pairs}
    out[rated] = [
        table[(p, int(c))] for p, c in zip(present[rated], confidence[rated], strict=True)
    ]
    return out


def answer_probability(scale: RatingScale, confidence: np.ndarray) -> np.ndarray | None:
    """The reader's probability that their answer is right (a scale of probabilities in per
    cent), else None."""
    if scale.ordinal:
        return None
    return np.asarray(confidence, dtype=float) / 100.0


def _check(frame: pd.DataFrame, scale: RatingScale) -> pd.Series:
    missing = [c for c in (*ANSWER_COLUMNS, "confidence") if c not in frame.columns]
    if missing:
        raise AnalysisInputError(f"missing column(s): {', '.join(missing)}")
    confidence = pd.to_numeric(frame["confidence"], errors="coerce")
    given = frame["confidence"].notna() & (frame["confidence"].astype(str) != "")
    bad = given & (confidence.isna() | ~confidence.between(scale.lowest, scale.highest))
    if bad.any():
        first = frame.loc[bad].iloc[0]
        raise AnalysisInputError(
            f"{int(bad.sum())} confidence value(s) outside the scale {scale.lowest}–"
            f"{scale.highest} "
            f"(first: reader {first['reader']}, question {first['question_id']}: "
            f"{first['confidence']!r})"
        )
    return confidence


def _positive(frame: pd.DataFrame) -> pd.Series:
    """Each row's declared positive letter, None for a multiple-choice question."""
    if PRESENT_OPTION not in frame.columns:
        return pd.Series(None, index=frame.index, dtype=object)
    positive = frame[PRESENT_OPTION].where(frame[PRESENT_OPTION].notna(), None)
    positive = positive.map(lambda v: v if v else None)
    bad = positive.notna() & ~positive.isin(LETTERS)
    if bad.any():
        raise AnalysisInputError(
            f"{int(bad.sum())} present option(s) not a letter A-D "
            f"(first: {positive[bad].iloc[0]!r})"
        )
    return positive


def _no_truth(rows: pd.DataFrame, positive: pd.Series) -> pd.Series:
    """Per binary row, whether its key accepts both the 'present' option and an 'absent' one
    (an expert's 'several valid answers'): the finding is then neither present nor absent."""
    if ACCEPTED not in rows.columns:
        return pd.Series(False, index=rows.index)
    accepted = rows[ACCEPTED].fillna("").astype(str)
    return pd.Series(
        [
            p in letters and any(other != p for other in letters)
            for letters, p in zip(accepted, positive, strict=True)
        ],
        index=rows.index,
        dtype=bool,
    )


def operating_points(ratings: pd.DataFrame) -> pd.DataFrame:
    """Per modality and rater, the operating point of the answers themselves ('present'
    answered): sensitivity (tpr) over the rated positives, 1 - specificity (fpr) over the
    rated negatives; `note` says which of them a rater without positives or negatives lacks."""
    rows = []
    for (modality, reader), part in ratings.groupby(["modality", "reader"], sort=False):
        positive = part["truth"] == 1
        lacking = [
            why
            for found, why in (
                (positive.any(), "no positive question rated: no sensitivity"),
                ((~positive).any(), "no negative question rated: no false-positive rate"),
            )
            if not found
        ]
        rows.append(
            {
                "modality": modality,
                "reader": reader,
                "positives": int(positive.sum()),
                "negatives": int((~positive).sum()),
                "tpr": part.loc[positive, "present"].mean() if positive.any() else np.nan,
                "fpr": part.loc[~positive, "present"].mean() if (~positive).any() else np.nan,
                "note": "; ".join(lacking),
            }
        )
    columns = ["modality", "reader", "positives", "negatives", "tpr", "fpr", "note"]
    return pd.DataFrame(rows, columns=columns)


def roc_ratings(frame: pd.DataFrame, scale: RatingScale) -> tuple[pd.DataFrame, pd.DataFrame]:
    """(ratings, counts): the binary questions' ratings, long (reader, modality = arm,
    case_id, question_id, truth, rating: `roc_frame`'s input), and per reader and arm the
    binary questions, those rated (positives, negatives) and those left out (no answer; an
    answer without a confidence; a key accepting both 'present' and 'absent': no truth). See
    the module docstring for the rule."""
    confidence = _check(frame, scale)
    positive = _positive(frame)
    binary = positive.notna()
    rows = frame[binary]
    confidence, positive = confidence[binary], positive[binary]
    answered = rows["answer"].notna() & (rows["answer"].astype(str) != "")
    no_truth = _no_truth(rows, positive)
    rated = answered & confidence.notna() & ~no_truth
    truth = (rows["correct_answer"] == positive).astype(int)
    ratings = pd.DataFrame(
        {
            "reader": rows["reader"].astype(str),
            "modality": rows["arm"].astype(str),
            "case_id": rows["case_id"],
            "question_id": rows["question_id"],
            "truth": truth,
            "rating": ratings_of(scale, rows["answer"] == positive, confidence.to_numpy()),
            "present": (rows["answer"] == positive).astype(int),
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
                "no_truth": (answered & confidence.notna() & no_truth).astype(int),
            }
        )
        .groupby(["reader", "arm"], sort=True)
        .sum()
        .reset_index()
    )
    return ratings, counts[COUNT_COLUMNS]


def confidence_answers(frame: pd.DataFrame, scale: RatingScale) -> pd.DataFrame:
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


def reader_probabilities(frame: pd.DataFrame, scale: RatingScale) -> pd.DataFrame:
    """On a percent scale, each answer's stated probability of being right and whether it
    was (`calibration`'s input, event "the chosen answer is correct"); empty otherwise."""
    answers = confidence_answers(frame, scale)
    probability = answer_probability(scale, answers["confidence"].to_numpy())
    if probability is None:
        return pd.DataFrame(columns=PROBABILITY_COLUMNS)
    return answers.assign(probability=probability, outcome=answers["correct"])[PROBABILITY_COLUMNS]
