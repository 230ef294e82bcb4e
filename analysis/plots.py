"""Paper-ready figures like the ReXVQA paper's: accuracy bars with CIs (Fig. 2), kappa heatmaps
(Fig. 5), reading time.

matplotlib's object API with the Agg backend only, never pyplot: a figure is a plain object
that no global registry holds, so a web server's threads can draw figures side by side and
nothing needs closing; only the STYLE (matplotlib's rcParams are one per process) is applied
by one thread at a time. Text stays text: SVG with real <text> elements
(svg.fonttype = none) and PDF with embedded TrueType (Type 42) fonts, so a journal's editor
can relabel them; PNG at 300 dpi. Readers come first, then AI models, with a visible
separator; each figure carries n and a footnote (passed in) stating only what applies to it.
"""

from __future__ import annotations

import contextlib
import functools
import io
import math
import threading

import matplotlib
import numpy as np
import pandas as pd
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.colors import TwoSlopeNorm
from matplotlib.figure import Figure
from matplotlib.font_manager import FontProperties
from matplotlib.patches import Patch
from matplotlib.text import Text
from matplotlib.textpath import text_to_path
from matplotlib.ticker import LogFormatter
from matplotlib.transforms import offset_copy

from analysis.figure_formats import FORMATS

KAPPA_RANGES = {"-1,1": (-1.0, 1.0), "0,1": (0.0, 1.0)}
DPI = 300
STYLE = {
    "svg.fonttype": "none",  # SVG <text>, not outlined glyphs
    "pdf.fonttype": 42,  # TrueType in PDF, not Type 3
    "ps.fonttype": 42,
    "svg.hashsalt": "readerstudy",  # the same figure gives the same bytes
    "font.family": "DejaVu Sans",
    "axes.spines.top": False,
    "axes.spines.right": False,
}
UNDEFINED = "#d9d9d9"
NOT_ESTIMABLE = "#f2f2f2"
BELOW_ZERO = "#fdb863"
# Twelve colours that stay apart for the common colour-vision deficiencies (Okabe & Ito's
# palette without yellow and black, then Paul Tol's "muted" set), and twelve markers: every
# rater of a figure gets its own colour, and where points are drawn its own marker too, so a
# grey-scale print or a reader with deuteranopia still tells 12 raters apart.
RATER_COLOURS = [
    "#0072B2",
    "#E69F00",
    "#009E73",
    "#CC79A7",
    "#56B4E9",
    "#D55E00",
    "#882255",
    "#44AA99",
    "#999933",
    "#332288",
    "#AA4499",
    "#117733",
]
RATER_MARKERS = ["o", "s", "^", "D", "v", "P", "X", "*", "<", ">", "h", "p"]
_STYLE_LOCK = threading.RLock()


@contextlib.contextmanager
def _styled():
    """STYLE while a figure is made or saved. rc_context sets rcParams for the whole process
    and puts back what it found on leaving: two threads inside at once would leave the one
    that entered second saving with matplotlib's defaults (SVG text as glyph paths, Type 3
    fonts in PDF) as soon as the first leaves."""
    with _STYLE_LOCK, matplotlib.rc_context(STYLE):
        yield


def figure_bytes(fig: Figure, fmt: str) -> bytes:
    if fmt not in FORMATS:
        raise ValueError(f"format must be one of {', '.join(FORMATS)}")
    buffer = io.BytesIO()
    metadata = {"Date": None} if fmt in ("pdf", "svg") else None
    _as_typed(fig)
    with _styled():
        # Laid out by each figure (no bbox_inches="tight": that draws everything twice).
        # zlib level 1: a third less time than 4, files about an eighth larger.
        extra = {"pil_kwargs": {"compress_level": 1}} if fmt == "png" else {}
        fig.savefig(buffer, format=fmt, dpi=DPI, metadata=metadata, **extra)
    return buffer.getvalue()


def _figure(figsize: tuple[float, float]) -> Figure:
    fig = Figure(figsize=figsize)
    FigureCanvasAgg(fig)  # a renderer for layout (tight_layout) before any savefig
    return fig


