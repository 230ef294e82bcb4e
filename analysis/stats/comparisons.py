"""AI-versus-reader comparisons built from the statistics (pure, DataFrame in and out)."""

from __future__ import annotations

import numpy as np
import pandas as pd

from analysis import stats
from analysis.stats import mrmc


def ai_vs_readers_table(
    df: pd.DataFrame, readers: list[str], models: list[str], missing: stats.Missing = "wrong"
) -> pd.DataFrame:
    """Per model: panel mean accuracy, model accuracy, difference (readers - model) with an
    Obuchowski-Rockette/Hillis 95% CI and p-value (random readers, random cases)."""
    columns = [
        "model",
        "readers",
        "reader_mean",
        "model_accuracy",
        "difference",
        "ci_low",
        "ci_high",
        "p_value",
        "df",
        "n_cases",
    ]
    if len(readers) < 2 or not models:
        return pd.DataFrame(columns=columns)
    wide = stats.correct_wide(df, missing)  # questions x raters, NaN = excluded missing
    rows = []
    for model in models:
        block = wide[[*readers, model]].dropna()
        if len(block) < 2:
            continue
        reader_correct = block[readers].to_numpy().T
        model_correct = block[model].to_numpy()
        result = mrmc.ai_versus_readers(reader_correct, model_correct)
        rows.append(
            {
                "model": model,
                "readers": len(readers),
                "reader_mean": float(reader_correct.mean()),
                "model_accuracy": float(model_correct.mean()),
                "difference": result.mean,
                "ci_low": result.ci_low,
                "ci_high": result.ci_high,
                "p_value": result.p_value,
                "df": result.df,
                "n_cases": len(block),
            }
        )
    return pd.DataFrame(rows, columns=columns)


def pairwise_mcnemar(df: pd.DataFrame, raters: list[str], missing: stats.Missing = "wrong"):
    """Exact McNemar p-values for every pair of raters (symmetric DataFrame)."""
    out = pd.DataFrame(np.nan, index=raters, columns=raters)
    for i, a in enumerate(raters):
        for b in raters[i + 1 :]:
            out.loc[a, b] = out.loc[b, a] = stats.mcnemar_test(df, a, b, missing).pvalue
    return out
