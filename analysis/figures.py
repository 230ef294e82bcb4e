"""The analysis's figures, declared once: each one's name, what it shows (the page's alt text,
the ZIP's README.txt), the arm its numbers come from, and how it is drawn from a result.

The page, the ZIP, the single downloads, `export_analysis` and the analysis task all list the
figures from `figure_builders`; nothing else names them.

In a two-arm study the accuracy, κ and reading-time figures show the counted arm (the
unaided reads: `annotation.sessions.counted_arm`), and say so in their title and footnote;
`aided_vs_unaided` shows both arms, per reader, from the two-arm OR/Hillis analysis
(`analysis.stats.or_accuracy`), so its numbers are the aided-vs-unaided tables' numbers.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

import numpy as np
import pandas as pd

from analysis.confidence_analysis import LEFT_OUT, POOLED
from analysis.pipeline import AnalysisResult
from analysis.reporting import counted_arm
from analysis.stats import logit_interval

if TYPE_CHECKING:
    from matplotlib.figure import Figure

# Name (file stem; "kappa" is one figure per scale, kappa_<scale>) -> what it shows, in the
# order the page shows them.
FIGURES: dict[str, str] = {
    "aided_vs_unaided": (
        "Each reader's accuracy unaided and aided, and the aided − unaided difference per reader "
        "and for the panel, with confidence intervals"
    ),
    "accuracy_by_task": (
        "Bar chart of accuracy by task for each reader and model, with confidence intervals"
    ),
    "accuracy_by_category": "Bar chart of accuracy by category for each reader and model",
    "kappa": "Heatmaps of Cohen's kappa between every pair of raters, for all tasks and each task",
    "reading_time": "Reading time per reader and task, and accuracy by reading-time quartile",
    # A study with a confidence scale (analysis.confidence_analysis):
    "roc_curves": (
        "Empirical ROC curves of the binary questions per reader and arm, with the AI models' "
        "curves and every rater's operating point"
    ),
    "calibration": (
        "Calibration: reliability diagram of the probabilities given (readers on a 0-100 "
        "scale, AI models) and accuracy per confidence level"
    ),
}


def figure_kind(name: str) -> str:
    """The FIGURES entry of figure `name` (kappa_answer -> kappa)."""
    return "kappa" if name.startswith("kappa_") else name


def _design(result: AnalysisResult) -> dict:
    return (result.facts or {}).get("design") or {}


def figure_arm(result: AnalysisResult) -> str:
    """The counted arm (reporting.counted_arm) when the study has an aided arm, for a figure
    to name; "" for a study read unaided only (nothing to say)."""
    if "aided" not in (_design(result).get("arms") or []):
        return ""
    return counted_arm(result.facts) or ""


def arm_title(result: AnalysisResult, title: str) -> str:
    """`title`, naming the arm it shows when the study has an aided arm."""
    arm = figure_arm(result)
    return f"{title} ({arm} arm)" if arm else title


def arm_note(result: AnalysisResult) -> str:
    """The footnote's first sentence: which reads the figure counts (empty for a study read
    unaided only)."""
    arms = list(_design(result).get("arms") or [])
    arm = figure_arm(result)
    if not arm:
        return ""
    if len(arms) > 1:
        return (
            f"The {arm} arm only: each reader once per question, from their {arm} session; "
            "both arms are compared in the aided_vs_unaided figure and the arm tables. "
        )
    return "Aided reading: every reader read with the AI's answer on screen. "


def drawing():
    """analysis.plots (matplotlib), imported by the process that draws a figure: listing
    the figures (the page) or serving drawn ones does not need it."""
    from analysis import plots

    return plots


def kappa_spans(pairs: pd.DataFrame | None) -> dict[str, tuple[int, int]]:
    """Per panel: smallest and largest n of a pair (questions both answered), from one
    scale's kappa pairs."""
    if pairs is None or pairs.empty:
        return {}
    grouped = pairs.groupby("task")["n"]
    return {
        task: (int(lo), int(hi))
        for task, lo, hi in zip(grouped.min().index, grouped.min(), grouped.max(), strict=True)
    }


def kappa_counts(pairs: pd.DataFrame | None) -> dict[str, pd.DataFrame]:
    """Per panel: questions both raters answered, as a symmetric rater x rater matrix, from
    one scale's kappa pairs."""
    if pairs is None or pairs.empty:
        return {}
    out = {}
    for task, part in pairs.groupby("task"):
        both = pd.concat([part, part.rename(columns={"rater_a": "rater_b", "rater_b": "rater_a"})])
        out[task] = both.pivot(index="rater_a", columns="rater_b", values="n")
    return out