def _subplots(nrows: int = 1, ncols: int = 1, *, figsize: tuple[float, float]):
    with _styled():
        fig = _figure(figsize)
        return fig, fig.subplots(nrows, ncols)


def _colours(raters: list[str]) -> list[str]:
    """One colour per rater in figure order (readers first, then models, which bars also
    hatch); distinct up to 12 raters."""
    return [RATER_COLOURS[k % len(RATER_COLOURS)] for k in range(len(raters))]


def _markers(raters: list[str]) -> list[str]:
    return [RATER_MARKERS[k % len(RATER_MARKERS)] for k in range(len(raters))]


NOTE_SIZE = 7  # points
LEGEND_SIZE = 7  # points
LINE = 1.36  # line height, in font sizes


def _note_lines(note: str, width: float) -> str:
    """The footnote broken into lines that fit `width` inches (measured, word by word).

    A line's width is the sum of its words' and spaces' widths: the figures' font has no
    kerning across a space, so the sum equals measuring the whole line (tested), and each
    word is measured once rather than every line prefix again (quadratic: 50 ms a note)."""
    space = _space_width(NOTE_SIZE)
    lines: list[list[str]] = []
    used = 0.0
    for word in note.split():
        needed = _text_width(word, NOTE_SIZE)
        if lines and used + space + needed <= width:
            lines[-1].append(word)
            used += space + needed
        else:
            lines.append([word])
            used = needed
    return "\n".join(" ".join(line) for line in lines)


def _footnote(fig: Figure, note: str) -> float:
    """Write the footnote along the bottom edge; return the height (figure fraction) it takes."""
    if not note:
        return 0.0
    lines = _note_lines(note, fig.get_figwidth() - 0.2)
    fig.text(0.01, 0.008, lines, fontsize=NOTE_SIZE, color="#444", ha="left", va="bottom")
    return (lines.count("\n") + 1) * NOTE_SIZE * LINE / 72 / fig.get_figheight() + 0.015


def _as_typed(fig: Figure) -> None:
    """Every text drawn as typed, never as mathtext. Rater names are typed by people (a
    model's name on upload, a PI's reader labels): a name with two "$" was read as mathtext,
    and "a$\\foo$" failed every figure of the study. No figure uses mathtext; set before each
    draw (layout or save), since most texts are made outside STYLE."""
    for text in fig.findobj(Text):
        text.set_parse_math(False)


def _lay_out(fig: Figure, bottom: float) -> None:
    """tight_layout once, then fix the positions: a figure that keeps its layout engine is
    laid out again (a whole dry-run draw) every time it is saved, in every format."""
    _as_typed(fig)
    fig.tight_layout(rect=(0, bottom, 1, 1))
    fig.set_layout_engine(None)


@functools.lru_cache(maxsize=4096)
def _text_width(text: str, size: float) -> float:
    """Width in inches of `text` at `size` points in the figures' font, measured (a guess
    from the number of characters clipped long names such as "MedGemma-4b")."""
    prop = FontProperties(family=STYLE["font.family"], size=size)
    width, _, _ = text_to_path.get_text_width_height_descent(text, prop, ismath=False)
    return width / 72


@functools.lru_cache(maxsize=8)
def _space_width(size: float) -> float:
    """The width of one space between two words (measured: a lone space measures 0)."""
    return _text_width("a b", size) - _text_width("ab", size)


def _wrap(label: str, width: int = 14) -> str:
    words, lines, line = str(label).split(), [], ""
    for word in words:
        if line and len(line) + len(word) + 1 > width:
            lines.append(line)
            line = word
        else:
            line = f"{line} {word}".strip()
    lines.append(line)
    return "\n".join(lines)


