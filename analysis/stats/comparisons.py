"""AI-versus-reader comparisons built from the statistics (pure, DataFrame in and out).

Both tables use the X-ray as the case: the OR/Hillis jackknife leaves out one X-ray with all
its questions (`case_id`; without the column each question is its own case).
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from analysis.stats import mrmc
from analysis.stats.frame import AnalysisInputError, Missing, Prepared, correct_matrix, prepare

AI_COLUMNS = [
    "model",
    "readers",
    "n_questions",
    "n_cases",
    "reader_mean",
    "model_accuracy",
    "difference",
    "ci_low",
    "ci_high",
    "p_value",
    "df",
]


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
) -> pd.DataFrame:
    """Per model: panel mean accuracy, model accuracy, difference (readers - model) with an
    Obuchowski-Rockette/Hillis CI and p-value (random readers, random X-rays).

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
                "ci_low": result.ci_low,
                "ci_high": result.ci_high,
                "p_value": result.p_value,
                "df": result.df,
            }
        )
    return pd.DataFrame(rows, columns=AI_COLUMNS)


def reader_panel_accuracy(
    df: pd.DataFrame | Prepared,
    readers: list[str],
    missing: Missing = "wrong",
    alpha: float = 0.05,
) -> dict | None:
    """Mean reader accuracy with an OR/Hillis CI clipped to [0, 1] (random readers, X-rays),
    on the questions every reader is counted on. None with fewer than two readers."""
    if len(readers) < 2:
        return None
    data = prepare(df)
    block = correct_matrix(data, missing)[:, _columns(data, readers)]
    keep = ~np.isnan(block).any(axis=1)
    if len(np.unique(data.cases[keep])) < 2:
        return None
    result = mrmc.panel_accuracy(block[keep].T, alpha, data.cases[keep])
    return {
        "readers": len(readers),
        "n_questions": int(keep.sum()),
        "n_cases": len(np.unique(data.cases[keep])),
        "mean": result.mean,
        "ci_low": result.ci_low,
        "ci_high": result.ci_high,
        "df": result.df,
    }
