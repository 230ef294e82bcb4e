"""Figures tell up to 12 raters apart by colour (colour-blind-safe) and, for points, marker."""

import matplotlib.colors as mcolors
import pandas as pd

from analysis.plots import accuracy_figure, time_figure

READERS = [f"Reader {k}" for k in range(1, 13)]


def test_reading_time_figure_gives_each_of_12_readers_its_own_colour_and_marker():
    tasks = ["Presence Assessment", "All"]
    reading = pd.DataFrame(
        [
            {"rater": r, "task": t, "median_s": 10 + k, "q1_s": 8, "q3_s": 14 + k, "n": 20}
            for k, r in enumerate(READERS)
            for t in tasks
        ]
    )
    by_time = pd.DataFrame(
        [
            {"rater": r, "median_s": 5 * (q + 1), "accuracy": 0.7, "ci_low": 0.5, "ci_high": 0.8}
            for r in READERS
            for q in range(4)
        ]
    )
    fig = time_figure(reading, by_time)
    left = fig.axes[0]
    styles = {
        (mcolors.to_hex(line.get_color()), line.get_marker())
        for line in left.get_lines()
        if line.get_marker() not in (None, "None", "", "_")
    }
    colours = {c for c, _ in styles}
    markers = {m for _, m in styles}
    assert len(colours) == 12 and len(markers) == 12


def test_accuracy_figure_colours_readers_and_models_apart():
    raters = READERS[:6] + [f"Model {k}" for k in range(6)]
    table = pd.DataFrame(
        [
            {
                "rater": r,
                "task": "Presence Assessment",
                "accuracy": 0.7,
                "ci_low": 0.6,
                "ci_high": 0.8,
                "n": 30,
            }
            for r in raters
        ]
    )
    fig = accuracy_figure(table, models=raters[6:])
    faces = {
        mcolors.to_hex(patch.get_facecolor())
        for patch in fig.axes[0].patches
        if patch.get_visible() and patch.get_height() > 0
    }
    assert len(faces) == 12
