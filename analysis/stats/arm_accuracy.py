"""Accuracy per reading arm of a designed study: descriptive, before the MRMC comparison.

Takes the design frame (analysis.design_frame): one row per reader, arm and question.
"""

from __future__ import annotations

import pandas as pd

from analysis.stats.frame import AnalysisInputError, Missing


def arm_accuracy(frame: pd.DataFrame, missing: Missing = "wrong") -> pd.DataFrame:
    """Per arm: readers, readings counted, correct, pooled accuracy (correct / readings) and
    the mean of the readers' own accuracies (each reader weighs the same). Under "wrong" an
    unanswered question counts as a wrong reading; under "exclude" it is not counted. No
    interval: readings of one case by several readers are not independent (the two-arm MRMC
    analysis gives the comparison with its interval)."""
    if missing not in ("wrong", "exclude"):
        raise AnalysisInputError("missing must be 'wrong' or 'exclude'")
    columns = ["arm", "readers", "readings", "correct", "accuracy", "mean_reader_accuracy"]
    if frame.empty:
        return pd.DataFrame(columns=columns)
    data = frame if missing == "wrong" else frame[frame["answer"].notna()]
    data = data.assign(right=(data["answer"] == data["correct_answer"]).astype(int))
    rows = []
    for arm, part in data.groupby("arm", sort=False):
        per_reader = part.groupby("reader")["right"].mean()
        rows.append(
            {
                "arm": arm,
                "readers": int(part["reader"].nunique()),
                "readings": len(part),
                "correct": int(part["right"].sum()),
                "accuracy": part["right"].mean() if len(part) else float("nan"),
                "mean_reader_accuracy": per_reader.mean() if len(per_reader) else float("nan"),
            }
        )
    rows.sort(key=lambda row: row["arm"] != "unaided")  # unaided first, then aided
    return pd.DataFrame(rows, columns=columns)
