"""Accuracy per rater and task (or any per-question column) with CIs that respect the X-ray.

The interval is Wilson or Clopper–Pearson on the effective sample size (`clustered.py`): the
questions of one X-ray count as less than independent trials by the design effect measured
in the data. With one question per X-ray it is the plain binomial interval.
"""

from __future__ import annotations

from typing import Literal

import numpy as np
import pandas as pd

from analysis.stats.clustered import clustered_proportion_ci
from analysis.stats.frame import ALL, AnalysisInputError, Missing, Prepared, case_totals, prepare


def accuracy_table(
    df: pd.DataFrame | Prepared,
    missing: Missing = "wrong",
    method: Literal["wilson", "clopper-pearson"] = "wilson",
    alpha: float = 0.05,
    by: str = "task",
) -> pd.DataFrame:
    """Accuracy per rater and task (or `by` column), plus an "All" row per rater.

    Returns columns rater, <by>, n, x_rays, correct, accuracy (fraction), ci_low, ci_high,
    deff (design effect of the X-ray clustering), n_eff (effective sample size the interval
    uses), note (why an interval is missing or spans 0-100%). n counts the questions
    presented to the rater (under "exclude": those it answered); a rater with n = 0 in a
    group has NaN accuracy and limits.
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
    per_case_n = _per_case(data, groups, names, counted)
    per_case_correct = _per_case(data, groups, names, data.correct)
    n_cases = len(data.case_ids)
    # columns rater-major, as the table's rows: (rater, group)
    flat_n = per_case_n.transpose(0, 2, 1).reshape(n_cases, -1)
    flat_correct = per_case_correct.transpose(0, 2, 1).reshape(n_cases, -1)
    ci = clustered_proportion_ci(flat_correct, flat_n, alpha, method)
    table.insert(3, "x_rays", ci.clusters.astype(int))
    table["accuracy"] = ci.p
    table["ci_low"], table["ci_high"] = ci.ci_low, ci.ci_high
    table["deff"] = np.where(ci.n > 0, ci.deff, np.nan)
    table["n_eff"] = np.where(ci.n > 0, ci.n_eff, np.nan)
    table["note"] = [
        _note(n_, x, lo, hi)
        for n_, x, lo, hi in zip(ci.n, ci.clusters, ci.ci_low, ci.ci_high, strict=True)
    ]
    return table


def _per_case(data: Prepared, groups: np.ndarray, names: list[str], values) -> np.ndarray:
    """X-rays x (groups, then All) x raters: the sums of `values` (questions x raters) per
    X-ray and group. Counts, so exact in any order; one X-ray-and-group index rather than a
    questions x groups x raters array (two of 22 MB each for ReXVQA's test split)."""
    n_cases, n_groups = len(data.case_ids), len(names)
    values = np.asarray(values, dtype=np.float64)
    out = np.empty((n_cases, n_groups + 1, values.shape[1]))
    group = pd.Index(names, dtype=object).get_indexer(groups)
    named = group >= 0
    keys = data.cases[named] * n_groups + group[named]
    out[:, :n_groups] = case_totals(keys, n_cases * n_groups, values[named]).reshape(
        n_cases, n_groups, -1
    )
    out[:, n_groups] = case_totals(data.cases, n_cases, values)
    return out


def _note(n: float, x_rays: int, low: float, high: float) -> str:
    """Why an interval is missing or says nothing ("" otherwise)."""
    if n == 0:
        return ""
    if np.isnan(low):
        return f"not estimable: all {int(n)} questions on one X-ray"
    if low <= 0.005 and high >= 0.995:
        return f"only {x_rays} X-ray{'s' if x_rays != 1 else ''}: the interval spans 0–100%"
    return ""
