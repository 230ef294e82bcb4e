"""Each reader's two arms side by side: their accuracy unaided and aided (or first and final
answer) and the difference with its CI, from the two-arm OR/Hillis result itself.

The accuracies are the analysis's figures of merit (the questions every reader of the group
read in both arms); the difference's CI is the fixed-readers, reader-specific comparison
MRMCaov reports (`or_accuracy.reader_differences`). The aided-vs-unaided figure draws this
table, so the figure and the CSV show the same numbers.
"""

from __future__ import annotations

import pandas as pd

from analysis.stats.bounded import difference_note
from analysis.stats.design_frame import DesignTable
from analysis.stats.or_accuracy import reader_differences

COLUMNS = [
    "reader",
    "reference_arm",
    "test_arm",
    "reference_accuracy",
    "test_accuracy",
    "difference",
    "se",
    "ci_low",
    "ci_high",
    "note",
]


def reader_arms_table(results: dict, alpha: float, policy: str) -> DesignTable | None:
    """The table for `results` (design_results' dict); None when nothing is compared yet."""
    computed, cube = results.get("result"), results.get("cube")
    if computed is None or cube is None:
        return None
    per = reader_differences(computed, alpha)
    reference, test = cube.modalities.labels
    data = pd.DataFrame(
        {
            "reader": cube.readers,
            "reference_arm": reference,
            "test_arm": test,
            "reference_accuracy": per[0],
            "test_accuracy": per[1],
            "difference": per[2],
            "se": per[3],
            "ci_low": per[4],
            "ci_high": per[5],
            "note": [difference_note(lo, hi) for lo, hi in zip(per[4], per[5], strict=True)],
        },
        columns=COLUMNS,
    )
    level = f"{(1 - alpha) * 100:g}%"
    return DesignTable(
        data,
        "X-ray: a reader's accuracy is over the questions compared; the jackknife leaves out "
        "whole X-rays",
        f"each reader's accuracy in each arm (the OR/Hillis figures of merit); test − reference "
        f"with a {level} CI, fixed readers, reader-specific: Var = 2 (Var_j − Cov1_j) from the "
        "jackknife by X-ray, normal reference (MRMCaov's per-reader comparison); not clipped "
        "to −1..1 (a note says where it passes)",
        policy,
    )