def _whiskers(percent: np.ndarray, ci_low, ci_high) -> tuple[np.ndarray, np.ndarray]:
    """The lengths below and above each point (percent) of its CI (fractions): never
    negative, 0 where there is no interval. matplotlib refuses a negative error bar, and a
    bound that misses its estimate by rounding (1e-16) would fail the whole figure."""
    low = percent - np.asarray(ci_low, dtype=float) * 100
    high = np.asarray(ci_high, dtype=float) * 100 - percent
    return np.nan_to_num(np.clip(low, 0, None)), np.nan_to_num(np.clip(high, 0, None))


def accuracy_figure(
    table: pd.DataFrame,
    *,
    models: list[str] | tuple[str, ...] = (),
    by: str = "task",
    note: str = "",
    title: str | None = None,
) -> Figure:
    """Grouped bars: accuracy per `by` group for each rater with CI whiskers; readers, a gap,
    then models; n (questions) under each group."""
    groups = list(dict.fromkeys(table[by]))
    raters = list(dict.fromkeys(table["rater"]))
    model_set = set(models)
    readers = [r for r in raters if r not in model_set]
    ordered = readers + [r for r in raters if r in model_set]
    gap = 0.5 if readers and len(ordered) > len(readers) else 0.0
    slots = len(ordered) + gap
    width = 0.84 / max(1.0, slots)
    offsets = {}
    for k, rater in enumerate(ordered):
        shift = k + (gap if k >= len(readers) else 0.0)
        offsets[rater] = (shift - (slots - 1) / 2) * width
    colours = dict(zip(ordered, _colours(ordered), strict=True))
    fig, ax = _subplots(figsize=(max(7.0, 1.5 * len(groups) + 0.22 * len(ordered)), 4.8))
    x = np.arange(len(groups))
    n_by_group = table.groupby(by, sort=False)["n"].max().reindex(groups)
    for rater in ordered:
        part = table[table["rater"] == rater].set_index(by).reindex(groups)
        acc = part["accuracy"].to_numpy(dtype=float) * 100
        low, high = _whiskers(acc, part["ci_low"], part["ci_high"])
        ax.bar(
            x + offsets[rater],
            np.nan_to_num(acc),
            width,
            label=rater,
            color=colours[rater],
            yerr=[low, high],
            capsize=1.5,
            error_kw={"elinewidth": 0.7, "capthick": 0.7},
            hatch="//" if rater in model_set else None,
            edgecolor="white" if rater in model_set else None,
            linewidth=0,
        )
    if gap:
        for centre in x:
            sep = centre + (len(readers) - 0.5 + gap / 2 - (slots - 1) / 2) * width
            ax.axvline(sep, color="#999", lw=0.6, ls=":", ymax=0.93)
    labels = [f"{_wrap(g)}\nn = {int(n_by_group[g])}" for g in groups]
    ax.set_xticks(x, labels, fontsize=8)
    ax.set_ylim(0, 105)
    ax.set_yticks(range(0, 101, 20))
    ax.set_ylabel("Accuracy (%)")
    ax.grid(axis="y", alpha=0.3)
    ax.set_axisbelow(True)
    handles, names = ax.get_legend_handles_labels()
    legend_items = []
    if readers:
        legend_items.append((Patch(visible=False), "Readers"))
        legend_items += [(h, n) for h, n in zip(handles, names, strict=True) if n in readers]
    if len(ordered) > len(readers):
        legend_items.append((Patch(visible=False), "AI models"))
        legend_items += [(h, n) for h, n in zip(handles, names, strict=True) if n in model_set]
    ax.legend(
        [h for h, _ in legend_items],
        [n for _, n in legend_items],
        fontsize=7,
        loc="upper left",
        bbox_to_anchor=(1.0, 1.0),
        frameon=False,
    )
    ax.set_title(title or f"Accuracy by {by}", fontsize=11)
    bottom = _footnote(
        fig, note + " n: questions analysed per group (the tables give n per rater)."
    )
    _lay_out(fig, bottom)
    return fig


