"""Confidence ratings of binary questions as the ROC analysis reads them.

Input is long, one row per (reader, modality, question):

    reader, modality, case_id, question_id, truth, rating

`truth` is 1 (finding present, the positive class) or 0; `rating` is the reader's confidence
that the finding is present on any numeric scale where higher means more likely (1-5, 0-100, a
model's probability). `modality` is the arm (unaided / aided) or any reading condition;
`case_id` is the X-ray. Several binary questions may share an X-ray: each question is one ROC
unit (one positive or negative), while the X-ray is the case every resampling keeps whole (the
jackknife leaves out all of an X-ray's questions at once). Without a `question_id` column
each row's `case_id` is its question (MRMCaov's layout: one rating per case).

A reader who did not rate a question simply has no row: that reader's AUC is over the
questions they rated (MRMCaov's partially paired design). A row with an empty or non-numeric
rating is an error, as is a question with two truths or two X-rays: a typo must not turn into
a silently different AUC. Which answers count (a draft, a too-fast answer) is the caller's
policy, applied before the frame is built.

`ratings_cube` turns the frame into modalities x readers x questions ratings (NaN where not
rated) and names the study design as MRMCaov's `get_design` does.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd

from analysis.stats.frame import AnalysisInputError

RATING_COLUMNS = ("reader", "modality", "case_id", "truth", "rating")

# MRMCaov's design codes (`mrmc(..., design =)`): what each means, in its own words.
DESIGNS = {
    1: "factorial",
    -1: "factorial (partially paired)",
    2: "cases nested within readers",
    3: "cases nested within modalities",
}


@dataclass(frozen=True)
class RatingsCube:
    """Ratings as arrays: modalities x readers x questions, NaN where a reader did not rate.

    `question_case` is each question's X-ray (an index into `case_ids`); `truth` is True for
    a positive question. Every case_id in the frame is a case of the jackknife, whether or
    not a given reader read it (as MRMCaov counts cases).
    """

    modalities: tuple[str, ...]
    readers: tuple[str, ...]
    question_ids: np.ndarray
    case_ids: np.ndarray
    question_case: np.ndarray
    truth: np.ndarray
    ratings: np.ndarray
    design: int

    @property
    def rated(self) -> np.ndarray:
        return ~np.isnan(self.ratings)

    @property
    def one_question_per_case(self) -> bool:
        return len(self.question_ids) == len(self.case_ids)

    @property
    def fully_paired(self) -> bool:
        return bool(self.rated.all())

    def describe_design(self) -> str:
        return DESIGNS[self.design]


def _check_columns(frame: pd.DataFrame) -> None:
    missing = [c for c in RATING_COLUMNS if c not in frame.columns]
    if missing:
        raise AnalysisInputError(f"missing column(s): {', '.join(missing)}")
    for column in ("reader", "modality", "case_id"):
        if frame[column].isna().any():
            raise AnalysisInputError(f"{int(frame[column].isna().sum())} row(s) without {column}")


def _truth(frame: pd.DataFrame) -> np.ndarray:
    values = frame["truth"]
    numeric = pd.to_numeric(values, errors="coerce")
    bad = numeric.isna() | ~numeric.isin([0, 1])
    if bad.any():
        examples = ", ".join(repr(v) for v in values[bad].head(3))
        raise AnalysisInputError(
            f"{int(bad.sum())} truth value(s) not 0 or 1 ({examples}): truth is 1 when the "
            "finding is present, 0 when absent"
        )
    return numeric.to_numpy(dtype=bool)


def _rating(frame: pd.DataFrame) -> np.ndarray:
    values = frame["rating"]
    numeric = pd.to_numeric(values, errors="coerce").astype(float)
    bad = ~np.isfinite(numeric.to_numpy())
    if bad.any():
        first = frame.loc[bad].iloc[0]
        raise AnalysisInputError(
            f"{int(bad.sum())} rating(s) empty or not a number (first: reader {first['reader']}, "
            f"modality {first['modality']}, case {first['case_id']}: {first['rating']!r}); "
            "leave out the rows of questions a reader did not rate"
        )
    return numeric.to_numpy()


def _levels(values: pd.Series, order: Sequence | None, what: str) -> list:
    present = list(pd.unique(values))
    if order is None:  # numbers in numeric order, anything else as text (MRMCaov's factors)
        numeric = all(isinstance(v, int | float | np.number) for v in present)
        return sorted(present) if numeric else sorted(present, key=str)
    order = list(order)
    unknown = [v for v in present if v not in order]
    if unknown:
        raise AnalysisInputError(f"{what}(s) {unknown} not in the order given {order}")
    return [v for v in order if v in present]


def ratings_cube(frame: pd.DataFrame, modalities: Sequence | None = None) -> RatingsCube:
    """Validate the long ratings frame and build the cube (see the module docstring).

    `modalities` orders the modalities (default: sorted, as MRMCaov orders factor levels);
    differences are reported first minus second in this order.
    """
    _check_columns(frame)
    if frame.empty:
        raise AnalysisInputError("no ratings")
    truth_rows = _truth(frame)
    rating_rows = _rating(frame)
    questions = frame["question_id"] if "question_id" in frame.columns else frame["case_id"]
    if questions.isna().any():
        raise AnalysisInputError(f"{int(questions.isna().sum())} row(s) without question_id")
    keys = pd.DataFrame(
        {"modality": frame["modality"], "reader": frame["reader"], "question": questions}
    )
    duplicated = keys.duplicated()
    if duplicated.any():
        first = keys[duplicated].iloc[0].tolist()
        raise AnalysisInputError(f"more than one rating for modality/reader/question {first}")

    q_codes, question_ids = pd.factorize(questions, sort=True)
    n_q = len(question_ids)
    per_question = pd.DataFrame(
        {"q": q_codes, "truth": truth_rows, "case": frame["case_id"].to_numpy()}
    ).groupby("q")
    for column, what in (("truth", "truths"), ("case", "X-rays (case_id)")):
        varying = per_question[column].nunique() > 1
        if varying.any():
            bad = question_ids[varying.to_numpy().nonzero()[0][:3]]
            raise AnalysisInputError(
                f"question(s) {list(bad)} have different {what} in different rows"
            )
    truth = np.zeros(n_q, dtype=bool)
    truth[q_codes] = truth_rows
    case_codes, case_ids = pd.factorize(frame["case_id"], sort=True)
    question_case = np.zeros(n_q, dtype=int)
    question_case[q_codes] = case_codes

    modality_levels = _levels(frame["modality"], modalities, "modality")
    reader_levels = _levels(frame["reader"], None, "reader")
    m_codes = pd.Index(modality_levels).get_indexer(frame["modality"])
    r_codes = pd.Index(reader_levels).get_indexer(frame["reader"])
    ratings = np.full((len(modality_levels), len(reader_levels), n_q), np.nan)
    ratings[m_codes, r_codes, q_codes] = rating_rows
    cube = RatingsCube(
        tuple(str(m) for m in modality_levels),
        tuple(str(r) for r in reader_levels),
        np.asarray(question_ids),
        np.asarray(case_ids),
        question_case,
        truth,
        ratings,
        design=0,
    )
    return RatingsCube(**{**cube.__dict__, "design": study_design(cube)})


def study_design(cube: RatingsCube) -> int:
    """MRMCaov's `get_design` on the cube: 1 factorial (every reader rated every question in
    every modality), 2 cases nested within readers, 3 cases nested within modalities, -1
    factorial but partially paired. Readers nested within modalities (a reader who read only
    one modality) is refused: its analysis is not built here."""
    rated = cube.rated  # t x r x q
    by_case = np.zeros((*rated.shape[:2], len(cube.case_ids)), dtype=int)
    np.add.at(by_case, (slice(None), slice(None), cube.question_case), rated.astype(int))
    test_reader = by_case.sum(axis=2) > 0
    if not test_reader.all():
        lacking = [
            f"{cube.readers[r]} in {cube.modalities[t]}" for t, r in np.argwhere(~test_reader)
        ]
        raise AnalysisInputError(
            "every reader must rate in every modality (readers nested within modalities is "
            f"not supported); no ratings from {', '.join(lacking[:5])}"
        )
    read = by_case > 0
    readers_per_case = read.any(axis=0).sum(axis=0)  # over modalities, then readers
    tests_per_case = read.any(axis=1).sum(axis=0)
    if (readers_per_case == 1).all():
        return 2
    if (tests_per_case == 1).all():
        return 3
    return 1 if rated.all() else -1
