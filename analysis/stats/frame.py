"""Reader-study statistics as pure functions on pandas DataFrames (no Django needed).

Input is long format, one row per (question, rater):

    question_id, rater, answer, correct_answer, task    [+ category, case_id, presented]

`answer` is "A".."D", or None/NaN/"" when the rater gave no answer (a missing answer, or a
model's failed extraction). Anything else ("E", "yes") is an error, and so is a question
without a correct answer: a typo must not turn into a silently wrong accuracy.

`case_id` is the X-ray (imaging study) a question is asked about. Several questions share one
X-ray, so they are not independent: every interval and test that resamples (jackknife,
bootstrap) leaves out or draws whole X-rays. With a `case_id` column every question must have
one; without the column each question is its own case (stated as the case unit).

`presented` (optional, default True) is False where the rater was never given the question —
a model with predictions for only part of the study. Such a question is "not predicted": it is
in no denominator of that rater under either policy, and it is counted apart from failed
extractions. Two policies for missing answers, stated wherever results are shown:

- missing="wrong"   (default) a missing answer counts as incorrect; n is every question.
- missing="exclude" missing answers are dropped; n is the questions the rater answered.

For example, in the ReXVQA paper's reader study (200 X-rays) MedGemma scores 83.84%
(166/198) and the best resident 77.27% (153/198): both on the 198 cases answered.

Cohen's kappa uses pairwise deletion: each pair is compared on the questions both answered.

`accepted` (optional) is what an answer is scored against: the letters counted correct for
that row ("B", or "BC" for a question with several valid answers), which may differ between
rows of one question (a reader shown earlier words keeps the key of those words). Without it
each row's only right answer is `correct_answer`. Every statistic asks `Prepared.correct` (or,
on a frame, `right`), so the scoring lives here once; `correct_answer` stays the question's key
(the item analysis's "key" and its wrong options).
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
ACCEPTED = "accepted"  # optional column: the letters counted correct for the row
NO_ANSWER = -1  # asked, no answer (or a failed extraction)
NOT_PRESENTED = -2  # never asked (a model without a prediction for the question)


class AnalysisInputError(ValueError):
    pass


@dataclass(frozen=True)
class Prepared:
    """The long frame as arrays: questions x raters answer codes.

    Codes are 0-3 for A-D, -1 for a missing answer, -2 for a question not presented to the
    rater. Built once by `prepare`; every statistic works on it, so a notebook that computes
    many tables can prepare once and pass the result instead of the DataFrame.
    """

    question_ids: np.ndarray
    raters: list[str]
    answers: np.ndarray  # int8, questions x raters
    truth: np.ndarray  # int8, questions (0-3)
    attributes: dict[str, np.ndarray]  # per-question columns: task, category, case_id
    cases: np.ndarray  # int, questions: index of the question's case (X-ray) in case_ids
    case_ids: np.ndarray
    case_unit: str  # "case_id" when the frame names the X-ray, else "question"
    # Questions x raters bit masks of the letters counted correct (bit k: letter k); None:
    # the key alone (`truth`).
    accepted: np.ndarray | None = None

    @property
    def present(self) -> np.ndarray:
        return self.answers >= 0

    @property
    def asked(self) -> np.ndarray:
        return self.answers != NOT_PRESENTED

    @property
    def correct(self) -> np.ndarray:
        if self.accepted is None:
            return (self.answers == self.truth[:, None]) & self.present
        bits = np.left_shift(np.uint8(1), np.maximum(self.answers, 0).astype(np.uint8))
        return ((self.accepted & bits) != 0) & self.present

    def rows(self, task: str | None) -> np.ndarray | slice:
        """Question selector for one task (None: every question)."""
        if task is None:
            return slice(None)
        if "task" not in self.attributes:
            raise AnalysisInputError("no column 'task'")
        return self.attributes["task"] == task

    def tasks(self) -> list[str]:
        return sorted({str(t) for t in self.attributes.get("task", []) if t is not None})


_LETTER_INDEX = pd.Index(LETTERS, dtype=object)


def _letter_codes(values: pd.Series, what: str, ids: pd.Series, raters: pd.Series | None):
    codes = _LETTER_INDEX.get_indexer(values.to_numpy(dtype=object)).astype(np.int8)
    odd = np.flatnonzero((codes < 0) & values.notna().to_numpy())
    if len(odd):  # only unusual spellings (" b", "c", "") pay for string normalisation
        stripped = values.iloc[odd].map(lambda v: str(v).strip())
        fixed = _LETTER_INDEX.get_indexer(stripped.str.upper().to_numpy(dtype=object))
        codes[odd] = fixed
        bad = odd[(fixed < 0) & (stripped != "").to_numpy()]
        if len(bad):
            examples = ", ".join(
                f"{values.iloc[i]!r} for question {ids.iloc[i]}"
                + (f" (rater {raters.iloc[i]})" if raters is not None else "")
                for i in bad[:3]
            )
            raise AnalysisInputError(
                f"{len(bad)} {what}(s) outside A-D: {examples}. "
                "Use A, B, C or D, or leave the cell empty for no answer."
            )
    return codes


def accepted_masks(
    accepted: pd.Series, keys: pd.Series, ids: pd.Series | None = None
) -> np.ndarray:
    """Per row, the bit mask (uint8, bit k: letter k) of the letters counted correct: the
    row's `accepted` letters ("BC"), or its key where `accepted` is empty. Anything but A-D
    is refused: a typo must not silently change a score."""
    given = accepted.to_numpy(dtype=object)
    blank = pd.isna(given) | np.array([not str(v).strip() for v in given], dtype=bool)
    values = np.where(blank, keys.to_numpy(dtype=object), given)
    codes, uniques = pd.factorize(values)
    table = np.zeros(len(uniques) + 1, dtype=np.uint8)  # the last: no letters at all
    for index, value in enumerate(uniques):
        mask = 0
        for letter in str(value).strip().upper().replace(",", "").replace(" ", ""):
            if letter not in LETTERS:
                row = int(np.flatnonzero(codes == index)[0])
                where = f" for question {ids.iloc[row]}" if ids is not None else ""
                raise AnalysisInputError(f"accepted answers {value!r}{where} are not letters A-D")
            mask |= 1 << LETTERS.index(letter)
        table[index] = mask
    return table[codes]


def right(frame: pd.DataFrame, column: str = "answer") -> np.ndarray:
    """Per row of a long frame, whether `column`'s letter is counted correct: one of the
    row's `accepted` letters, else its `correct_answer` (False for no answer)."""
    letters = frame[column]
    if ACCEPTED not in frame.columns:
        return ((letters == frame["correct_answer"]) & letters.notna()).to_numpy(dtype=bool)
    masks = accepted_masks(frame[ACCEPTED], frame["correct_answer"])
    codes = _LETTER_INDEX.get_indexer(letters.to_numpy(dtype=object))
    bits = np.left_shift(1, np.maximum(codes, 0))
    return (codes >= 0) & ((masks & bits) != 0)


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
    answer_codes = _letter_codes(df["answer"], "answer", df["question_id"], df["rater"])
    if "presented" in df.columns:
        presented = df["presented"].fillna(True).astype(bool).to_numpy()
        answer_codes = np.where(presented, answer_codes, np.int8(NOT_PRESENTED)).astype(np.int8)
    answers = np.full((n_q, n_r), NO_ANSWER, dtype=np.int8)
    answers[q_codes, r_codes] = answer_codes
    truth_rows = _letter_codes(df["correct_answer"], "correct answer", df["question_id"], None)
    if (truth_rows < 0).any():
        lacking = pd.unique(df["question_id"][truth_rows < 0])
        raise AnalysisInputError(
            f"{len(lacking)} question(s) without a correct answer (A-D): "
            f"{', '.join(map(str, lacking[:5]))}"
        )
    truth = np.full(n_q, -1, dtype=np.int8)
    truth[q_codes] = truth_rows
    if (truth[q_codes] != truth_rows).any():
        raise AnalysisInputError("a question has different correct answers in different rows")
    accepted = None
    if ACCEPTED in df.columns:
        accepted = np.zeros((n_q, n_r), dtype=np.uint8)
        accepted[q_codes, r_codes] = accepted_masks(
            df[ACCEPTED], df["correct_answer"], df["question_id"]
        )
    attributes = {}
    for column in ("task", "category", "case_id"):
        if column in df.columns:
            values = np.empty(n_q, dtype=object)
            values[q_codes] = df[column].to_numpy(dtype=object)
            attributes[column] = values
    if "case_id" in attributes:
        case_column = pd.Series(attributes["case_id"])
        if case_column.isna().any():
            lacking = q_ids[case_column.isna().to_numpy()]
            raise AnalysisInputError(
                f"{len(lacking)} question(s) without a case (X-ray): "
                f"{', '.join(map(str, lacking[:5]))}"
            )
        cases, case_ids = pd.factorize(case_column)
        unit = "case_id"
    else:
        cases, case_ids = np.arange(n_q), np.asarray(q_ids)
        unit = "question"
    return Prepared(
        np.asarray(q_ids),
        [str(r) for r in raters],
        answers,
        truth,
        attributes,
        np.asarray(cases),
        np.asarray(case_ids),
        unit,
        accepted,
    )