def _cell_labels(ax, columns: list, rows: list, size: float) -> None:
    """Rater names beside the cells, as plain text rather than axis ticks: a tick is a bundle
    of lines, markers and labels, and a figure of six 17 x 17 panels spent most of its
    drawing time making them (the labels look the same)."""
    ax.set_xticks([])
    ax.set_yticks([])
    fig = ax.figure
    below = offset_copy(ax.get_xaxis_transform(), fig=fig, y=-3, units="points")
    left = offset_copy(ax.get_yaxis_transform(), fig=fig, x=-3, units="points")
    for j, name in enumerate(columns):
        ax.text(
            j, 0, name, transform=below, rotation=45, ha="right", va="top",
            rotation_mode="anchor", fontsize=size,
        )  # fmt: skip
    for i, name in enumerate(rows):
        ax.text(0, i, name, transform=left, ha="right", va="center", fontsize=size)


# Fewer questions in common than this: a pair's κ is not estimable (a pale cell, "n.e.").
MIN_KAPPA_N = 2
# Above this many raters a panel's cells are too small to print κ in (a 100-reader study: 5,000
# labels per panel, unreadable, and most of the figure's drawing time in PNG, PDF and SVG).
MAX_PRINTED_CELLS = 24


def _heatmap(
    ax,
    matrix: pd.DataFrame,
    title: str,
    vmin: float,
    vmax: float,
    n_readers: int,
    counts: pd.DataFrame | None = None,
):
    """The lower triangle of a symmetric kappa matrix (each pair once, no diagonal of 1s),
    as vector cells (pcolormesh: rectangles in SVG/PDF, not an embedded bitmap). With
    `counts` (questions per pair) each cell also shows its n: a κ of 1.00 on 3 questions
    must not look like one on 300."""
    values = matrix.to_numpy(dtype=float)[1:, :-1]  # rows: raters 2..n, columns: 1..n-1
    ns = (
        counts.reindex(index=matrix.index, columns=matrix.columns).to_numpy(dtype=float)[1:, :-1]
        if counts is not None
        else None
    )
    n = len(values)
    below = np.tril(np.ones((n, n), dtype=bool))
    # One question in common cannot show agreement beyond chance: κ is 0 on a disagreement
    # and undefined on an agreement, neither a measurement. Not estimable, whatever it is.
    too_few = below & (ns < MIN_KAPPA_N) if ns is not None else np.zeros_like(below)
    values = np.where(too_few, np.nan, values)
    if vmin < 0:
        cmap = matplotlib.colormaps["RdBu"].with_extremes(bad="none")
        norm = TwoSlopeNorm(vcenter=0.0, vmin=vmin, vmax=vmax)
    else:
        cmap = matplotlib.colormaps["Blues"].with_extremes(bad="none", under=BELOW_ZERO)
        norm = matplotlib.colors.Normalize(vmin=vmin, vmax=vmax, clip=False)
    shown = np.ma.masked_where(~below | np.isnan(values), values)
    image = ax.pcolormesh(
        np.arange(n + 1) - 0.5, np.arange(n + 1) - 0.5, shown, cmap=cmap, norm=norm
    )
    undefined = below & np.isnan(values) & ~too_few
    for cells, colour in ((undefined, UNDEFINED), (too_few, NOT_ESTIMABLE)):
        if cells.any():
            grey = np.ma.masked_where(~cells, np.zeros_like(values))
            ax.pcolormesh(
                np.arange(n + 1) - 0.5,
                np.arange(n + 1) - 0.5,
                grey,
                cmap=matplotlib.colors.ListedColormap([colour]),
            )
    ax.set_xlim(-0.5, n - 0.5)
    ax.set_ylim(n - 0.5, -0.5)
    ax.set_aspect("equal")
    _cell_labels(ax, list(matrix.columns[:-1]), list(matrix.index[1:]), 7 if n <= 12 else 5.5)
    ax.set_title(title, fontsize=9)
    for side in ("top", "right", "bottom", "left"):
        ax.spines[side].set_visible(False)
    if 0 < n_readers <= n:  # first model: row n_readers - 1, column n_readers
        ax.plot([-0.5, n_readers - 0.5], [n_readers - 1.5] * 2, color="black", lw=1.2)
        ax.plot([n_readers - 0.5] * 2, [n_readers - 1.5, n - 0.5], color="black", lw=1.2)
    if n > MAX_PRINTED_CELLS:
        return image  # the values are in the κ CSVs; the legend says so
    font = 7 if n <= 8 else 5.5 if n <= 13 else 4.5
    shade = np.asarray(norm(np.clip(np.nan_to_num(values, nan=0.0), vmin, vmax)))
    dark = (shade > 0.7) | ((vmin < 0) & (shade < 0.2))
    for i, j in zip(*np.nonzero(below), strict=True):
        if too_few[i, j]:
            text = "n.e." + (f"\nn={int(ns[i, j])}" if np.isfinite(ns[i, j]) else "")
            ax.text(j, i, text, ha="center", va="center", fontsize=font, color="#333")
        elif undefined[i, j]:
            ax.text(j, i, "–", ha="center", va="center", fontsize=font, color="#555")
        else:
            colour = "white" if dark[i, j] else "black"
            text = f"{values[i, j]:.2f}".replace("-", "−")
            if ns is not None and np.isfinite(ns[i, j]):
                text += f"\nn={int(ns[i, j])}"
            ax.text(j, i, text, ha="center", va="center", fontsize=font, color=colour)
    return image