def arm_comparison(result: AnalysisResult) -> tuple[pd.DataFrame, pd.DataFrame] | None:
    """The aided-vs-unaided figure's numbers: per reader (reader, reference, test,
    difference, ci_low, ci_high: the reader_arms table) and per panel analysis (label, each
    arm's mean with its interval, the difference with its CI: the mrmc_difference table's),
    all from the two-arm OR/Hillis result; None when there is no comparison (single arm, or
    not estimable yet)."""
    design = result.design or {}
    computed, table = design.get("result"), result.design_table("reader_arms")
    if computed is None or table is None:
        return None
    readers = table.data.rename(
        columns={"reference_accuracy": "reference", "test_accuracy": "test"}
    )[["reader", "reference", "test", "difference", "ci_low", "ci_high"]]
    reference, test = computed.means
    # An arm's mean is a proportion: its interval on the logit scale (as the reader panel's),
    # which cannot leave 0-100%; the differences keep OR/Hillis's own, as the MRMC table.
    alpha = result.settings.alpha
    ref_low, ref_high = logit_interval(reference.estimate, reference.se, reference.df, alpha)
    test_low, test_high = logit_interval(test.estimate, test.se, test.df, alpha)
    panel = pd.DataFrame(
        [
            {
                "label": f"Panel ({name} readers)",
                "reference": reference.estimate,
                "reference_low": ref_low if name == "random" else np.nan,
                "reference_high": ref_high if name == "random" else np.nan,
                "test": test.estimate,
                "test_low": test_low if name == "random" else np.nan,
                "test_high": test_high if name == "random" else np.nan,
                "difference": comparison.estimate,
                "ci_low": comparison.ci_low,
                "ci_high": comparison.ci_high,
            }
            for name, comparison in (("random", computed.random), ("fixed", computed.fixed))
        ]
    )
    return readers, panel


def arm_figure_note(result: AnalysisResult) -> str:
    """The aided-vs-unaided figure's footnote: what is counted, each interval's method and
    the policy, from the analysis it draws."""
    design = result.design or {}
    computed, cube = design["result"], design["cube"]
    s = result.settings
    reference, test = cube.modalities.labels
    random = computed.random
    df = f"df {random.df:.1f}" if np.isfinite(random.df) else "df ∞"
    missing = (
        "a missing answer counts as wrong"
        if s.missing == "wrong"
        else "missing answers are left out of n"
    )
    return (
        f"{len(cube.readers)} readers, {cube.n_questions} questions on {len(cube.case_ids)} "
        f"X-rays read in both ({cube.modalities.sentence}). Left: each reader's accuracy; "
        f"panel: mean of readers, {s.level} CI OR/Hillis (random readers) on the logit scale. "
        f"Right: {test} − "
        f"{reference} per reader with a {s.level} CI (fixed readers, reader-specific: jackknife "
        f"by X-ray, normal reference), as in the reader_arms table; panel: random readers and "
        f"X-rays (OR/Hillis, {df}) and fixed readers (normal), as in the mrmc_difference table; "
        f"dashed: the non-inferiority "
        f"margin −{s.ni_margin:g}. Differences' intervals as computed (not clipped). "
        f"{missing.capitalize()}."
    )


def roc_drawing():
    """analysis.roc_plots (matplotlib), imported by the process that draws."""
    from analysis import roc_plots

    return roc_plots


def roc_note(result: AnalysisResult) -> str:
    """The ROC figure's footnote: what is counted, the rule, the curves' method, policy."""
    confidence = result.confidence
    tables = confidence["tables"]
    counts = tables["roc_counts"].data
    questions = confidence["ratings"].drop_duplicates("question_id")
    return (
        f"{len(questions)} binary questions on {questions['case_id'].nunique()} X-rays "
        f"({int(questions['truth'].sum())} with the finding present by the key, under the "
        f"{result.key_version}); {int(counts['rated'].sum())} ratings. "
        f"{confidence['rule'][0].upper()}{confidence['rule'][1:]}. Each curve joins a rater's "
        "empirical operating points ('present' when the rating is at least t, for every "
        "rating t) with straight lines: the area under it is the empirical AUC (legend; per "
        "arm, unaided first). Large markers: the answers' own operating point. AI models: "
        "their probability that the finding is present as the rating. A question a reader did "
        "not rate is left out of their curve." + _not_drawn(tables["auc"].data)
    )


def _not_drawn(auc: pd.DataFrame) -> str:
    """The raters the curves leave out (confidence_analysis.estimable), in words, or ""."""
    if "note" not in auc.columns or "reader" not in auc.columns:
        return ""
    out = auc[auc["note"].fillna("").str.endswith(LEFT_OUT)]
    if out.empty:
        return ""
    names = ", ".join(f"{r} ({m})" for r, m in zip(out["reader"], out["modality"], strict=True))
    return f" Not drawn (no AUC interval yet: auc table's note): {names}."


