"""Do readers know when they are right? Accuracy by confidence level on multiple-choice
questions, and how well confidence tells a reader's right answers from their wrong ones.

Input is long, one row per (rater, question) answered: `rater`, `case_id` (the X-ray),
`confidence` (the level given: 1-5, or any ordered number) and `correct` (1 if the answer was
right). Unanswered questions have no confidence and are not rows here.

- `accuracy_by_confidence`: per rater and level, the proportion correct with the X-ray-clustered
  Wilson interval the accuracy tables use (`clustered.clustered_proportion_ci`: Wilson on the
  effective sample size, design effect by X-ray). A well-calibrated reader's accuracy rises
  with their confidence.
- `confidence_discrimination`: per rater, the AUC of confidence for telling right answers from
  wrong (ties 1/2; 0.5: confidence says nothing about being right), with a normal interval from
  the jackknife leaving out one X-ray at a time.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from analysis.stats.auc_covariance import jackknife
from analysis.stats.bounded import auc_note, no_interval_note
from analysis.stats.clustered import CLUSTER_CI_METHOD, clustered_proportion_ci
from analysis.stats.distributions import norm_ppf
from analysis.stats.frame import AnalysisInputError
from analysis.stats.roc_frame import ratings_cube

COLUMNS = ("rater", "case_id", "confidence", "correct")
LEVEL_COLUMNS = ["rater", "confidence", "n", "correct", "accuracy", "ci_low", "ci_high", "x_rays"]
DISCRIMINATION_COLUMNS = ["rater", "n", "right", "wrong", "auc", "se", "ci_low", "ci_high", "note"]
LEVEL_METHOD = CLUSTER_CI_METHOD.format(ci="Wilson interval")
DISCRIMINATION_METHOD = (
    "empirical AUC of the confidence for right against wrong answers (ties 1/2), normal "
    "interval from the jackknife leaving out one X-ray at a time, not clipped to [0, 1] (a "
    "note says where it passes)"
)


def _checked(frame: pd.DataFrame) -> pd.DataFrame:
    missing = [c for c in COLUMNS if c not in frame.columns]
    if missing:
        raise AnalysisInputError(f"missing column(s): {', '.join(missing)}")
    confidence = pd.to_numeric(frame["confidence"], errors="coerce")
    if confidence.isna().any():
        raise AnalysisInputError(
            f"{int(confidence.isna().sum())} answer(s) without a numeric confidence; leave out "
            "the answers given without one"
        )
    correct = pd.to_numeric(frame["correct"], errors="coerce")
    if not correct.isin([0, 1]).all():
        raise AnalysisInputError("correct must be 0 or 1")
    if frame["case_id"].isna().any():
        raise AnalysisInputError("every answer needs its X-ray (case_id)")
    if "question_id" in frame.columns and frame.duplicated(["rater", "question_id"]).any():
        first = frame[frame.duplicated(["rater", "question_id"])].iloc[0]
        raise AnalysisInputError(
            f"more than one answer for rater/question {[first['rater'], first['question_id']]}"
        )
    return frame.assign(confidence=confidence, correct=correct.astype(int))


def accuracy_by_confidence(
    frame: pd.DataFrame, alpha: float = 0.05, pooled: str | None = None
) -> pd.DataFrame:
    """Per rater and confidence level: n, correct, accuracy and its X-ray-clustered Wilson CI.
    With `pooled` (e.g. "readers (pooled)") a row per level adds every rater's answers
    together under that name (pass the readers' rows only)."""
    data = _checked(frame)
    if pooled is not None:
        data = pd.concat([data, data.assign(rater=pooled)], ignore_index=True)
    groups = data.groupby(["rater", "confidence"], sort=True)
    keys = list(groups.groups)
    cases = pd.Index(pd.unique(data["case_id"]))
    correct = np.zeros((len(cases), len(keys)))
    counted = np.zeros((len(cases), len(keys)))
    for g, key in enumerate(keys):
        part = groups.get_group(key)
        index = cases.get_indexer(part["case_id"])
        np.add.at(correct[:, g], index, part["correct"].to_numpy())
        np.add.at(counted[:, g], index, 1.0)
    ci = clustered_proportion_ci(correct, counted, alpha)
    rows = [
        {
            "rater": rater,
            "confidence": level,
            "n": int(ci.n[g]),
            "correct": int(correct[:, g].sum()),
            "accuracy": float(ci.p[g]),
            "ci_low": float(ci.ci_low[g]),
            "ci_high": float(ci.ci_high[g]),
            "x_rays": int(ci.clusters[g]),
        }
        for g, (rater, level) in enumerate(keys)
    ]
    return pd.DataFrame(rows, columns=LEVEL_COLUMNS)


def confidence_discrimination(frame: pd.DataFrame, alpha: float = 0.05) -> pd.DataFrame:
    """Per rater: the AUC of confidence for right against wrong answers with its jackknife
    (by X-ray) normal interval; `note` says why a rater has none (all right, all wrong, or
    too few X-rays)."""
    data = _checked(frame)
    rows = []
    z = float(norm_ppf(1 - alpha / 2))
    for rater, part in data.groupby("rater", sort=True):
        right, wrong = int(part["correct"].sum()), int((1 - part["correct"]).sum())
        row = {"rater": rater, "n": len(part), "right": right, "wrong": wrong}
        ratings = pd.DataFrame(
            {
                "reader": "r",
                "modality": "m",
                "case_id": part["case_id"].to_numpy(),
                "question_id": np.arange(len(part)),
                "truth": part["correct"].to_numpy(),
                "rating": part["confidence"].to_numpy(),
            }
        )
        try:
            auc, cov = jackknife(ratings_cube(ratings))
        except AnalysisInputError:
            # The jackknife's own words name the cube's placeholder reader and modality.
            why = (
                "all answers right or all wrong"
                if not right or not wrong
                else f"{right} right and {wrong} wrong answer(s) on "
                f"{part['case_id'].nunique()} X-ray(s): the jackknife by X-ray needs at least "
                "two X-rays with a right answer and two with a wrong one"
            )
            rows.append(row | dict.fromkeys(("auc", "se", "ci_low", "ci_high"), float("nan")))
            rows[-1]["note"] = f"not estimable: {why}"
            continue
        se = float(np.sqrt(cov[0, 0]))
        estimate = float(auc[0, 0])
        half = z * se if se > 0 else float("nan")  # no zero-width interval (no_interval_note)
        rows.append(
            row
            | {
                "auc": estimate,
                "se": se,
                "ci_low": estimate - half,
                "ci_high": estimate + half,
                "note": auc_note(estimate - half, estimate + half) or no_interval_note(se),
            }
        )
    return pd.DataFrame(rows, columns=DISCRIMINATION_COLUMNS)
