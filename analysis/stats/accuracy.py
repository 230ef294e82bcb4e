"""Accuracy per rater and task (or any per-question column) with binomial CIs."""

from __future__ import annotations

from typing import Literal

import numpy as np
import pandas as pd
from statsmodels.stats.proportion import proportion_confint

from analysis.stats.frame import ALL, AnalysisInputError, Missing, Prepared, prepare


def _interval(correct: np.ndarray, n: np.ndarray, method: str, alpha: float):
    low = np.full(len(n), np.nan)
    high = np.full(len(n), np.nan)
    ok = n > 0
    if ok.any():
        low[ok], high[ok] = proportion_confint(
            correct[ok],
            n[ok],
            alpha=alpha,
            method="beta" if method == "clopper-pearson" else method,
        )
    return np.clip(low, 0.0, 1.0), np.clip(high, 0.0, 1.0)


def accuracy_table(
    df: pd.DataFrame | Prepared,
    missing: Missing = "wrong",
    method: Literal["wilson", "clopper-pearson"] = "wilson",
    alpha: float = 0.05,
    by: str = "task",
) -> pd.DataFrame:
    """Accuracy per rater and task (or `by` column), plus an "All" row per rater.

    Returns columns rater, <by>, n, correct, accuracy (fraction), ci_low, ci_high. n counts
    the questions presented to the rater (under "exclude": those it answered); a rater with
    n = 0 in a group has NaN accuracy and limits. Limits are clipped to [0, 1].
    """
    if missing not in ("wrong", "exclude"):
        raise AnalysisInputError("missing must be 'wrong' or 'exclude'")
    data = prepare(df)
    if by not in data.attributes:
        raise AnalysisInputError(f"no column {by!r}")
    groups = pd.Series(data.attributes[by]).fillna("(none)").astype(str).to_numpy()
    names = sorted(set(groups) - {ALL})
    onehot = (groups[:, None] == np.array(names, dtype=object)[None, :]).astype(np.float64)
    onehot = np.hstack([onehot, np.ones((len(groups), 1))])  # the "All" column
    counted = data.present if missing == "exclude" else data.asked
    n = onehot.T @ counted.astype(np.float64)  # groups x raters
    correct = onehot.T @ data.correct.astype(np.float64)
    labels = [*names, ALL]
    table = pd.DataFrame(
        {
            "rater": np.repeat(data.raters, len(labels)),
            by: labels * len(data.raters),
            "n": n.T.ravel().astype(int),
            "correct": correct.T.ravel().astype(int),
        }
    )
    nn, cc = n.T.ravel(), correct.T.ravel()
    with np.errstate(invalid="ignore", divide="ignore"):
        table["accuracy"] = np.where(nn > 0, cc / np.where(nn > 0, nn, 1), np.nan)
    table["ci_low"], table["ci_high"] = _interval(cc, nn, method, alpha)
    return table