def kappa_figure(
    matrices: dict[str, pd.DataFrame],
    *,
    scale: str = "answer",
    vrange: str = "-1,1",
    models: list[str] | tuple[str, ...] = (),
    n_by_panel: dict[str, tuple[int, int]] | None = None,
    n_matrices: dict[str, pd.DataFrame] | None = None,
    note: str = "",
    arm: str = "",
) -> Figure:
    """One panel per task plus "All", values in the cells, one fixed colour scale.

    On −1..1 the diverging map is centred on 0; on 0..1 negative kappas are clipped, drawn
    in a colour of their own and named in the legend. Grey "–" cells are undefined; pale
    "n.e." cells (with `n_matrices`) are pairs with fewer than MIN_KAPPA_N questions in
    common. `arm`: the arm the answers are from, named in the title (two-arm studies).
    """
    vmin, vmax = KAPPA_RANGES[vrange]
    panels = list(matrices.items())
    cols = min(3, len(panels))
    rows = math.ceil(len(panels) / cols)
    n = len(panels[0][1])
    cell = min(2.8, max(2.0, 0.2 * n + 0.6))  # inches of cells per panel, capped
    tick = 7 if n - 1 <= 12 else 5.5
    names = {str(r) for m in matrices.values() for r in (*m.index, *m.columns)}
    longest = max((_text_width(name, tick) for name in names), default=0.3)
    label = 0.15 + longest  # inches for the rater names beside a panel
    head = 0.45  # a panel's title
    width = cols * (label + cell + 0.15) + 1.3  # + colour bar and its label
    too_few = any(
        (counts.to_numpy(dtype=float) < MIN_KAPPA_N).any() for counts in (n_matrices or {}).values()
    )
    legend = _kappa_legend(
        vrange=vrange,
        models=bool(models),
        printed=n - 1 <= MAX_PRINTED_CELLS,
        too_few=too_few,
    )
    legend_cols, legend_in = _legend_columns([name for name, _ in legend], width - 0.2)
    note_lines = _note_lines(note, width - 0.2).count("\n") + 1 if note else 0
    bottom_in = 0.15 + legend_in + note_lines * NOTE_SIZE * LINE / 72
    height = 0.45 + rows * (head + cell + label * 0.75) + bottom_in
    # Axes placed in inches: no tight_layout, which would draw the whole figure once more.
    fig = _figure((width, height))
    axes = np.empty((rows, cols), dtype=object)
    for i in range(rows):
        for j in range(cols):
            left = j * (label + cell + 0.15) + label
            top = 0.45 + i * (head + cell + label * 0.75) + head
            axes[i, j] = fig.add_axes(
                (left / width, 1 - (top + cell) / height, cell / width, cell / height)
            )
    image = None
    model_set = set(models)
    for ax, (title, matrix) in zip(axes.ravel(), panels, strict=False):
        n_readers = sum(1 for r in matrix.index if r not in model_set)
        panel_name = title
        span = (n_by_panel or {}).get(title)
        if span:
            low, high = span
            title = f"{title}\nn = {high}" if low == high else f"{title}\nn = {low}–{high} per pair"
        counts = (n_matrices or {}).get(panel_name)
        image = _heatmap(ax, matrix, title, vmin, vmax, n_readers, counts)
    for ax in axes.ravel()[len(panels) :]:
        ax.set_visible(False)
    what = "A–D answers" if scale == "answer" else "correct / incorrect"
    arm_words = f", {arm} arm" if arm else ""
    fig.suptitle(f"Cohen's κ between raters ({what}{arm_words})", fontsize=12, y=1 - 0.12 / height)
    bottom = _footnote(fig, note)
    cax = fig.add_axes((1 - 1.05 / width, 0.3, 0.12 / width, 0.5))
    bar = fig.colorbar(image, cax=cax, extend="min" if vmin >= 0 else "neither")
    bar.set_label(f"κ (colour scale {vmin:g} to {vmax:g})", fontsize=8)
    _bottom_legend(
        fig,
        [Patch(**style) for _, style in legend],
        [name for name, _ in legend],
        bottom=bottom,
        cols=legend_cols,
    )
    return fig


