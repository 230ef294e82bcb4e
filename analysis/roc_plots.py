"""The figures of a study with a confidence scale: ROC curves per reader and arm with the AI
models' curves and every rater's operating point, and the calibration figure (reliability
diagram of the probabilities given; accuracy per confidence level).

Drawn as the other figures are (analysis.plots: matplotlib's object API, the house
style, readers' colours and markers, text kept as text, a footnote passed in).
"""

from __future__ import annotations

import numpy as np
import pandas as pd
from matplotlib.figure import Figure
from matplotlib.lines import Line2D

from analysis.plots import (
    _bottom_legend,
    _colours,
    _footnote,
    _lay_out,
    _legend_columns,
    _markers,
    _subplots,
    _whiskers,
)

MODEL_COLOUR = "#000000"
MODEL_STYLES = ["--", ":", "-.", (0, (5, 1, 1, 1))]


def roc_figure(
    points: pd.DataFrame,
    operating: pd.DataFrame,
    aucs: pd.DataFrame,
    *,
    arms: list[str],
    note: str = "",
    title: str = "",
) -> Figure:
    """One panel per arm: each reader's empirical ROC curve (points joined by straight lines,
    the trapezoidal AUC's curve) with a marker at every operating point of their ratings and
    a larger filled one at their answers' operating point ('present' answered); each AI
    model's curve (black, its probabilities as ratings) and its answers' point in every panel.

    `points`: modality, reader, fpr, tpr (modality "model" for the models); `operating`:
    modality, reader, fpr, tpr; `aucs`: modality, reader, auc (the legend's numbers)."""
    readers = [str(r) for r in dict.fromkeys(points.loc[points["modality"] != "model", "reader"])]
    models = [str(m) for m in dict.fromkeys(points.loc[points["modality"] == "model", "reader"])]
    colours = dict(zip(readers, _colours(readers), strict=True))
    markers = dict(zip(readers, _markers(readers), strict=True))
    auc = {(str(m), str(r)): a for m, r, a in aucs[["modality", "reader", "auc"]].itertuples(False)}
    # a panel at least 4.6 inches square, whatever the legend under it takes
    fig, axes = _subplots(1, len(arms), figsize=(max(8.0, 5.2 * len(arms)), 7.0))
    axes = np.atleast_1d(axes)

    def point_of(modality: str, rater: str) -> tuple[float, float] | None:
        row = operating[(operating["modality"] == modality) & (operating["reader"] == rater)]
        return None if row.empty else (float(row["fpr"].iloc[0]), float(row["tpr"].iloc[0]))

    for ax, arm in zip(axes, arms, strict=True):
        ax.plot([0, 1], [0, 1], color="#bbbbbb", lw=0.8, ls=":")
        for reader in readers:
            curve = points[(points["modality"] == arm) & (points["reader"] == reader)]
            if curve.empty:
                continue
            ax.plot(
                curve["fpr"],
                curve["tpr"],
                color=colours[reader],
                marker=markers[reader],
                ms=3,
                lw=1,
                label=reader,
            )
            answered = point_of(arm, reader)
            if answered is not None:
                ax.plot(
                    *answered,
                    marker=markers[reader],
                    ms=8,
                    color=colours[reader],
                    mec="black",
                    mew=0.8,
                    ls="none",
                )
        for k, model in enumerate(models):
            curve = points[(points["modality"] == "model") & (points["reader"] == model)]
            ax.plot(
                curve["fpr"],
                curve["tpr"],
                color=MODEL_COLOUR,
                ls=MODEL_STYLES[k % len(MODEL_STYLES)],
                lw=1.3,
            )
            answered = point_of("model", model)
            if answered is not None:
                ax.plot(*answered, marker="*", ms=11, color=MODEL_COLOUR, ls="none")
        means = [auc[(arm, r)] for r in readers if (arm, r) in auc]
        ax.set_title(
            f"{arm.capitalize()}: readers' mean AUC {np.mean(means):.3f}"
            if means
            else arm.capitalize(),
            fontsize=10,
        )
        ax.set_xlim(-0.02, 1.02)
        ax.set_ylim(-0.02, 1.02)
        ax.set_aspect("equal")
        ax.set_xlabel("False positive rate (1 − specificity)")
        ax.set_ylabel("True positive rate (sensitivity)")
        ax.grid(alpha=0.25)
    handles = [Line2D([], [], color=colours[r], marker=markers[r], ms=4, lw=1) for r in readers]
    labels = [
        f"{r} (AUC " + ", ".join(f"{auc[(a, r)]:.3f}" for a in arms if (a, r) in auc) + ")"
        for r in readers
    ]
    for k, model in enumerate(models):
        handles.append(Line2D([], [], color=MODEL_COLOUR, ls=MODEL_STYLES[k % 4], lw=1.3))
        labels.append(f"{model} (AI; AUC {auc.get(('model', model), float('nan')):.3f})")
    handles.append(Line2D([], [], color="#666", marker="o", ms=8, mec="black", ls="none"))
    labels.append(
        "the answers' operating point ('present' answered)" + ("; AI: ★" if models else "")
    )
    if title:
        fig.suptitle(title, fontsize=11)
    bottom = _footnote(fig, note)
    cols, legend_in = _legend_columns(labels, fig.get_figwidth() - 0.2)
    _bottom_legend(fig, handles, labels, bottom=bottom, cols=cols)
    _lay_out(fig, bottom + (legend_in + 0.3) / fig.get_figheight())
    return fig