def calibration_note(result: AnalysisResult) -> str:
    tables = result.confidence["tables"]
    parts = []
    if "calibration" in tables:
        parts.append(f"Left: {tables['calibration'].method}.")
    levels = tables["accuracy_by_confidence"]
    parts.append(
        f"{'Right' if 'calibration' in tables else 'Accuracy per confidence level'}: "
        f"{levels.method}. {result.settings.level} CIs."
    )
    return " ".join(parts)


def confidence_figures(result: AnalysisResult) -> dict[str, Callable[[], Figure]]:
    """The ROC and calibration figures of a study with a confidence scale (none without)."""
    confidence = result.confidence
    if not confidence:
        return {}
    tables, out = confidence["tables"], {}
    points = tables.get("roc_points")
    if points is not None and not points.data.empty:
        operating = tables["roc_operating_points"].data
        aucs = tables["auc"].data
        aucs = aucs[aucs.get("analysis", pd.Series(dtype=str)).str.startswith("this ")]
        arms = [a for a in confidence["arms"] if (points.data["modality"] == a).any()]
        roc = roc_note(result)
        out["roc_curves"] = lambda: roc_drawing().roc_figure(
            points.data, operating, aucs, arms=arms, note=roc, title="ROC curves"
        )
    levels = tables.get("accuracy_by_confidence")
    if levels is not None:
        bins = tables.get("calibration_bins")
        models = result.models
        calibrated = calibration_note(result)
        out["calibration"] = lambda: roc_drawing().calibration_figure(
            bins.data if bins is not None else None,
            levels.data,
            models=models,
            pooled=POOLED,
            note=calibrated,
            title="Calibration: do stated confidence and correctness agree?",
        )
    return out


def figure_builders(result: AnalysisResult) -> dict[str, Callable[[], Figure]]:
    """Figure name -> function drawing it; only figures with something to show, in FIGURES
    order. The functions hold the small tables they draw, not the result: an export lets the
    long frames go before it draws (exports.write_files)."""
    s, models = result.settings, result.models
    left = result.left_out()  # counts for the footnotes: questions excluded and rejected
    out: dict[str, Callable[[], Figure]] = {}
    compared = arm_comparison(result)
    if compared is not None:
        readers, panel = compared
        labels = result.design["cube"].modalities.labels
        note = arm_figure_note(result)
        out["aided_vs_unaided"] = lambda: drawing().arm_figure(
            readers,
            panel,
            labels=labels,
            margin=s.ni_margin,
            note=note,
            title=f"{labels[1].capitalize()} against {labels[0]}, per reader",
        )
    accuracy, by_category = result.accuracy, result.accuracy_by_category
    arm, shown_arm = arm_note(result), figure_arm(result)
    titles = {
        name: arm_title(result, name)
        for name in ("Accuracy by task", "Accuracy by category", "Reading time")
    }
    if not accuracy.empty:
        out["accuracy_by_task"] = lambda: drawing().accuracy_figure(
            accuracy,
            models=models,
            note=arm + s.note("accuracy", left_out=left),
            title=titles["Accuracy by task"],
        )
        out["accuracy_by_category"] = lambda: drawing().accuracy_figure(
            by_category,
            models=models,
            by="category",
            note=arm + s.note("accuracy", left_out=left),
            title=titles["Accuracy by category"],
        )
    for scale, matrices in result.kappa_by_scale.items():
        # The policy's scale only: the other scale's tables are in every export, and its
        # figure is one switch away (a kappa figure is the slowest thing to draw). With one
        # rater (a practice set's analysis, a study one reader has answered) there is no pair:
        # no figure, rather than an empty one.
        if scale == s.scale and any(len(matrix) >= 2 for matrix in matrices.values()):
            pairs = result.kappa_pairs.get(scale)
            out[f"kappa_{scale}"] = lambda scale=scale, matrices=matrices, pairs=pairs: (
                drawing().kappa_figure(
                    matrices,
                    scale=scale,
                    vrange=s.vrange,
                    models=models,
                    n_by_panel=kappa_spans(pairs),
                    n_matrices=kappa_counts(pairs),
                    note=arm + s.note("kappa", scale, left),
                    arm=shown_arm,
                )
            )
    times, by_time = result.reading_time, result.accuracy_by_time
    if not times.empty and times["n"].sum() > 0:
        out["reading_time"] = lambda: drawing().time_figure(
            times,
            by_time,
            note=arm + s.note("time", left_out=left),
            title=titles["Reading time"] if shown_arm else "",
        )
    out |= confidence_figures(result)
    return out