def _kappa_legend(
    *, vrange: str, models: bool, printed: bool = True, too_few: bool = False
) -> list[tuple[str, dict]]:
    """(label, patch style) of each entry under the kappa panels."""
    entries = [("– undefined (no variation or no shared answers)", {"facecolor": UNDEFINED})]
    if too_few:
        entries.append(
            (
                f"n.e. not estimable: fewer than {MIN_KAPPA_N} questions in common (one "
                "answer cannot show agreement beyond chance)",
                {"facecolor": NOT_ESTIMABLE, "edgecolor": "#999"},
            )
        )
    if not printed:
        none = {"facecolor": "none", "edgecolor": "none"}
        entries.append((f"over {MAX_PRINTED_CELLS} raters: κ values in the kappa CSVs", none))
    if KAPPA_RANGES[vrange][0] >= 0:
        entries.append(("κ < 0 (clipped at 0; value printed)", {"facecolor": BELOW_ZERO}))
    if models:
        entries.append(("line: readers | models", {"facecolor": "none", "edgecolor": "black"}))
    entries.append(("each pair once (lower triangle)", {"facecolor": "none", "edgecolor": "none"}))
    return entries


def _legend_columns(labels: list[str], width: float) -> tuple[int, float]:
    """The most columns whose row of legend entries fits `width` inches (matplotlib's
    default spacing: a 2-em handle, 0.8 em before the text, 2 em between columns), and the
    height in inches the legend then takes."""
    em = LEGEND_SIZE / 72
    entries = [_text_width(label, LEGEND_SIZE) + 2.8 * em for label in labels]
    cols = 1
    for n in range(len(entries), 1, -1):
        # matplotlib fills column by column, the first ones one entry longer if need be
        widest = [max(part) for part in np.array_split(entries, n)]
        if sum(widest) + 2 * em * (n - 1) + 0.8 * em <= width:
            cols = n
            break
    rows = math.ceil(len(entries) / cols)  # the longest column
    return cols, rows * LEGEND_SIZE * 1.9 / 72


def _bottom_legend(fig: Figure, handles, labels, *, bottom: float, cols: int) -> None:
    """A figure legend along the bottom, just above the footnote (`bottom`, figure fraction)."""
    fig.legend(
        handles,
        labels,
        loc="lower left",
        bbox_to_anchor=(0.005, bottom),
        ncols=cols,
        fontsize=LEGEND_SIZE,
        frameon=False,
    )