ARM_STYLES = {"unaided": ("--", "white"), "aided": ("-", None)}


def _labelled(table: pd.DataFrame, models: list[str]) -> pd.Series:
    """Each row's rater as a legend names it: the arm after a reader's name when the table
    has more than one readers' arm, "(AI)" after a model's."""
    arms = table.loc[~table["rater"].isin(models), "arm"].nunique()
    return pd.Series(
        [
            f"{r} (AI)" if r in models else (f"{r} ({a})" if arms > 1 else str(r))
            for r, a in zip(table["rater"], table["arm"], strict=True)
        ],
        index=table.index,
    )


def calibration_figure(
    bins: pd.DataFrame | None,
    levels: pd.DataFrame,
    *,
    models: list[str],
    pooled: str,
    note: str = "",
    title: str = "",
) -> Figure:
    """Left (when anyone gave probabilities): the reliability diagram, each rater's bins'
    mean probability against the observed frequency with its interval, the diagonal being
    perfect calibration. Right: accuracy per confidence level, the readers pooled per arm
    with intervals (thin lines: each reader): rising with confidence when readers know when
    they are right.

    `bins`: arm, rater, mean_probability, observed, ci_low, ci_high; `levels`: arm, rater,
    confidence, accuracy, ci_low, ci_high (`pooled` names each arm's pooled rows)."""
    panels = 2 if bins is not None and not bins.empty else 1
    fig, axes = _subplots(1, panels, figsize=(5.4 * panels, 5.2))
    axes = list(np.atleast_1d(axes))
    handles: dict[str, object] = {}
    if panels == 2:
        ax = axes.pop(0)
        bins = bins.assign(label=_labelled(bins, models))
        raters = [str(r) for r in dict.fromkeys(bins["label"])]
        colours = dict(zip(raters, _colours(raters), strict=True))
        markers = dict(zip(raters, _markers(raters), strict=True))
        ax.plot([0, 100], [0, 100], color="#999999", lw=0.8, ls=":")
        for rater in raters:
            part = bins[bins["label"] == rater]
            observed = part["observed"].to_numpy(float) * 100
            below, above = _whiskers(observed, part["ci_low"], part["ci_high"])
            model = part["rater"].iloc[0] in models
            handles[rater] = ax.errorbar(
                part["mean_probability"].to_numpy(float) * 100,
                observed,
                yerr=[below, above],
                fmt=("*" if model else markers[rater]) + ("--" if model else "-"),
                ms=7 if model else 4,
                lw=1,
                capsize=2,
                color=MODEL_COLOUR if model and len(models) == 1 else colours[rater],
            )
        ax.set_xlim(-2, 102)
        ax.set_ylim(-2, 102)
        ax.set_aspect("equal")
        ax.set_xlabel("Stated probability that the answer is right (%, bin mean)")
        ax.set_ylabel("Observed: answers right (%)")
        ax.set_title("Reliability diagram (dotted: perfect calibration)", fontsize=10)
        ax.grid(alpha=0.25)
    ax = axes[0]
    arms = [str(a) for a in dict.fromkeys(levels["arm"])]
    readers = [str(r) for r in dict.fromkeys(levels["rater"]) if str(r) != pooled]
    colours = dict(zip(readers, _colours(readers), strict=True))
    for arm in arms:
        style, face = ARM_STYLES.get(arm, ("-", None)) if len(arms) > 1 else ("-", None)
        for reader in readers:
            part = levels[(levels["arm"] == arm) & (levels["rater"] == reader)]
            ax.plot(
                part["confidence"].to_numpy(float),
                part["accuracy"].to_numpy(float) * 100,
                ls=style,
                lw=0.7,
                color=colours[reader],
                alpha=0.55,
            )
        part = levels[(levels["arm"] == arm) & (levels["rater"] == pooled)]
        accuracy = part["accuracy"].to_numpy(float) * 100
        below, above = _whiskers(accuracy, part["ci_low"], part["ci_high"])
        label = f"{pooled} ({arm})" if len(arms) > 1 else pooled
        handles[label] = ax.errorbar(
            part["confidence"].to_numpy(float),
            accuracy,
            yerr=[below, above],
            fmt="D" + style,
            ms=6,
            lw=2,
            capsize=3,
            color="black",
            mfc=face or "black",
        )
    dashed = ", dashed unaided" if len(arms) > 1 else ""
    handles[f"thin lines: each reader (its colour){dashed}"] = Line2D([], [], color="#888", lw=0.7)
    points = sorted(levels["confidence"].astype(float).unique())
    if len(points) <= 11:
        ax.set_xticks(points, [f"{p:g}" for p in points])
    ax.set_ylim(-2, 102)
    ax.set_xlabel("Confidence given with the answer")
    ax.set_ylabel("Accuracy (%)")
    ax.set_title("Accuracy per confidence level", fontsize=10)
    ax.grid(alpha=0.25)
    if title:
        fig.suptitle(title, fontsize=11)
    bottom = _footnote(fig, note)
    labels = list(handles)
    cols, legend_in = _legend_columns(labels, fig.get_figwidth() - 0.2)
    _bottom_legend(fig, list(handles.values()), labels, bottom=bottom, cols=cols)
    _lay_out(fig, bottom + (legend_in + 0.3) / fig.get_figheight())
    return fig
