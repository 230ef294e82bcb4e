"""Cohen's kappa for every pair of raters at once, and Fleiss' kappa for a panel.

`kappa_pairs` is the table a paper reports: for each pair, n (questions both answered),
kappa with a percentile bootstrap CI that resamples X-rays (`case_id`), raw percent agreement
and PABAK (prevalence- and bias-adjusted kappa, (K p_o - 1) / (K - 1) with K categories).
`fleiss_table` gives Fleiss' kappa of the reader panel per task with the same bootstrap.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Literal

import numpy as np
import pandas as pd

from analysis.stats.frame import (
    ALL,
    LETTERS,
    AnalysisInputError,
    Prepared,
    percentile_interval,
    prepare,
)
from analysis.stats.paired import REPLICATE_BLOCK, bootstrap_blocks

Scale = Literal["answer", "correct"]


def _codes(data: Prepared, scale: str, task: str | None) -> tuple[np.ndarray, list[str], int]:
    """Questions x raters category codes (negative = missing) and the number of levels."""
    rows = data.rows(task)
    if scale == "answer":
        return data.answers[rows], data.raters, len(LETTERS)
    if scale == "correct":
        codes = np.where(data.present, data.correct.astype(np.int8), np.int8(-1))
        return codes[rows], data.raters, 2
    raise AnalysisInputError("scale must be 'answer' or 'correct'")


def _pair_tables(codes: np.ndarray, levels: int) -> np.ndarray:
    """Contingency tables for every pair: T[r, s, k, l] = #questions r said k and s said l.

    Bincounts over (question, r, s) cells: no BLAS call, which on a busy machine with a
    multithreaded BLAS costs more than the counting itself. One rater r at a time: all of
    them at once held questions x R x R cell indices (100 MB for ReXVQA's 40,826 x 11).
    """
    r = codes.shape[1]
    cells = r * r * levels * levels
    valid = codes >= 0
    counts = np.zeros(cells, dtype=np.int64)
    for first in range(r):
        both = valid[:, first, None] & valid
        pair = (first * r + np.arange(r)) * levels * levels
        cell = pair + codes[:, first, None].astype(np.int64) * levels + codes
        counts += np.bincount(cell[both], minlength=cells)
    return counts.reshape(r, r, levels, levels).astype(np.float64)


def kappa_matrix(
    df: pd.DataFrame | Prepared,
    task: str | None = None,
    scale: Literal["answer", "correct"] = "answer",
) -> pd.DataFrame:
    """Cohen's kappa between every pair of raters (pairwise deletion); NaN where undefined.
    scale="answer" compares the A-D answers; scale="correct" compares correct/incorrect.
    """
    codes, raters, levels = _codes(prepare(df), scale, task)
    kappa, _, _ = _kappa_batch(_pair_tables(codes, levels))
    self_pairs = np.eye(len(kappa), dtype=bool) & ~np.isnan(kappa)
    kappa[self_pairs] = 1.0  # exactly, not 0.9999999999999999
    return pd.DataFrame(kappa, index=raters, columns=raters)


def kappa_matrices(
    df: pd.DataFrame | Prepared, scale: Literal["answer", "correct"] = "answer"
) -> dict[str, pd.DataFrame]:
    """ "All" and one matrix per task, from one code matrix sliced by task."""
    data = prepare(df)
    out = {ALL: kappa_matrix(data, None, scale)}
    for task in data.tasks():
        out[task] = kappa_matrix(data, task, scale)
    return out


def _kappa_batch(tables: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Kappa, observed agreement and n for contingency tables of shape (..., K, K)."""
    # einsum: the sums over tiny K x K tables of a bootstrap (1000 x pairs x K x K) are 3-5x
    # faster than .sum(axis=...) / np.trace, which loop over a length-K inner axis.
    row = np.einsum("...ij->...i", tables)
    col = np.einsum("...ij->...j", tables)
    n = row.sum(axis=-1)
    with np.errstate(invalid="ignore", divide="ignore"):
        p_o = np.einsum("...kk->...", tables) / n
        p_e = np.einsum("...k,...k->...", row, col) / (n * n)
        kappa = (p_o - p_e) / (1.0 - p_e)
    kappa = np.where((n == 0) | np.isclose(p_e, 1.0), np.nan, kappa)
    return kappa, np.where(n == 0, np.nan, p_o), n


PAIR_COLUMNS = [
    "rater_a",
    "rater_b",
    "n",
    "x_rays",
    "kappa",
    "ci_low",
    "ci_high",
    "agreement",
    "pabak",
    "caveat",
]
DEFAULT_MIN_XRAYS = 20
HIGH_AGREEMENT, LOW_KAPPA = 0.8, 0.4


def kappa_caveat(
    kappa: float, low: float, high: float, x_rays: int, min_xrays: int, agreement=None
) -> str:
    """Plain words for a kappa whose CI or value would mislead at face value ("" if none)."""
    notes = []
    if x_rays < min_xrays:
        notes.append(
            f"only {x_rays} X-ray{'s' if x_rays != 1 else ''} (fewer than {min_xrays}): "
            "a percentile bootstrap CI covers less than its level with so few"
        )
    if np.isfinite(low) and np.isfinite(high) and low == high:
        notes.append(
            "every bootstrap replicate gave the same κ: a zero-width CI reflects too "
            "little data, not certainty"
        )
    elif np.isfinite(kappa) and not (np.isfinite(low) and np.isfinite(high)):
        notes.append("no CI: κ is undefined in some bootstrap replicates or not computed")
    if (
        agreement is not None
        and np.isfinite(agreement)
        and np.isfinite(kappa)
        and agreement >= HIGH_AGREEMENT
        and kappa < LOW_KAPPA
    ):
        notes.append(
            f"high agreement ({agreement:.0%}) with low κ: one answer dominates "
            "(prevalence effect); see PABAK"
        )
    if not np.isfinite(kappa) and x_rays > 0:
        notes.append("κ not estimable: both raters gave one and the same answer throughout")
    return "; ".join(notes)


def _case_pair_tables(
    codes: np.ndarray, cases: np.ndarray, n_cases: int, levels: int, pairs
) -> np.ndarray:
    """Per-X-ray contingency tables of each pair (i, j) of `pairs`: X-rays x pairs x (K*K),
    T[c, p, k*K + l] = questions on X-ray c that i answered k and j answered l. In the
    smallest unsigned type that holds a count (at most an X-ray's questions): 11 raters on
    ReXVQA's 10,000 X-rays take 9 MB where float64 cases x (R*K)^2 took 158 MB."""
    kk = levels * levels
    most = int(np.bincount(cases).max()) if len(cases) else 0
    out = np.zeros((n_cases, len(pairs[0]), kk), dtype=np.min_scalar_type(most))
    valid = codes >= 0
    for p, (i, j) in enumerate(zip(*pairs, strict=True)):
        both = valid[:, i] & valid[:, j]
        cell = cases[both] * kk + codes[both, i].astype(np.int64) * levels + codes[both, j]
        out[:, p] = np.bincount(cell, minlength=n_cases * kk).reshape(n_cases, kk)
    return out


def _bootstrap_tables(tables: np.ndarray, n_boot: int, seed: int) -> np.ndarray:
    """Each replicate's tables, the sum over X-rays of weight x table: n_boot x pairs x K*K.

    Counts times counts: every partial sum is a whole number no larger than X-rays x the
    largest count, so float32 sums them exactly below 2**24 (float64 beyond), in any order.
    Hence 256 replicates and 12 pairs at a time (18 MB on ReXVQA's test split) instead of
    one n_boot x X-rays by X-rays x (pairs*K*K) float64 product (154 MB), the same numbers.
    """
    n_cases, n_pairs, kk = tables.shape
    exact32 = n_cases * max(int(tables.max(initial=0)), 1) < 2**24
    dtype = np.float32 if exact32 else np.float64
    out = np.empty((n_boot, n_pairs, kk))
    step = max(1, 192 // kk)  # pairs at a time
    first = 0
    for weights in bootstrap_blocks(n_cases, n_boot, seed, rows=4 * REPLICATE_BLOCK):
        drawn = weights.astype(dtype)
        for pair in range(0, n_pairs, step):
            block = tables[:, pair : pair + step].reshape(n_cases, -1).astype(dtype)
            out[first : first + len(drawn), pair : pair + step] = (drawn @ block).reshape(
                len(drawn), -1, kk
            )
        first += len(drawn)
    return out


def kappa_pairs(
    df: pd.DataFrame | Prepared,
    task: str | None = None,
    scale: Scale = "answer",
    *,
    alpha: float = 0.05,
    n_boot: int = 1000,
    seed: int = 0,
    min_xrays: int = DEFAULT_MIN_XRAYS,
) -> pd.DataFrame:
    """One row per pair of raters (a before b in rater order), on the questions both answered:
    n, X-rays, Cohen's kappa, its case-clustered percentile bootstrap CI (clipped to
    [-1, 1]), raw agreement (fraction), PABAK, and a `caveat` in words (`kappa_caveat`)
    with fewer than `min_xrays` X-rays, a zero-width CI or high agreement with low kappa.
    Undefined values are NaN.
    """
    data = prepare(df)
    codes, raters, levels = _codes(data, scale, task)
    n_cases = len(data.case_ids)
    upper = np.triu_indices(len(raters), k=1)
    tables = _case_pair_tables(codes, data.cases[data.rows(task)], n_cases, levels, upper)
    total = tables.sum(axis=0, dtype=np.int64).reshape(-1, levels, levels).astype(float)
    kappa, agreement, n = _kappa_batch(total)
    pabak = (levels * agreement - 1) / (levels - 1)
    x_rays = tables.any(axis=2).sum(axis=0)  # X-rays with a question both answered
    low = high = np.full(len(upper[0]), np.nan)
    if n_boot and n_cases:
        boot = _bootstrap_tables(tables, n_boot, seed).reshape(n_boot, -1, levels, levels)
        draws, _, _ = _kappa_batch(boot)
        low, high = percentile_interval(draws, alpha)
    low, high = np.clip(low, -1, 1), np.clip(high, -1, 1)
    caveats = [
        kappa_caveat(k, lo, hi, int(x), min_xrays, a) if nn else "no question both answered"
        for k, lo, hi, x, a, nn in zip(kappa, low, high, x_rays, agreement, n, strict=True)
    ]
    return pd.DataFrame(
        {
            "rater_a": [raters[i] for i in upper[0]],
            "rater_b": [raters[j] for j in upper[1]],
            "n": n.astype(int),
            "x_rays": x_rays.astype(int),
            "kappa": kappa,
            "ci_low": low,
            "ci_high": high,
            "agreement": agreement,
            "pabak": pabak,
            "caveat": caveats,
        },
        columns=PAIR_COLUMNS,
    )


def _fleiss(counts: np.ndarray, weights: np.ndarray) -> np.ndarray:
    """Fleiss' kappa of questions x categories counts (m raters each), one per weight row."""
    m = counts.sum(axis=1)[0]
    per_question = ((counts * (counts - 1)).sum(axis=1)) / (m * (m - 1))
    total = weights.sum(axis=1)
    with np.errstate(invalid="ignore", divide="ignore"):
        p_bar = (weights @ per_question) / total
        shares = (weights @ counts) / (total * m)[:, None]
        p_e = (shares**2).sum(axis=1)
        return (p_bar - p_e) / (1 - p_e)


FLEISS_BLOCK_BYTES = 32 * 2**20  # float64 replicates x questions at a time
FLEISS_COLUMNS = ["task", "raters", "n", "x_rays", "kappa", "ci_low", "ci_high", "caveat"]


def fleiss_table(
    df: pd.DataFrame | Prepared,
    raters: Sequence[str],
    *,
    alpha: float = 0.05,
    n_boot: int = 1000,
    seed: int = 0,
    min_xrays: int = DEFAULT_MIN_XRAYS,
) -> pd.DataFrame:
    """Fleiss' kappa (A-D answers) of a panel per task and for all tasks, on the questions
    every panel member answered (complete cases, n), with a percentile bootstrap CI that
    draws X-rays, and a `caveat` as for `kappa_pairs`."""
    data = prepare(df)
    unknown = [r for r in raters if r not in data.raters]
    if unknown:
        raise AnalysisInputError(f"unknown rater(s): {unknown}")
    columns = [data.raters.index(r) for r in raters]
    rows = []
    for task in [None, *data.tasks()]:
        selected = data.rows(task)
        codes = data.answers[selected][:, columns]
        complete = (codes >= 0).all(axis=1)
        label = ALL if task is None else task
        x_rays = len(np.unique(data.cases[selected][complete]))
        if len(columns) < 2 or complete.sum() < 2:
            rows.append(
                {
                    "task": label,
                    "raters": len(columns),
                    "n": int(complete.sum()),
                    "x_rays": x_rays,
                    "caveat": "not estimable: needs two readers and two questions all answered",
                }
            )
            continue
        codes = codes[complete]
        counts = np.stack([(codes == k).sum(axis=1) for k in range(len(LETTERS))], axis=1)
        kappa = float(_fleiss(counts, np.ones((1, len(codes))))[0])
        low = high = np.nan
        if n_boot:
            cases = np.unique(data.cases[selected][complete], return_inverse=True)[1]
            # Replicates x questions floats a block at a time (all of them: 327 MB for 1000
            # replicates of ReXVQA's 40,826 questions); a small study in one block. Blocks of a
            # multiple of 64 replicates, so that BLAS sums each replicate as in one product of
            # all (another boundary can move the last bit of a replicate).
            per_block = max(1, FLEISS_BLOCK_BYTES // (8 * len(cases) * REPLICATE_BLOCK))
            blocks = bootstrap_blocks(cases.max() + 1, n_boot, seed, per_block * REPLICATE_BLOCK)
            draws = np.concatenate([_fleiss(counts, w[:, cases].astype(float)) for w in blocks])
            low, high = (v[0] for v in percentile_interval(draws[:, None], alpha))
        low, high = float(np.clip(low, -1, 1)), float(np.clip(high, -1, 1))
        rows.append(
            {
                "task": label,
                "raters": len(columns),
                "n": len(codes),
                "x_rays": x_rays,
                "kappa": kappa,
                "ci_low": low,
                "ci_high": high,
                "caveat": kappa_caveat(kappa, low, high, x_rays, min_xrays),
            }
        )
    return pd.DataFrame(rows, columns=FLEISS_COLUMNS)


def panel_answers(
    df: pd.DataFrame, raters: Sequence[str] | None = None, task: str | None = None
) -> pd.DataFrame:
    """question x rater answers on the questions every panel member answered (all raters in
    `df` by default): the questions a panel's Fleiss' kappa counts, here, in `fleiss_table`
    and on the expert dashboard."""
    data = df if task is None else df[df["task"] == task]
    wide = data.pivot(index="question_id", columns="rater", values="answer")
    if raters is not None:
        missing = set(raters) - set(wide.columns)
        if missing:
            raise AnalysisInputError(f"unknown rater(s): {sorted(missing)}")
        wide = wide[list(raters)]
    return wide.dropna()


def fleiss_kappa(df: pd.DataFrame, raters: Sequence[str] | None = None, task: str | None = None):
    """Fleiss' kappa for a panel, on the questions every panel member answered.

    Categories are whatever values `answer` takes (A-D here; any labels in general).
    """
    from statsmodels.stats.inter_rater import aggregate_raters
    from statsmodels.stats.inter_rater import fleiss_kappa as _fleiss_kappa

    complete = panel_answers(df, raters, task)
    if complete.empty or complete.shape[1] < 2:
        return float("nan")
    codes, _ = pd.factorize(complete.to_numpy().ravel())
    counts, _ = aggregate_raters(codes.reshape(complete.shape))
    return float(_fleiss_kappa(counts, method="fleiss"))