def time_figure(
    reading_time: pd.DataFrame,
    by_time: pd.DataFrame,
    *,
    note: str = "",
    all_label: str = "All",
    title: str = "",
) -> Figure:
    """Left: median reading time with IQR per reader and task. Right: accuracy per quartile
    of each reader's own reading time, with CIs. `title`: above both panels (the arm)."""
    fig, (left, right) = _subplots(1, 2, figsize=(11, 4.4))
    if title:
        fig.suptitle(title, fontsize=11)
    readers = list(dict.fromkeys(reading_time["rater"]))
    tasks = list(dict.fromkeys(reading_time["task"]))
    colours = dict(zip(readers, _colours(readers), strict=True))
    markers = dict(zip(readers, _markers(readers), strict=True))
    width = 0.8 / max(1, len(readers))
    for k, reader in enumerate(readers):
        part = reading_time[reading_time["rater"] == reader].set_index("task").reindex(tasks)
        med = part["median_s"].to_numpy(dtype=float)
        low = med - part["q1_s"].to_numpy(dtype=float)
        high = part["q3_s"].to_numpy(dtype=float) - med
        x = np.arange(len(tasks)) + (k - (len(readers) - 1) / 2) * width
        n_all = int(part.loc[all_label, "n"]) if all_label in part.index else 0
        left.errorbar(
            x,
            med,
            yerr=[np.nan_to_num(np.clip(low, 0, None)), np.nan_to_num(np.clip(high, 0, None))],
            fmt=markers[reader],
            ms=4,
            color=colours[reader],
            label=f"{reader} (n = {n_all})",
            capsize=2,
            lw=0.8,
        )
    left.set_xticks(range(len(tasks)), [_wrap(t) for t in tasks], fontsize=7)
    left.set_ylabel("Seconds per question (median, IQR)")
    left.set_title("Reading time", fontsize=10)
    left.grid(axis="y", alpha=0.3)
    for reader in readers:
        part = by_time[by_time["rater"] == reader]
        if part.empty:
            continue
        acc = part["accuracy"].to_numpy(dtype=float) * 100
        below, above = _whiskers(acc, part["ci_low"], part["ci_high"])
        right.errorbar(
            part["median_s"],
            acc,
            yerr=[below, above],
            fmt=markers[reader] + "-",
            ms=4,
            lw=1,
            capsize=2,
            color=colours[reader],
            label=reader,
        )
    right.set_xscale("log")
    # Seconds as plain numbers (10, 20, 50), not 2×10¹.
    right.xaxis.set_major_formatter(LogFormatter())
    right.xaxis.set_minor_formatter(LogFormatter(labelOnlyBase=False, minor_thresholds=(2, 0.5)))
    right.set_xlabel("Median seconds in the time quartile (log scale)")
    right.set_ylabel("Accuracy (%)")
    right.set_ylim(0, 105)
    right.set_title("Accuracy by reading-time quartile", fontsize=10)
    right.grid(alpha=0.3)
    bottom = _footnote(fig, note)
    # One legend for both panels, under them: a legend inside the left panel hid its points.
    handles, labels = left.get_legend_handles_labels()
    cols, legend_in = _legend_columns(labels, fig.get_figwidth() - 0.2)
    _bottom_legend(fig, handles, labels, bottom=bottom, cols=cols)
    _lay_out(fig, bottom + (legend_in + 0.1) / fig.get_figheight())
    return fig


