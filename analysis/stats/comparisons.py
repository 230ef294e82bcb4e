"""AI-versus-reader comparisons built from the statistics (pure, DataFrame in and out).

Both tables use the X-ray as the case: the OR/Hillis jackknife leaves out one X-ray with all
its questions (`case_id`; without the column each question is its own case).
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from analysis.stats import mrmc
from analysis.stats.bounded import LOGIT_METHOD, difference_note, logit_interval
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
    *(c for c in UNCERTAINTY_COLUMNS if c not in ("p_value", "p_fixed", "note", "warning")),
    "ci_method",
    "ci_low_untransformed",
    "ci_high_untransformed",
    "ci_low_fixed_untransformed",
    "ci_high_fixed_untransformed",
    "note",
    "warning",
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


def _with_range_note(values: dict) -> dict:
    """A difference's row, with words where its random-readers interval passes -1 or 1."""
    said = difference_note(values["ci_low"], values["ci_high"])
    if said:
        values["note"] = "; ".join(v for v in (values["note"], said) if v)
    return values


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
    is set with fewer than `min_readers` readers; `note` says why a value is not estimable
    (a model without two X-rays counted for it and every reader has a row with only the
    reason) or that the interval passes -1 or 1.

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
            rows.append(
                dict.fromkeys(AI_COLUMNS, float("nan"))
                | {
                    "model": model,
                    "readers": len(readers),
                    "n_questions": int(keep.sum()),
                    "n_cases": len(np.unique(cases)),
                    "note": no_common_questions(len(readers), model),
                    "warning": few_readers_warning(len(readers), min_readers),
                }
            )
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
                **_with_range_note(_uncertainty(result, len(readers), min_readers)),
            }
        )
    return pd.DataFrame(rows, columns=AI_COLUMNS)


def no_common_questions(readers: int, model: str | None = None) -> str:
    """Why a panel comparison has no value although there are readers (and a model): no
    question is counted for every one of them (a split-plot study without anchor questions,
    where each group reads its own X-rays; or, under "exclude", no question all answered)."""
    who = f"all {readers} readers" + (f" and {model}" if model else "")
    return (
        f"not estimable: no two X-rays have a question counted for {who} (a split-plot "
        "design without anchor questions gives each group its own X-rays; under missing = "
        "exclude, a question counts only where everyone answered it)"
    )


def reader_panel_accuracy(
    df: pd.DataFrame | Prepared,
    readers: list[str],
    missing: Missing = "wrong",
    alpha: float = 0.05,
    min_readers: int = DEFAULT_MIN_READERS,
) -> dict | None:
    """Mean reader accuracy on the questions every reader is counted on, with an interval
    that cannot leave 0-100%: the OR/Hillis (random readers, X-rays) and fixed-readers
    intervals on the logit scale (`bounded.logit_interval`); the untransformed intervals
    beside them (`*_untransformed`, never clipped: what the R packages give). None with fewer
    than two readers; a row with `note` (the reason, in words) when no two X-rays have a
    question counted for every reader."""
    if len(readers) < 2:
        return None
    data = prepare(df)
    block = correct_matrix(data, missing)[:, _columns(data, readers)]
    keep = ~np.isnan(block).any(axis=1)
    nan = float("nan")
    if len(np.unique(data.cases[keep])) < 2:
        empty = dict.fromkeys(PANEL_COLUMNS, nan)
        return empty | {
            "readers": len(readers),
            "n_questions": int(keep.sum()),
            "n_cases": len(np.unique(data.cases[keep])),
            "ci_method": LOGIT_METHOD,
            "note": no_common_questions(len(readers)),
            "warning": few_readers_warning(len(readers), min_readers),
        }
    result = mrmc.panel_accuracy(block[keep].T, alpha, data.cases[keep])
    values = {
        "readers": len(readers),
        "n_questions": int(keep.sum()),
        "n_cases": len(np.unique(data.cases[keep])),
        "mean": result.mean,
        **_uncertainty(result, len(readers), min_readers),
    }
    low, high = logit_interval(result.mean, result.se, result.df, alpha)
    low_fixed, high_fixed = logit_interval(result.mean, result.se_fixed, float("inf"), alpha)
    values |= {
        "ci_method": LOGIT_METHOD,
        "ci_low_untransformed": values["ci_low"],
        "ci_high_untransformed": values["ci_high"],
        "ci_low_fixed_untransformed": values["ci_low_fixed"],
        "ci_high_fixed_untransformed": values["ci_high_fixed"],
        "ci_low": low,
        "ci_high": high,
        "ci_low_fixed": low_fixed,
        "ci_high_fixed": high_fixed,
    }
    past = panel_range_note(values, len(readers))
    if past:
        values["note"] = "; ".join(v for v in (values["note"], past) if v)
    # a test of "mean accuracy = 0" means nothing: the panel has an interval, no p-value
    return {key: values[key] for key in PANEL_COLUMNS}


def panel_range_note(values: dict, readers: int) -> str:
    """Words for a panel whose untransformed random-readers interval passes 0 or 1: that
    interval is not usable as it stands, and the logit one that replaces it is wide."""
    low, high = values["ci_low_untransformed"], values["ci_high_untransformed"]
    if not (np.isfinite(low) and np.isfinite(high)) or (low >= 0 and high <= 1):
        return ""
    return (
        "the untransformed OR/Hillis interval (ci_low_untransformed, ci_high_untransformed) "
        "passes 0–100%: "
        f"{readers} readers (df {values['df']:.1f}) pin the mean down too little for it to be "
        "informative; the logit-scale interval is given instead"
    )
