"""Paper-ready figures: nothing drawn outside the page, whatever the raters are called."""

import itertools

import numpy as np
import pandas as pd
import pytest
from matplotlib.text import Text

from analysis import plots
from analysis.stats import ALL

READERS = ["Reader 1", "Reader 2", "Reader 3"]
MODELS = ["MedGemma-demo", "WWWWWWWWWWWWWWWWWW", "Qwen2.5-VL-72B-Instruct", "m"]


def texts_outside(fig) -> list[str]:
    """Every drawn, non-empty text whose box leaves the figure (clipped on the page)."""
    fig.canvas.draw()  # every text where it is drawn
    renderer = fig.canvas.get_renderer()
    width, height = fig.bbox.width, fig.bbox.height
    hidden = set()  # labels of ticks beyond their axis's limits: matplotlib skips them
    for ax in fig.axes:
        for axis in (ax.xaxis, ax.yaxis):
            low, high = sorted(axis.get_view_interval())
            for tick in axis.get_major_ticks() + axis.get_minor_ticks():
                if not low - 1e-9 * abs(high - low) <= tick.get_loc() <= high * (1 + 1e-9):
                    hidden |= {id(tick.label1), id(tick.label2)}
    outside = []
    for text in fig.findobj(Text):
        if not text.get_visible() or not text.get_text().strip() or id(text) in hidden:
            continue
        box = text.get_window_extent(renderer)
        if box.x0 < -0.5 or box.y0 < -0.5 or box.x1 > width + 0.5 or box.y1 > height + 0.5:
            outside.append(text.get_text())
    return outside


def kappa_matrices(names: list[str], tasks: int) -> dict[str, pd.DataFrame]:
    rng = np.random.default_rng(0)
    out = {}
    for t in range(tasks):
        values = rng.uniform(-0.3, 1, (len(names), len(names)))
        values = (values + values.T) / 2
        np.fill_diagonal(values, 1.0)
        out[ALL if t == 0 else f"Task {t}"] = pd.DataFrame(values, index=names, columns=names)
    return out


@pytest.mark.parametrize("tasks", [1, 6])
@pytest.mark.parametrize("vrange", ["-1,1", "0,1"])
def test_kappa_figure_keeps_every_label_on_the_page(tasks, vrange):
    fig = plots.kappa_figure(
        kappa_matrices(READERS + MODELS, tasks),
        vrange=vrange,
        models=MODELS,
        note="Cohen's κ on A–D answers; pairwise deletion; a long footnote " * 3,
    )
    assert texts_outside(fig) == []
    assert any(t.get_text() == "WWWWWWWWWWWWWWWWWW" for t in fig.findobj(Text))


def test_accuracy_figure_keeps_every_label_on_the_page():
    rows = [
        {"task": task, "rater": rater, "accuracy": 0.7, "ci_low": 0.6, "ci_high": 0.8, "n": 40}
        for task in ["All", "Differential Diagnosis", "Location and Distribution Assessment"]
        for rater in READERS + MODELS
    ]
    fig = plots.accuracy_figure(pd.DataFrame(rows), models=MODELS, note="Whiskers: Wilson.")
    assert texts_outside(fig) == []


def test_time_figure_keeps_every_label_on_the_page():
    readers = ["Reader 1", "Dr. Wilhelmina Featherstonehaugh-Smythe (PGY-3)"]
    tasks = ["Differential Diagnosis", "Location and Distribution Assessment", "All"]
    times = pd.DataFrame(
        [
            {"rater": r, "task": t, "median_s": 20.0, "q1_s": 12.0, "q3_s": 31.0, "n": 40}
            for r in readers
            for t in tasks
        ]
    )
    by_time = pd.DataFrame(
        [
            {"rater": r, "median_s": s, "accuracy": 0.7, "ci_low": 0.5, "ci_high": 0.85}
            for r in readers
            for s in (8.0, 15.0, 25.0, 60.0)
        ]
    )
    fig = plots.time_figure(times, by_time, note="Time on screen per answered question.")
    assert texts_outside(fig) == []


def _cell_values(fig) -> list[str]:
    texts = (t.get_text() for t in fig.findobj(Text))
    return [text for text in texts if text and (text[0] in "−0123456789" or text == "–")]


def test_kappa_values_are_printed_while_they_fit_and_named_in_the_legend_when_not():
    """A 100-reader study's panels hold 4,950 cells each, too small to print κ in: drawing
    them cost most of the analysis (benchmarks/scale); the values are in the kappa CSVs."""
    few = [f"Reader {i}" for i in range(1, plots.MAX_PRINTED_CELLS + 2)]  # 24 cells a side
    fig = plots.kappa_figure(kappa_matrices(few, 1))
    assert len(_cell_values(fig)) >= len(few) * (len(few) - 1) // 2
    assert not any("kappa CSVs" in t.get_text() for t in fig.findobj(Text))

    many = [*few, "Reader 99"]  # one more: 25 cells a side
    fig = plots.kappa_figure(kappa_matrices(many, 1))
    assert _cell_values(fig) == []
    assert any("κ values in the kappa CSVs" in t.get_text() for t in fig.findobj(Text))
    assert texts_outside(fig) == []


def test_a_rater_name_with_dollars_is_drawn_as_typed_not_as_mathtext():
    """A model named on upload as `GPT$\\undefined$` failed every figure of the study
    (matplotlib read it as mathtext: "Unknown symbol"); it is drawn as typed."""
    name = r"GPT$\undefined$ <b>&=1+1"
    rows = [
        {"task": task, "rater": rater, "accuracy": 0.7, "ci_low": 0.6, "ci_high": 0.8, "n": 40}
        for task in ["All", "Differential Diagnosis"]
        for rater in [*READERS, name]
    ]
    figures = [
        plots.kappa_figure(kappa_matrices([*READERS, name], 1), models=[name]),
        plots.accuracy_figure(pd.DataFrame(rows), models=[name]),
    ]
    for fig in figures:
        for fmt in plots.FORMATS:
            assert plots.figure_bytes(fig, fmt)
        assert r"GPT$\undefined$ &lt;b&gt;&amp;=1+1" in plots.figure_bytes(fig, "svg").decode()


def test_a_footnote_fills_each_line_as_far_as_the_measured_width_allows():
    """Each line of a figure's footnote fits the width when measured whole, and the next
    line's first word would not have fitted on it: lines are neither clipped nor short."""
    note = (
        "Accuracy: share of answered questions correct; 95% CI Wilson by X-ray (clustered), "
        "MedGemma-4b and CheXagent-8b; κ ± its CI; Fleiss' κ over 3 readers; unanswered "
        "questions are missing, not wrong; policy 'default' (alpha 0.05, Holm)."
    )
    width = 3.0
    lines = plots._note_lines(note, width).split("\n")
    assert " ".join(lines).split() == note.split()  # every word, in order
    assert len(lines) > 2
    for line, following in itertools.pairwise(lines):
        assert plots._text_width(line, plots.NOTE_SIZE) <= width
        longer = f"{line} {following.split()[0]}"
        assert plots._text_width(longer, plots.NOTE_SIZE) > width
    assert plots._text_width(lines[-1], plots.NOTE_SIZE) <= width
