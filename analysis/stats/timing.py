"""Reading time: per rater and task (median, IQR), and accuracy against reading time.

Uses the optional `time_ms` column (time the question was on screen, as recorded). A time of
0 or none means "not recorded" and is left out; only answered questions have a time.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from analysis.stats.clustered import clustered_proportion_ci
from analysis.stats.frame import ACCEPTED, ALL, LETTERS, AnalysisInputError, right

TIME_COLUMNS = ["rater", "task", "n", "median_s", "q1_s", "q3_s", "total_min"]
BIN_COLUMNS = [
    "rater",
    "time_bin",
    "n",
    "min_s",
    "median_s",
    "max_s",
    "correct",
    "accuracy",
    "ci_low",
    "ci_high",
    "x_rays",
]


def _timed(df: pd.DataFrame, raters: list[str]) -> pd.DataFrame:
    if "time_ms" not in df.columns:
        raise AnalysisInputError("no column 'time_ms'")
    timed = df[df["rater"].isin(raters)]
    seconds = pd.to_numeric(timed["time_ms"], errors="coerce") / 1000.0
    answered = timed["answer"].map(lambda v: str(v).strip().upper() in LETTERS)
    keep = answered & (seconds > 0)
    columns = ["rater", "task", "answer", "correct_answer"]
    extra = [c for c in ("case_id", ACCEPTED) if c in timed]
    out = timed.loc[keep, columns + extra].copy()
    if "case_id" not in out:
        out["case_id"] = timed.loc[keep, "question_id"] if "question_id" in timed else out.index
    out["seconds"] = seconds[keep]
    out["correct"] = right(out.assign(answer=out["answer"].astype(str).str.strip().str.upper()))
    return out


def reading_time_table(df: pd.DataFrame, raters: list[str]) -> pd.DataFrame:
    """Per rater and task (and "All"): n timed answers, median and IQR in seconds, total time."""
    timed = _timed(df, raters)
    rows = []
    tasks = sorted(timed["task"].dropna().astype(str).unique())
    for rater in raters:
        mine = timed[timed["rater"] == rater]
        for task in [*tasks, ALL]:
            part = mine if task == ALL else mine[mine["task"] == task]
            seconds = part["seconds"].to_numpy()
            q1, median, q3 = (
                np.quantile(seconds, [0.25, 0.5, 0.75]) if len(seconds) else (np.nan,) * 3
            )
            rows.append(
                {
                    "rater": rater,
                    "task": task,
                    "n": len(seconds),
                    "median_s": median,
                    "q1_s": q1,
                    "q3_s": q3,
                    "total_min": seconds.sum() / 60.0,
                }
            )
    return pd.DataFrame(rows, columns=TIME_COLUMNS)


def accuracy_by_time(
    df: pd.DataFrame,
    raters: list[str],
    bins: int = 4,
    alpha: float = 0.05,
    method: str = "wilson",
) -> pd.DataFrame:
    """Per rater, their timed answers split into `bins` groups by their own reading time
    (quartiles by default): accuracy with a Wilson (or Clopper-Pearson) CI on the effective
    sample size by X-ray, as the accuracy table. Does slower mean better?"""
    timed = _timed(df, raters)
    rows = []
    for rater in raters:
        mine = timed[timed["rater"] == rater].sort_values("seconds", kind="stable")
        if mine.empty:
            continue
        groups = np.array_split(np.arange(len(mine)), min(bins, len(mine)))
        for k, part in enumerate(mine.iloc[g] for g in groups):
            n, correct = len(part), int(part["correct"].sum())
            per_xray = part.groupby("case_id", sort=False)["correct"].agg(["sum", "size"])
            ci = clustered_proportion_ci(
                per_xray["sum"].to_numpy(float), per_xray["size"].to_numpy(float), alpha, method
            )
            rows.append(
                {
                    "rater": rater,
                    "time_bin": k + 1,
                    "n": n,
                    "min_s": part["seconds"].min(),
                    "median_s": part["seconds"].median(),
                    "max_s": part["seconds"].max(),
                    "correct": correct,
                    "accuracy": correct / n,
                    "ci_low": float(ci.ci_low[0]),
                    "ci_high": float(ci.ci_high[0]),
                    "x_rays": len(per_xray),
                }
            )
    return pd.DataFrame(rows, columns=BIN_COLUMNS)
