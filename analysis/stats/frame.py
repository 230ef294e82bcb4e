"""Reader-study statistics as pure functions on pandas DataFrames (no Django needed).

Input is long format, one row per (question, rater):

    question_id, rater, answer, correct_answer, task    [+ category, case_id]

`answer` is "A".."D", or None/NaN when the rater gave no answer (a missing answer, or a
model's failed extraction). Two policies for missing answers, stated wherever results are shown:

- missing="wrong"   (default) a missing answer counts as incorrect; n is every question.
- missing="exclude" missing answers are dropped; n is the questions the rater answered.
  (The ReXVQA paper's reader accuracies, 166/198 and 153/198, drop two of 200 cases.)

Cohen's kappa uses pairwise deletion: each pair is compared on the questions both answered.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

import numpy as np
import pandas as pd

ALL = "All"
LETTERS = ("A", "B", "C", "D")
Missing = Literal["wrong", "exclude"]
REQUIRED = ("question_id", "rater", "answer", "correct_answer", "task")


class AnalysisInputError(ValueError):
    pass


@dataclass(frozen=True)
class Prepared:
    """The long frame as arrays: questions x raters answer codes (0-3, -1 = missing).

    Built once by `prepare`; every statistic below works on it, so a notebook that computes
    many tables can prepare once and pass the result instead of the DataFrame.
    """

    question_ids: np.ndarray
    raters: list[str]
    answers: np.ndarray  # int8, questions x raters
    truth: np.ndarray  # int8, questions; -1 where unknown
    attributes: dict[str, np.ndarray]  # per-question columns: task, category, case_id

    @property
    def present(self) -> np.ndarray:
        return self.answers >= 0

    @property
    def correct(self) -> np.ndarray:
        return (self.answers == self.truth[:, None]) & self.present


def _letter_codes(values: pd.Series) -> np.ndarray:
    codes = pd.Categorical(values, categories=LETTERS).codes.astype(np.int8)
    odd = (codes < 0) & values.notna().to_numpy()
    if odd.any():  # only unusual spellings (" b", "c") pay for string normalisation
        fixed = values[odd].map(lambda v: str(v).strip().upper())
        codes[odd] = pd.Categorical(fixed, categories=LETTERS).codes
    return codes


def prepare(df: pd.DataFrame | Prepared) -> Prepared:
    """Validate the long format and turn it into arrays (see module docstring)."""
    if isinstance(df, Prepared):
        return df
    missing = [c for c in REQUIRED if c not in df.columns]
    if missing:
        raise AnalysisInputError(f"missing column(s): {', '.join(missing)}")
    q_codes, q_ids = pd.factorize(df["question_id"])
    r_codes, raters = pd.factorize(df["rater"])
    if (q_codes < 0).any() or (r_codes < 0).any():
        raise AnalysisInputError("question_id and rater must not be empty")
    n_q, n_r = len(q_ids), len(raters)
    flat = q_codes.astype(np.int64) * n_r + r_codes
    counts = np.bincount(flat, minlength=n_q * n_r)
    if counts.max(initial=0) > 1:
        q, r = divmod(int(np.argmax(counts)), n_r)
        raise AnalysisInputError(f"more than one row for question/rater {[q_ids[q], raters[r]]}")
    answers = np.full((n_q, n_r), -1, dtype=np.int8)
    answers[q_codes, r_codes] = _letter_codes(df["answer"])
    truth_rows = _letter_codes(df["correct_answer"])
    truth = np.full(n_q, -1, dtype=np.int8)
    truth[q_codes] = truth_rows
    if (truth[q_codes] != truth_rows).any():
        raise AnalysisInputError("a question has different correct answers in different rows")
    attributes = {}
    for column in ("task", "category", "case_id"):
        if column in df.columns:
            values = np.empty(n_q, dtype=object)
            values[q_codes] = df[column].to_numpy(dtype=object)
            attributes[column] = values
    return Prepared(np.asarray(q_ids), [str(r) for r in raters], answers, truth, attributes)


def validate(df: pd.DataFrame) -> pd.DataFrame:
    """Check the long format (raises AnalysisInputError) and return it unchanged."""
    prepare(df)
    return df


def correct_wide(df: pd.DataFrame | Prepared, missing: Missing) -> pd.DataFrame:
    """Questions x raters: 1.0 correct, 0.0 wrong; NaN for a missing answer under "exclude"."""
    data = prepare(df)
    values = data.correct.astype(float)
    if missing == "exclude":
        values[~data.present] = np.nan
    return pd.DataFrame(values, index=data.question_ids, columns=data.raters)


def failed_extractions(df: pd.DataFrame | Prepared) -> pd.DataFrame:
    """Per rater: n questions, failed (missing answers), rate."""
    data = prepare(df)
    failed = (~data.present).sum(axis=0)
    n = np.full(len(data.raters), len(data.question_ids))
    return pd.DataFrame({"rater": data.raters, "n": n, "failed": failed, "rate": failed / n})
