"""The analysis page's section on confidence, ROC and calibration: which of each table's
columns the page shows (the CSV, the XLSX and the API keep every column), in plain words,
with an interval in one cell, and what each table rests on. A study without a confidence
scale has no such section.
"""

from __future__ import annotations

import math

import pandas as pd

from analysis.reporting import table_arm

# Page title per table (analysis.confidence_analysis.CONFIDENCE_TABLES), and the columns shown:
# (label, column) or (label, (estimate, low, high)) for an estimate with its interval.
TITLES = {
    "auc": "AUC per reader and arm, and per AI model that gave probabilities",
    "auc_difference": "The arms compared on AUC: OR/Hillis",
    "auc_variance_components": "Variance components of the AUC comparison",
    "auc_power": "Power on AUC: readers × X-rays for a future study",
    "auc_vs_models": "Readers against AI models on AUC",
    "roc_counts": "Binary questions rated per reader and arm",
    "roc_operating_points": "The answers' operating points",
    "calibration": "Calibration: Brier score and expected calibration error",
    "accuracy_by_confidence": "Accuracy per confidence level",
    "confidence_discrimination": "Does confidence tell right answers from wrong?",
}
COLUMNS = {
    "auc": [
        ("Arm", "modality"),
        ("Rater", "reader"),
        ("Analysis", "analysis"),
        ("Positives", "positives"),
        ("Negatives", "negatives"),
        ("AUC [CI]", ("auc", "ci_low", "ci_high")),
        ("df", "df"),
        ("Note", "note"),
    ],
    "auc_difference": [
        ("Comparison", "comparison"),
        ("Covariance", "covariance"),
        ("Analysis", "analysis"),
        ("Reference mean", "reference_mean"),
        ("Test mean", "test_mean"),
        ("Difference [CI]", ("difference", "ci_low", "ci_high")),
        ("SE", "se"),
        ("df", "df"),
        ("p", "p_value"),
        ("Test", "test"),
        ("Value", "test_value"),
        ("Readers", "readers"),
        ("X-rays", "x_rays"),
        ("Warning", "warning"),
    ],
    "auc_vs_models": [
        ("Arm", "modality"),
        ("Model", "model"),
        ("Readers", "readers"),
        ("Questions", "n_questions"),
        ("Reader mean", "reader_mean"),
        ("Model AUC", "model_auc"),
        ("Readers − model [CI, random readers]", ("difference", "ci_low", "ci_high")),
        ("df", "df"),
        ("p", "p_value"),
        ("CI, fixed readers", (None, "ci_low_fixed", "ci_high_fixed")),
        ("p (fixed)", "p_fixed"),
        ("Note", "note"),
    ],
    "calibration": [
        ("Arm", "arm"),
        ("Rater", "rater"),
        ("n", "n"),
        ("X-rays", "x_rays"),
        ("Mean probability", "mean_probability"),
        ("Observed", "observed"),
        ("Brier [CI]", ("brier", "brier_ci_low", "brier_ci_high")),
        ("ECE", "ece"),
        ("ECE bias-corrected [CI]", ("ece_bias_corrected", "ece_ci_low", "ece_ci_high")),
    ],
    "accuracy_by_confidence": [
        ("Arm", "arm"),
        ("Rater", "rater"),
        ("Confidence", "confidence"),
        ("n", "n"),
        ("Correct", "correct"),
        ("Accuracy [CI]", ("accuracy", "ci_low", "ci_high")),
        ("X-rays", "x_rays"),
    ],
    "confidence_discrimination": [
        ("Arm", "arm"),
        ("Rater", "rater"),
        ("n", "n"),
        ("Right", "right"),
        ("Wrong", "wrong"),
        ("AUC right vs wrong [CI]", ("auc", "ci_low", "ci_high")),
        ("Note", "note"),
    ],
}
# Long tables the page folds away (<details>), and tables it does not show at all (their
# numbers are drawn: roc_points in the ROC figure; calibration_bins in the calibration one).
FOLDED = (
    "auc_variance_components",
    "auc_power",
    "roc_counts",
    "roc_operating_points",
    "accuracy_by_confidence",
)
NOT_SHOWN = ("roc_points", "calibration_bins")


def cell(value) -> str:
    if value is None or value is pd.NA:  # pd.NA: an empty cell of a column of whole numbers
        return "–"
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, float):
        if not math.isfinite(value):
            return "∞" if value == math.inf else "–"
        return f"{value:.3f}".replace("-", "−")
    if hasattr(value, "item"):
        return cell(value.item())
    return str(value)


def _value(row: dict, spec) -> str:
    if not isinstance(spec, tuple):
        return cell(row.get(spec))
    estimate, low, high = spec
    interval = f"[{cell(row.get(low))}, {cell(row.get(high))}]"
    if row.get(low) is None or cell(row.get(low)) == "–":
        interval = ""
    shown = cell(row.get(estimate)) if estimate else ""
    return f"{shown} {interval}".strip() or "–"


def page_table(name: str, table, facts: dict, key_version: str, fast: str = "") -> dict:
    """One table for the page: title, labels, rows of text, what it rests on (unit, method,
    policy, key version, arm, and `fast`: how too-fast answers were treated)."""
    data = table.data
    spec = COLUMNS.get(name)
    if spec is None or ("note" in data.columns and len(data.columns) == 1):
        spec = [(column.replace("_", " ").capitalize(), column) for column in data.columns]
    spec = [
        (label, column)
        for label, column in spec
        if (column[0] or column[1] if isinstance(column, tuple) else column) in data.columns
    ]
    if "note" in data.columns and all(column != "note" for _, column in spec):
        spec.append(("Note", "note"))  # a row's reason for an empty or odd interval: shown
    rows = [[_value(row, column) for _, column in spec] for row in data.to_dict("records")]
    arm = table_arm(facts, name)
    return {
        "name": name,
        "title": TITLES.get(name, name),
        "labels": [label for label, _ in spec],
        "rows": rows,
        "folded": name in FOLDED,
        "about": [
            *table.header_lines(),
            f"key_version: {key_version}",
            *([f"arm: {arm}"] if arm else []),
            *([fast] if fast else []),
        ],
    }


def confidence_section(result) -> dict:
    """The section's context: the scale and rule in words, every shown table in order, the
    refusal when the ratings could not be analysed; {} for a study without a scale."""
    from analysis.stats import describe_scale

    if result.confidence_error:
        return {"confidence_error": result.confidence_error}
    confidence = result.confidence
    if not confidence:
        return {}
    tables = confidence["tables"]
    return {
        "confidence": {
            "scale": describe_scale(confidence["scale"]),
            "rule": confidence["rule"],
            "binary": "auc" in tables,
            # The ZIP's mrmc/ folder holds the ratings of a comparison of two arms only.
            "packaged": bool(confidence.get("compared")),
            "tables": {
                name: page_table(
                    name, table, result.facts, result.key_version, result.confidence_fast_line()
                )
                for name, table in tables.items()
                if name not in NOT_SHOWN
            },
        }
    }
