"""Cohen's kappa for every pair of raters at once, and Fleiss' kappa for a panel."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

import numpy as np
import pandas as pd
from scipy import stats as sps
from statsmodels.stats.inter_rater import aggregate_raters
from statsmodels.stats.inter_rater import fleiss_kappa as _fleiss_kappa

from analysis.stats.frame import LETTERS, AnalysisInputError, Prepared, prepare


def _codes(data: Prepared, scale: str, task: str | None) -> tuple[np.ndarray, list[str], int]:
    """Questions x raters category codes (-1 = missing) and the number of levels."""
    rows = slice(None) if task is None else data.attributes["task"] == task
    if scale == "answer":
        return data.answers[rows], data.raters, len(LETTERS)
    if scale == "correct":
        codes = np.where(data.present, data.correct.astype(np.int8), np.int8(-1))
        return codes[rows], data.raters, 2
    raise AnalysisInputError("scale must be 'answer' or 'correct'")


def _pair_tables(codes: np.ndarray, levels: int) -> np.ndarray:
    """Contingency tables for every pair: T[r, s, k, l] = #questions r said k and s said l."""
    onehot = np.zeros((codes.shape[0], codes.shape[1], levels), dtype=np.float64)
    rows, cols = np.nonzero(codes >= 0)
    onehot[rows, cols, codes[rows, cols]] = 1.0
    flat = onehot.reshape(codes.shape[0], -1)
    tables = flat.T @ flat  # (R*K) x (R*K): one BLAS call for all pairs
    r = codes.shape[1]
    return tables.reshape(r, levels, r, levels).transpose(0, 2, 1, 3)


@dataclass(frozen=True)
class KappaResult:
    kappa: pd.DataFrame
    se: pd.DataFrame
    ci_low: pd.DataFrame
    ci_high: pd.DataFrame
    n: pd.DataFrame


def _kappa_from_tables(tables: np.ndarray, with_se: bool, alpha: float):
    n = tables.sum(axis=(2, 3))
    with np.errstate(invalid="ignore", divide="ignore"):
        probs = tables / n[:, :, None, None]
        row = probs.sum(axis=3)  # rater r's marginals, on the questions both answered
        col = probs.sum(axis=2)
        p_o = np.trace(probs, axis1=2, axis2=3)
        p_e = (row * col).sum(axis=2)
        kappa = (p_o - p_e) / (1.0 - p_e)
        kappa[(n == 0) | np.isclose(p_e, 1.0)] = np.nan
        self_pairs = np.eye(len(kappa), dtype=bool) & ~np.isnan(kappa)
        kappa[self_pairs] = 1.0  # exactly, not 0.9999999999999999
        if not with_se:
            return kappa, n, None
        # Fleiss, Cohen & Everitt (1969) asymptotic variance, as statsmodels' cohens_kappa.
        diag = np.diagonal(probs, axis1=2, axis2=3)
        k = kappa[:, :, None]
        term_a = (diag * (1 - (row + col) * (1 - k)) ** 2).sum(axis=2)
        spread = (col[:, :, :, None] + row[:, :, None, :]) ** 2  # cell (k, l): col_k + row_l
        off = probs * spread
        off_sum = off.sum(axis=(2, 3)) - np.trace(off, axis1=2, axis2=3)
        term_b = (1 - kappa) ** 2 * off_sum
        term_c = (kappa - p_e * (1 - kappa)) ** 2
        var = (term_a + term_b - term_c) / (1 - p_e) ** 2 / n
        se = np.sqrt(np.clip(var, 0, None))
    return kappa, n, se


def kappa_matrix_ci(
    df: pd.DataFrame | Prepared,
    task: str | None = None,
    scale: Literal["answer", "correct"] = "answer",
    alpha: float = 0.05,
) -> KappaResult:
    """Kappa for every pair with the asymptotic SE and a Wald (1 - alpha) interval."""
    codes, raters, levels = _codes(prepare(df), scale, task)
    kappa, n, se = _kappa_from_tables(_pair_tables(codes, levels), True, alpha)
    z = sps.norm.ppf(1 - alpha / 2)

    def frame(values):
        return pd.DataFrame(values, index=raters, columns=raters)

    return KappaResult(
        frame(kappa), frame(se), frame(kappa - z * se), frame(kappa + z * se), frame(n.astype(int))
    )


def kappa_matrix(
    df: pd.DataFrame | Prepared,
    task: str | None = None,
    scale: Literal["answer", "correct"] = "answer",
) -> pd.DataFrame:
    """Cohen's kappa between every pair of raters (pairwise deletion); NaN where undefined.

    scale="answer" compares the A-D answers; scale="correct" compares correct/incorrect.
    """
    codes, raters, levels = _codes(prepare(df), scale, task)
    kappa, _, _ = _kappa_from_tables(_pair_tables(codes, levels), False, 0.05)
    return pd.DataFrame(kappa, index=raters, columns=raters)


def kappa_matrices(
    df: pd.DataFrame | Prepared, scale: Literal["answer", "correct"] = "answer"
) -> dict[str, pd.DataFrame]:
    """ "All tasks" and one matrix per task, from one code matrix sliced by task."""
    data = prepare(df)
    out = {"All tasks": kappa_matrix(data, None, scale)}
    for task in sorted(set(data.attributes["task"]) - {None}):
        out[task] = kappa_matrix(data, task, scale)
    return out


def fleiss_kappa(df: pd.DataFrame, raters: Sequence[str] | None = None, task: str | None = None):
    """Fleiss' kappa for a panel, on the questions every panel member answered.

    Categories are whatever values `answer` takes (A-D here; any labels in general).
    """
    data = df if task is None else df[df["task"] == task]
    wide = data.pivot(index="question_id", columns="rater", values="answer")
    if raters is not None:
        missing = set(raters) - set(wide.columns)
        if missing:
            raise AnalysisInputError(f"unknown rater(s): {sorted(missing)}")
        wide = wide[list(raters)]
    complete = wide.dropna()
    if complete.empty or complete.shape[1] < 2:
        return float("nan")
    codes, _ = pd.factorize(complete.to_numpy().ravel())
    counts, _ = aggregate_raters(codes.reshape(complete.shape))
    return float(_fleiss_kappa(counts, method="fleiss"))
