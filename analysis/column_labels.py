"""Plain words for the analysis tables' column names, where a person reads them (the analysis
page). The CSVs, the XLSX and the API keep the names: code and R scripts read those.

Labels declared beside a table's columns (`DECLARED`: the reliance tables' own) come first.
Otherwise a column is named by `WORDS` when it is there, else its name in words ("x_rays" ->
"X-rays"), so a column added to a table later reads as words too. A declared table's labels
"what: part" (reliance: 32 columns) are shown as one cell per `what` (`compact_cell`), which
keeps it within a 1280-px screen.
"""

from __future__ import annotations

from analysis.stats import (
    RELIANCE_CHANGE_PARTS,
    RELIANCE_LABELS,
    RELIANCE_RATE_PARTS,
    RELIANCE_SWITCH_PARTS,
)

WORDS = {
    "F": "F",
    "df": "df",
    "n": "n",
    "se": "SE",
    "p_value": "p",
    "ci_low": "CI low",
    "ci_high": "CI high",
    "statistic": "t (z: fixed readers)",
    "reference_mean": "Reference arm mean",
    "test_mean": "Test arm mean",
    "x_rays": "X-rays",
    "p_non_inferiority": "p (non-inferiority)",
    "non_inferior": "Non-inferior",
    "no_ai_answer": "No AI answer",
    "mean_accuracy": "Mean accuracy",
}
# Tables whose labels are declared beside their columns ("what: part": one cell per what).
DECLARED = {"reliance_agreement": RELIANCE_LABELS, "second_read_switches": RELIANCE_LABELS}
TOKENS = {"ai": "AI", "ci": "CI", "mrmc": "MRMC", "ni": "NI", "se": "SE", "or": "OR", "id": "id"}


def column_label(column: str) -> str:
    """`column` in plain words (see the module docstring)."""
    if column in WORDS:
        return WORDS[column]
    words = [TOKENS.get(token, token) for token in column.split("_")]
    text = " ".join(words)
    return text[:1].upper() + text[1:]


# The parts a compact cell is made of (reliance's own words for them).
_MAIN = (RELIANCE_RATE_PARTS[""], RELIANCE_CHANGE_PARTS[""])
_LOW, _HIGH = RELIANCE_RATE_PARTS["_ci_low"], RELIANCE_RATE_PARTS["_ci_high"]
_K = (RELIANCE_RATE_PARTS["_k"], RELIANCE_SWITCH_PARTS["_k"])
_N = RELIANCE_RATE_PARTS["_n"]
_P = RELIANCE_CHANGE_PARTS["_p"]


def compact_columns(columns: list[str], declared: dict[str, str]) -> list[tuple[str, dict]]:
    """A declared table's columns as the page shows them: one column per measure ("what"),
    holding its parts ({part: column}); a column of no group stands alone ({"": column})."""
    out: list[tuple[str, dict]] = []
    for column in columns:
        label = declared.get(column) or column_label(column)
        group, _, part = label.rpartition(": ")
        if group and out and out[-1][0] == group:
            out[-1][1][part] = column
        else:
            out.append((group or label, {part if group else "": column}))
    return out


def compact_cell(parts: dict, value, cell) -> str:
    """One measure in one cell: "0.250 [0.10, 0.49] · 3/12" (rate or difference, its
    interval, agreed of reads) or "… · p 0.031"; `value(column)` reads the row, `cell`
    formats a number as the page does."""
    if "" in parts:
        return cell(value(parts[""]))
    main = next((parts[m] for m in _MAIN if m in parts), None)
    text = cell(value(main)) if main else ""
    if text == cell(float("nan")):  # nothing to estimate it on: no interval, no count
        return text
    if _LOW in parts and _HIGH in parts:
        text += f" [{cell(value(parts[_LOW]))}, {cell(value(parts[_HIGH]))}]"
    k = next((parts[m] for m in _K if m in parts), None)
    if k and _N in parts:
        text += f" · {cell(value(k))}/{cell(value(parts[_N]))}"
    if _P in parts:
        text += f" · p {cell(value(parts[_P]))}"
    return text.strip()