def case_totals(cases: np.ndarray, n_cases: int, values: np.ndarray) -> np.ndarray:
    """Sum the rows of `values` (questions x ...) per case: n_cases x ... ."""
    from scipy import sparse

    flat = np.asarray(values, dtype=float).reshape(len(cases), -1)
    grouping = sparse.csr_matrix(
        (np.ones(len(cases)), (cases, np.arange(len(cases)))), shape=(n_cases, len(cases))
    )
    return np.asarray(grouping @ flat).reshape((n_cases, *values.shape[1:]))


def percentile_interval(draws: np.ndarray, alpha: float) -> tuple[np.ndarray, np.ndarray]:
    """Percentile (alpha/2, 1 - alpha/2) of each column of `draws`, ignoring NaN replicates
    (as numpy's default linear quantile); NaN where a column has no finite replicate.

    One sort for all columns: np.nanquantile along an axis loops in Python per column.
    """
    ordered = np.sort(draws, axis=0)  # NaN sorts last
    valid = (~np.isnan(draws)).sum(axis=0)
    out = []
    for q in (alpha / 2, 1 - alpha / 2):
        position = q * np.maximum(valid - 1, 0)
        low = np.floor(position).astype(int)
        high = np.minimum(low + 1, np.maximum(valid - 1, 0))
        columns = np.arange(draws.shape[1])
        a, b = ordered[low, columns], ordered[high, columns]
        value = a + (b - a) * (position - low)
        out.append(np.where(valid > 0, value, np.nan))
    return out[0], out[1]