def arm_figure(
    readers: pd.DataFrame,
    panel: pd.DataFrame,
    *,
    labels: tuple[str, str],
    margin: float | None = None,
    note: str = "",
    title: str = "",
) -> Figure:
    """Two arms side by side, per reader. Left: each reader's accuracy in the reference and
    the test arm (a line from one to the other), then the panel's mean in each arm with its
    CI. Right: test − reference per reader with its CI, then the panel's difference (one row
    per analysis: random readers, fixed readers), with 0 and the non-inferiority margin.

    `readers`: reader, reference, test, difference, ci_low, ci_high (fractions).
    `panel`: one row per analysis: label, reference, reference_low, reference_high, test,
    test_low, test_high, difference, ci_low, ci_high (NaN where there is no interval).
    Intervals are drawn as given, never clipped: one past 0-100% widens the axis."""
    reference, test = labels
    rows = [str(r) for r in readers["reader"]] + [str(p) for p in panel["label"]]
    height = max(3.2, 0.34 * len(rows) + 2.0)
    fig, (left, right) = _subplots(1, 2, figsize=(11, height))
    y_readers = np.arange(len(readers))
    y_panel = len(readers) + 0.5 + np.arange(len(panel))
    colours = {reference: "#999999", test: RATER_COLOURS[0]}
    ref = readers["reference"].to_numpy(float) * 100
    tst = readers["test"].to_numpy(float) * 100
    for y, a, b in zip(y_readers, ref, tst, strict=True):
        left.plot([a, b], [y, y], color="#bbbbbb", lw=1, zorder=1)
    left.scatter(
        ref,
        y_readers,
        marker="o",
        facecolor="white",
        edgecolor=colours[reference],
        label=reference,
        zorder=2,
        s=28,
    )
    left.scatter(tst, y_readers, marker="o", color=colours[test], label=test, zorder=3, s=28)
    for k, (_, row) in enumerate(panel.iterrows()):
        y = y_panel[k]
        for arm, shift, style in (
            ("reference", -0.12, {"mfc": "white", "color": colours[reference]}),
            ("test", 0.12, {"color": colours[test]}),
        ):
            value = float(row[arm]) * 100
            below, above = _whiskers(np.array([value]), [row[f"{arm}_low"]], [row[f"{arm}_high"]])
            left.errorbar(
                [value], [y + shift], xerr=[below, above], fmt="D", ms=5, capsize=2, lw=1, **style
            )
    left.set_xlabel("Accuracy (%)")
    left.set_title("Accuracy per reader in each arm", fontsize=10)
    shown = np.concatenate(
        [
            ref,
            tst,
            panel[["reference_low", "reference_high", "test_low", "test_high"]]
            .to_numpy(float)
            .ravel()
            * 100,
        ]
    )
    shown = shown[np.isfinite(shown)]
    left.set_xlim(min(0.0, shown.min(initial=0) - 2), max(100.0, shown.max(initial=100) + 2))
    left.legend(fontsize=7, loc="lower left", bbox_to_anchor=(0.0, 1.06), ncols=2, frameon=False)
    diff = readers["difference"].to_numpy(float) * 100
    below, above = _whiskers(diff, readers["ci_low"], readers["ci_high"])
    right.errorbar(
        diff, y_readers, xerr=[below, above], fmt="o", ms=4, capsize=2, lw=1, color=colours[test]
    )
    pdiff = panel["difference"].to_numpy(float) * 100
    below, above = _whiskers(pdiff, panel["ci_low"], panel["ci_high"])
    right.errorbar(
        pdiff, y_panel, xerr=[below, above], fmt="D", ms=5, capsize=2, lw=1.2, color="black"
    )
    right.axvline(0, color="#555", lw=0.8)
    if margin is not None:
        right.axvline(-margin * 100, color="#D55E00", lw=0.8, ls="--")
        right.text(
            -margin * 100,
            -0.9,
            f" −{margin * 100:g} (NI margin)",
            fontsize=7,
            color="#D55E00",
            va="bottom",
            ha="left",
        )
    right.set_xlabel(f"{test} − {reference} (percentage points)")
    right.set_title("Difference per reader, with its CI", fontsize=10)
    for ax in (left, right):
        ax.set_yticks([*y_readers, *y_panel], rows, fontsize=7)
        ax.set_ylim(len(readers) + len(panel), -1.2)
        ax.axhline(len(readers) - 0.25, color="#999", lw=0.6, ls=":")
        ax.grid(axis="x", alpha=0.3)
    if title:
        fig.suptitle(title, fontsize=11)
    bottom = _footnote(fig, note)
    _lay_out(fig, bottom)
    return fig
