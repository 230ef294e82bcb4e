"""Paired comparisons of two raters on the same questions: exact McNemar, bootstrap.

`mcnemar_pairs` gives every pair at once, with Holm-adjusted p-values and a bootstrap CI of
the accuracy difference that resamples whole X-rays (`case_id`).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd
from statsmodels.stats.contingency_tables import mcnemar as _mcnemar

from analysis.stats.frame import (
    AnalysisInputError,
    Missing,
    Prepared,
    case_totals,
    correct_matrix,
    correct_wide,
    holm,
    percentile_interval,
    prepare,
)


@dataclass(frozen=True)
class McNemarResult:
    table: pd.DataFrame
    statistic: float
    pvalue: float
    n: int


def mcnemar_table(
    df: pd.DataFrame | Prepared, a: str, b: str, missing: Missing = "wrong"
) -> pd.DataFrame:
    """2x2 counts of correct/incorrect for raters a (rows) and b (columns), paired by question."""
    wide = correct_wide(df, missing)[[a, b]].dropna()
    ca, cb = wide[a].astype(bool), wide[b].astype(bool)
    values = [
        [int((ca & cb).sum()), int((ca & ~cb).sum())],
        [int((~ca & cb).sum()), int((~ca & ~cb).sum())],
    ]
    labels = ["correct", "incorrect"]
    return pd.DataFrame(values, index=pd.Index(labels, name=a), columns=pd.Index(labels, name=b))


def mcnemar_test(
    df: pd.DataFrame | Prepared, a: str, b: str, missing: Missing = "wrong"
) -> McNemarResult:
    """Exact McNemar test (binomial on the discordant pairs)."""
    table = mcnemar_table(df, a, b, missing)
    result = _mcnemar(table.to_numpy(), exact=True)
    return McNemarResult(
        table, float(result.statistic), float(result.pvalue), int(table.to_numpy().sum())
    )


@dataclass(frozen=True)
class BootstrapResult:
    difference: float
    ci_low: float
    ci_high: float
    n_boot: int


def bootstrap_accuracy_difference(
    df: pd.DataFrame,
    a: str,
    b: str,
    n_boot: int = 2000,
    seed: int = 0,
    alpha: float = 0.05,
    missing: Missing = "wrong",
) -> BootstrapResult:
    """Percentile bootstrap CI of accuracy(a) - accuracy(b), resampling cases.

    Questions on the same case (X-ray) move together when a `case_id` column is present.
    """
    data = prepare(df)
    wide = correct_wide(data, missing)
    if "case_id" in data.attributes:
        wide.index = pd.Index(data.attributes["case_id"])
    wide = wide[[a, b]].dropna()
    clusters = pd.Series(wide.index, index=wide.index)
    diff = (wide[a] - wide[b]).groupby(clusters.to_numpy()).agg(["sum", "size"])
    sums, sizes = diff["sum"].to_numpy(), diff["size"].to_numpy()
    rng = np.random.default_rng(seed)
    picks = rng.integers(0, len(sums), size=(n_boot, len(sums)))
    boots = sums[picks].sum(axis=1) / sizes[picks].sum(axis=1)
    low, high = np.quantile(boots, [alpha / 2, 1 - alpha / 2])
    return BootstrapResult(float(sums.sum() / sizes.sum()), float(low), float(high), n_boot)


def bootstrap_counts(n_cases: int, n_boot: int, seed: int) -> np.ndarray:
    """n_boot x n_cases: how often each case is drawn in each bootstrap replicate."""
    rng = np.random.default_rng(seed)
    picks = rng.integers(0, n_cases, size=(n_boot, n_cases))
    offsets = np.arange(n_boot)[:, None] * n_cases
    return np.bincount((picks + offsets).ravel(), minlength=n_boot * n_cases).reshape(
        n_boot, n_cases
    )


PAIR_COLUMNS = [
    "rater_a",
    "rater_b",
    "n",
    "both_correct",
    "only_a_correct",
    "only_b_correct",
    "both_wrong",
    "accuracy_a",
    "accuracy_b",
    "difference",
    "ci_low",
    "ci_high",
    "p_exact",
    "p_holm",
]


def mcnemar_pairs(
    df: pd.DataFrame | Prepared,
    raters: list[str] | None = None,
    missing: Missing = "wrong",
    *,
    alpha: float = 0.05,
    n_boot: int = 2000,
    seed: int = 0,
) -> pd.DataFrame:
    """Every pair of raters on the questions both are counted on (under the policy).

    Exact McNemar p (binomial on the discordant questions), Holm-adjusted over all pairs in
    the table (the same values as statsmodels' multipletests, which the tests check);
    accuracy difference (a - b) with a percentile bootstrap CI that draws X-rays.
    """
    data = prepare(df)
    names = data.raters if raters is None else list(raters)
    unknown = [r for r in names if r not in data.raters]
    if unknown:
        raise AnalysisInputError(f"unknown rater(s): {unknown}")
    values = correct_matrix(data, missing)[:, [data.raters.index(r) for r in names]]
    counted = ~np.isnan(values)
    right = np.nan_to_num(values)
    n_cases = len(data.case_ids)
    # Per X-ray sums for every pair: correct of a where both counted, and questions counted.
    both = counted[:, :, None] & counted[:, None, :]  # questions x a x b
    hits = right[:, :, None] * both
    q = len(names) ** 2
    case_n = case_totals(data.cases, n_cases, both).reshape(n_cases, q)
    case_a = case_totals(data.cases, n_cases, hits).reshape(n_cases, q)
    case_b = case_a.reshape(n_cases, len(names), len(names)).transpose(0, 2, 1).reshape(n_cases, q)
    weights = bootstrap_counts(n_cases, n_boot, seed)
    with np.errstate(invalid="ignore", divide="ignore"):
        boot = (weights @ (case_a - case_b)) / (weights @ case_n)
    boot_low, boot_high = percentile_interval(boot, alpha)
    rows, pvalues = [], []
    for i, a in enumerate(names):
        for j in range(i + 1, len(names)):
            b = names[j]
            keep = both[:, i, j]
            ca, cb = right[keep, i].astype(bool), right[keep, j].astype(bool)
            table = [[int((ca & cb).sum()), int((ca & ~cb).sum())]]
            table.append([int((~ca & cb).sum()), int((~ca & ~cb).sum())])
            n = int(keep.sum())
            p = float(_mcnemar(table, exact=True).pvalue) if n else float("nan")
            low, high = boot_low[i * len(names) + j], boot_high[i * len(names) + j]
            rows.append(
                {
                    "rater_a": a,
                    "rater_b": b,
                    "n": n,
                    "both_correct": table[0][0],
                    "only_a_correct": table[0][1],
                    "only_b_correct": table[1][0],
                    "both_wrong": table[1][1],
                    "accuracy_a": float(ca.mean()) if n else np.nan,
                    "accuracy_b": float(cb.mean()) if n else np.nan,
                    "difference": float(ca.mean() - cb.mean()) if n else np.nan,
                    "ci_low": float(np.clip(low, -1, 1)),
                    "ci_high": float(np.clip(high, -1, 1)),
                    "p_exact": p,
                }
            )
            pvalues.append(p)
    out = pd.DataFrame(rows, columns=PAIR_COLUMNS[:-1])
    out["p_holm"] = np.nan
    finite = ~np.isnan(np.asarray(pvalues, dtype=float))
    if finite.any():
        out.loc[finite, "p_holm"] = holm(np.asarray(pvalues)[finite])
    return out
