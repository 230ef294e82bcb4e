"""AI-versus-reader comparisons built from the statistics (pure, DataFrame in and out).

Both tables use the X-ray as the case: the OR/Hillis jackknife leaves out one X-ray with all
its questions (`case_id`; without the column each question is its own case).
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from analysis.stats import mrmc
from analysis.stats.frame import AnalysisInputError, Missing, Prepared, correct_matrix, prepare

UNCERTAINTY_COLUMNS = [
    "se",
    "ci_low",
    "ci_high",
    "p_value",
    "df",
    "ms_r",
    "var",
    "cov2",
    "se_fixed",
    "ci_low_fixed",
    "ci_high_fixed",
    "p_fixed",
    "note",
    "warning",
]
AI_COLUMNS = [
    "model",
    "readers",
    "n_questions",
    "n_cases",
    "reader_mean",
    "model_accuracy",
    "difference",
    *UNCERTAINTY_COLUMNS,
]
PANEL_COLUMNS = [
    "readers",
    "n_questions",
    "n_cases",
    "mean",
    *(c for c in UNCERTAINTY_COLUMNS if c not in ("p_value", "p_fixed")),
]
DEFAULT_MIN_READERS = 4


def few_readers_warning(readers: int, min_readers: int) -> str:
    """The plain-words warning for a random-readers result from too few readers ("" if none)."""
    if readers >= min_readers:
        return ""
    return (
        f"Only {readers} readers (fewer than {min_readers}): the random-readers (OR/Hillis) "
        "interval rests on very few degrees of freedom and its p-value is unreliable (it "
        "rejects a true null too often with 2-3 readers). The fixed-readers interval "
        "(FRRC) beside it holds for these readers only, not for readers in general."
    )


def _uncertainty(result: mrmc.SingleResult, readers: int, min_readers: int) -> dict:
    return {
        "se": result.se,
        "ci_low": result.ci_low,
        "ci_high": result.ci_high,
        "p_value": result.p_value,
        "df": result.df,
        "ms_r": result.ms_r,
        "var": result.var,
        "cov2": result.cov2,
        "se_fixed": result.se_fixed,
        "ci_low_fixed": result.ci_low_fixed,
        "ci_high_fixed": result.ci_high_fixed,
        "p_fixed": result.p_fixed,
        "note": result.note,
        "warning": few_readers_warning(readers, min_readers),
    }


def _columns(data: Prepared, names: list[str]) -> list[int]:
    unknown = [n for n in names if n not in data.raters]
    if unknown:
        raise AnalysisInputError(f"unknown rater(s): {unknown}")
    return [data.raters.index(n) for n in names]


def ai_vs_readers_table(
    df: pd.DataFrame | Prepared,
    readers: list[str],
    models: list[str],
    missing: Missing = "wrong",
    alpha: float = 0.05,
    min_readers: int = DEFAULT_MIN_READERS,
) -> pd.DataFrame:
    """Per model: panel mean accuracy, model accuracy, difference (readers - model) with an
    Obuchowski-Rockette/Hillis CI and p-value (random readers, random X-rays), unclipped,
    with the variance components, and the fixed-readers (FRRC) CI and p beside it. `warning`
    is set with fewer than `min_readers` readers; `note` says why a value is not estimable.

    Computed on the questions where every reader and the model are counted under the policy
    (all questions the model was given under "wrong"; under "exclude" only those every reader
    and the model answered), so n_questions may be smaller than the accuracy table's n.
    """
    if len(readers) < 2 or not models:
        return pd.DataFrame(columns=AI_COLUMNS)
    data = prepare(df)
    values = correct_matrix(data, missing)
    reader_cols = _columns(data, readers)
    rows = []
    for model, col in zip(models, _columns(data, models), strict=True):
        block = values[:, [*reader_cols, col]]
        keep = ~np.isnan(block).any(axis=1)
        cases = data.cases[keep]
        if len(np.unique(cases)) < 2:
            continue
        reader_correct = block[keep, :-1].T
        model_correct = block[keep, -1]
        result = mrmc.ai_versus_readers(reader_correct, model_correct, alpha, cases)
        rows.append(
            {
                "model": model,
                "readers": len(readers),
                "n_questions": int(keep.sum()),
                "n_cases": len(np.unique(cases)),
                "reader_mean": float(reader_correct.mean()),
                "model_accuracy": float(model_correct.mean()),
                "difference": result.mean,
                **_uncertainty(result, len(readers), min_readers),
            }
        )
    return pd.DataFrame(rows, columns=AI_COLUMNS)


def reader_panel_accuracy(
    df: pd.DataFrame | Prepared,
    readers: list[str],
    missing: Missing = "wrong",
    alpha: float = 0.05,
    min_readers: int = DEFAULT_MIN_READERS,
) -> dict | None:
    """Mean reader accuracy with an OR/Hillis CI (random readers, X-rays; never clipped) and
    the fixed-readers CI beside it, on the questions every reader is counted on. None with
    fewer than two readers."""
    if len(readers) < 2:
        return None
    data = prepare(df)
    block = correct_matrix(data, missing)[:, _columns(data, readers)]
    keep = ~np.isnan(block).any(axis=1)
    if len(np.unique(data.cases[keep])) < 2:
        return None
    result = mrmc.panel_accuracy(block[keep].T, alpha, data.cases[keep])
    values = {
        "readers": len(readers),
        "n_questions": int(keep.sum()),
        "n_cases": len(np.unique(data.cases[keep])),
        "mean": result.mean,
        **_uncertainty(result, len(readers), min_readers),
    }
    # a test of "mean accuracy = 0" means nothing: the panel has an interval, no p-value
    return {key: values[key] for key in PANEL_COLUMNS}
