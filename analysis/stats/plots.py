"""Figures like the ReXVQA paper's: accuracy bars with CIs (Fig. 2), kappa heatmaps (Fig. 5).

matplotlib with the Agg backend only; figures are returned as bytes in PNG, SVG or PDF.
"""

from __future__ import annotations

import io
import math

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
from matplotlib.figure import Figure

FORMATS = {"png": "image/png", "svg": "image/svg+xml", "pdf": "application/pdf"}
KAPPA_RANGES = {"-1,1": (-1.0, 1.0), "0,1": (0.0, 1.0)}


def figure_bytes(fig: Figure, fmt: str) -> bytes:
    if fmt not in FORMATS:
        raise ValueError(f"format must be one of {', '.join(FORMATS)}")
    buffer = io.BytesIO()
    fig.savefig(
        buffer,
        format=fmt,
        dpi=150,
        bbox_inches="tight",
        metadata={"Date": None} if fmt == "pdf" else None,
    )
    plt.close(fig)
    return buffer.getvalue()


def _heatmap(ax, matrix: pd.DataFrame, title: str, vmin: float, vmax: float):
    values = matrix.to_numpy(dtype=float)
    cmap = plt.get_cmap("RdBu" if vmin < 0 else "Blues").with_extremes(bad="#d9d9d9")
    image = ax.imshow(np.ma.masked_invalid(values), cmap=cmap, vmin=vmin, vmax=vmax)
    n = len(matrix)
    ax.set_xticks(range(n), labels=matrix.columns, rotation=45, ha="right", fontsize=8)
    ax.set_yticks(range(n), labels=matrix.index, fontsize=8)
    ax.set_title(title, fontsize=10)
    font = 8 if n <= 8 else 6
    for i in range(n):
        for j in range(n):
            value = values[i, j]
            if math.isnan(value):
                ax.text(j, i, "–", ha="center", va="center", fontsize=font, color="#555")
                continue
            shade = (value - vmin) / (vmax - vmin)
            dark = shade > 0.75 or (vmin < 0 and shade < 0.2)
            ax.text(
                j,
                i,
                f"{value:.2f}",
                ha="center",
                va="center",
                fontsize=font,
                color="white" if dark else "black",
            )
    return image


def kappa_figure(
    matrices: dict[str, pd.DataFrame],
    *,
    scale: str = "answer",
    vrange: str = "-1,1",
    note: str = "",
) -> Figure:
    """One panel per task plus "All tasks", values in the cells, one fixed colour scale."""
    vmin, vmax = KAPPA_RANGES[vrange]
    panels = list(matrices.items())
    cols = min(3, len(panels))
    rows = math.ceil(len(panels) / cols)
    size = max(3.6, 0.42 * len(next(iter(matrices.values()))) + 1.6)
    fig, axes = plt.subplots(rows, cols, figsize=(size * cols, size * rows + 0.6), squeeze=False)
    image = None
    for ax, (title, matrix) in zip(axes.ravel(), panels, strict=False):
        image = _heatmap(ax, matrix, title, vmin, vmax)
    for ax in axes.ravel()[len(panels) :]:
        ax.set_visible(False)
    what = "A–D answers" if scale == "answer" else "correct/incorrect"
    fig.suptitle(f"Cohen's κ between raters ({what}; pairwise deletion)", fontsize=12)
    fig.tight_layout(rect=(0, 0.04, 0.92, 0.97))
    cax = fig.add_axes((0.93, 0.15, 0.015, 0.7))
    bar = fig.colorbar(image, cax=cax)
    bar.set_label(f"κ, colour scale fixed to [{vmin:g}, {vmax:g}]")
    if note:
        fig.text(0.01, 0.01, note, fontsize=8, color="#444")
    return fig


def kappa_single_figure(matrix: pd.DataFrame, title: str, *, vrange: str = "-1,1") -> Figure:
    return kappa_figure({title: matrix}, vrange=vrange)


def accuracy_figure(table: pd.DataFrame, *, note: str = "") -> Figure:
    """Grouped bars: accuracy per task for each rater, 95% CI whiskers, n under each task."""
    tasks = list(dict.fromkeys(table["task"]))
    raters = list(dict.fromkeys(table["rater"]))
    width = 0.8 / max(1, len(raters))
    fig, ax = plt.subplots(figsize=(max(7, 1.6 * len(tasks) + 0.25 * len(raters)), 4.6))
    palette = plt.get_cmap("tab10" if len(raters) <= 10 else "tab20")
    colours = [palette(i % palette.N) for i in range(len(raters))]
    x = np.arange(len(tasks))
    for k, rater in enumerate(raters):
        part = table[table["rater"] == rater].set_index("task").reindex(tasks)
        acc = part["accuracy"].to_numpy(dtype=float) * 100
        low = acc - part["ci_low"].to_numpy(dtype=float) * 100
        high = part["ci_high"].to_numpy(dtype=float) * 100 - acc
        ax.bar(
            x + (k - (len(raters) - 1) / 2) * width,
            acc,
            width,
            label=rater,
            color=colours[k],
            yerr=[low, high],
            capsize=2,
            error_kw={"elinewidth": 0.8},
        )
    ax.set_xticks(
        x,
        [
            t.replace(" Assessment", "\nAssessment").replace(" Diagnosis", "\nDiagnosis")
            for t in tasks
        ],
        fontsize=8,
    )
    ax.set_ylim(0, 108)
    ax.set_yticks(range(0, 101, 20))
    ax.set_ylabel("Accuracy (%) with 95% CI")
    ax.grid(axis="y", alpha=0.3)
    ax.legend(
        fontsize=7,
        ncols=min(4, len(raters)),
        loc="upper center",
        bbox_to_anchor=(0.5, -0.18),
        frameon=False,
    )
    ax.set_title("Accuracy by task", fontsize=11)
    if note:
        fig.text(0.01, 0.005, note, fontsize=7, color="#444")
    fig.tight_layout()
    return fig
