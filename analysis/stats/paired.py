"""Paired comparisons of two raters on the same questions.

`mcnemar_pairs` gives every pair at once: the accuracy difference with a CI and p-value from
Obuchowski's clustered method (X-rays as clusters), Holm-adjusted over a chosen family.
`mcnemar_test` (exact, questions as independent) stays for a single pair in a notebook.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

import numpy as np
import pandas as pd

from analysis.stats.bounded import difference_note
from analysis.stats.clustered import clustered_paired_difference
from analysis.stats.frame import (
    AnalysisInputError,
    Missing,
    Prepared,
    correct_matrix,
    correct_wide,
    holm,
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
    from statsmodels.stats.contingency_tables import mcnemar as _mcnemar

    table = mcnemar_table(df, a, b, missing)
    result = _mcnemar(table.to_numpy(), exact=True)
    return McNemarResult(
        table, float(result.statistic), float(result.pvalue), int(table.to_numpy().sum())
    )


# Bootstrap replicates drawn at a time (the generator gives the same picks either way).
REPLICATE_BLOCK = 64


def bootstrap_blocks(
    n_cases: int, n_boot: int, seed: int, rows: int = REPLICATE_BLOCK
) -> Iterator[np.ndarray]:
    """How often each case is drawn in each bootstrap replicate, `rows` replicates (a multiple
    of REPLICATE_BLOCK) x n_cases at a time, in the smallest unsigned type that holds
    n_cases. The generator gives the same picks, replicate after replicate, whatever the
    blocks: a statistic holds no more replicates than it needs at once (1000 replicates of
    10,000 X-rays are 80 MB)."""
    rng = np.random.default_rng(seed)
    for first in range(0, n_boot, rows):
        out = np.empty((min(rows, n_boot - first), n_cases), dtype=np.min_scalar_type(n_cases))
        for start in range(0, len(out), REPLICATE_BLOCK):
            k = min(REPLICATE_BLOCK, len(out) - start)
            picks = rng.integers(0, n_cases, size=(k, n_cases))
            picks += np.arange(k)[:, None] * n_cases
            drawn = np.bincount(picks.ravel(), minlength=k * n_cases)
            out[start : start + k] = drawn.reshape(k, n_cases)
        yield out


PAIR_COLUMNS = [
    "rater_a",
    "rater_b",
    "n",
    "x_rays",
    "both_correct",
    "only_a_correct",
    "only_b_correct",
    "both_wrong",
    "accuracy_a",
    "accuracy_b",
    "difference",
    "se",
    "ci_low",
    "ci_high",
    "df",
    "p_value",
    "in_holm_family",
    "p_holm",
    "note",
]
HOLM_FAMILIES = ("ai_vs_reader", "all_pairs")


def in_family(a: str, b: str, family: str, kinds: dict[str, str] | None) -> bool:
    """Whether the pair (a, b) is one of the comparisons Holm's adjustment runs over:
    "all_pairs", or "ai_vs_reader" (one reader and one model; every pair when kinds are
    unknown)."""
    if family not in HOLM_FAMILIES:
        raise AnalysisInputError(f"holm family must be one of {HOLM_FAMILIES}")
    if family == "all_pairs" or kinds is None:
        return True
    return {kinds.get(a), kinds.get(b)} == {"human", "model"}


def mcnemar_pairs(
    df: pd.DataFrame | Prepared,
    raters: list[str] | None = None,
    missing: Missing = "wrong",
    *,
    alpha: float = 0.05,
    family: str = "all_pairs",
    kinds: dict[str, str] | None = None,
) -> pd.DataFrame:
    """Every pair of raters on the questions both are counted on (under the policy).

    The accuracy difference (a - b) with its CI and p-value from one clustered method
    (Obuchowski 1998, `clustered.clustered_paired_difference`): questions on one X-ray move
    together, and p < alpha exactly when the CI excludes 0. With a single question per
    X-ray it is a paired t test on the question-level differences (McNemar's setting).
    Holm's adjustment runs over the pairs of `family` ("ai_vs_reader" needs `kinds`,
    rater -> "human" | "model"); pairs outside the family have no p_holm. `note` says why
    a value is not estimable.
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
    rows = []
    for i, a in enumerate(names):
        for j in range(i + 1, len(names)):
            b = names[j]
            keep = counted[:, i] & counted[:, j]
            ca, cb = right[:, i].astype(bool) & keep, right[:, j].astype(bool) & keep
            n = int(keep.sum())
            case_n = np.bincount(data.cases, weights=keep, minlength=n_cases)
            case_d = np.bincount(
                data.cases, weights=ca.astype(float) - cb.astype(float), minlength=n_cases
            )
            result = clustered_paired_difference(case_d, case_n, alpha)
            rows.append(
                {
                    "rater_a": a,
                    "rater_b": b,
                    "n": n,
                    "x_rays": result.clusters,
                    "both_correct": int((ca & cb).sum()),
                    "only_a_correct": int((ca & ~cb).sum()),
                    "only_b_correct": int((~ca & cb & keep).sum()),
                    "both_wrong": int((~ca & ~cb & keep).sum()),
                    "accuracy_a": float(ca.sum() / n) if n else np.nan,
                    "accuracy_b": float(cb.sum() / n) if n else np.nan,
                    "difference": result.difference,
                    "se": result.se,
                    "ci_low": result.ci_low,
                    "ci_high": result.ci_high,
                    "df": result.df,
                    "p_value": result.p_value,
                    "in_holm_family": in_family(a, b, family, kinds),
                    "note": "; ".join(
                        part
                        for part in (result.note, difference_note(result.ci_low, result.ci_high))
                        if part
                    ),
                }
            )
    out = pd.DataFrame(rows, columns=[c for c in PAIR_COLUMNS if c != "p_holm"])
    out.insert(len(out.columns) - 1, "p_holm", np.nan)
    if out.empty:
        return out
    chosen = (out["in_holm_family"] & out["p_value"].notna()).to_numpy()
    if chosen.any():
        out.loc[chosen, "p_holm"] = holm(out.loc[chosen, "p_value"].to_numpy())
    return out
