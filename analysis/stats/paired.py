"""Paired comparisons of two raters on the same questions: exact McNemar, bootstrap."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd
from statsmodels.stats.contingency_tables import mcnemar as _mcnemar

from analysis.stats.frame import Missing, correct_wide, prepare


@dataclass(frozen=True)
class McNemarResult:
    table: pd.DataFrame
    statistic: float
    pvalue: float
    n: int


def mcnemar_table(df: pd.DataFrame, a: str, b: str, missing: Missing = "wrong") -> pd.DataFrame:
    """2x2 counts of correct/incorrect for raters a (rows) and b (columns), paired by question."""
    wide = correct_wide(df, missing)[[a, b]].dropna()
    ca, cb = wide[a].astype(bool), wide[b].astype(bool)
    values = [
        [int((ca & cb).sum()), int((ca & ~cb).sum())],
        [int((~ca & cb).sum()), int((~ca & ~cb).sum())],
    ]
    labels = ["correct", "incorrect"]
    return pd.DataFrame(values, index=pd.Index(labels, name=a), columns=pd.Index(labels, name=b))


def mcnemar_test(df: pd.DataFrame, a: str, b: str, missing: Missing = "wrong") -> McNemarResult:
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