def holm(pvalues: np.ndarray) -> np.ndarray:
    """Holm's step-down adjusted p-values (as statsmodels' multipletests(method="holm"))."""
    p = np.asarray(pvalues, dtype=float)
    order = np.argsort(p, kind="stable")
    m = len(p)
    stepped = np.maximum.accumulate((m - np.arange(m)) * p[order])
    adjusted = np.empty(m)
    adjusted[order] = np.minimum(stepped, 1.0)
    return adjusted


def validate(df: pd.DataFrame) -> pd.DataFrame:
    """Check the long format (raises AnalysisInputError) and return it unchanged."""
    prepare(df)
    return df


def correct_matrix(data: Prepared, missing: Missing) -> np.ndarray:
    """Questions x raters: 1.0 correct, 0.0 wrong, NaN where not counted under the policy."""
    if missing not in ("wrong", "exclude"):
        raise AnalysisInputError("missing must be 'wrong' or 'exclude'")
    values = data.correct.astype(float)
    values[~data.asked] = np.nan
    if missing == "exclude":
        values[~data.present] = np.nan
    return values


def correct_wide(df: pd.DataFrame | Prepared, missing: Missing) -> pd.DataFrame:
    """Questions x raters: 1.0 correct, 0.0 wrong; NaN for a missing answer under "exclude"
    and for a question not presented to the rater."""
    data = prepare(df)
    return pd.DataFrame(correct_matrix(data, missing), index=data.question_ids, columns=data.raters)


def failed_extractions(df: pd.DataFrame | Prepared) -> pd.DataFrame:
    """Per rater: questions presented (n), failed (no answer) and rate; not predicted apart."""
    data = prepare(df)
    n = data.asked.sum(axis=0)
    failed = (data.asked & ~data.present).sum(axis=0)
    with np.errstate(invalid="ignore", divide="ignore"):
        rate = np.where(n > 0, failed / np.where(n > 0, n, 1), np.nan)
    return pd.DataFrame(
        {
            "rater": data.raters,
            "n": n,
            "failed": failed,
            "rate": rate,
            "not_predicted": (~data.asked).sum(axis=0),
        }
    )
