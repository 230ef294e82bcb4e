"""Plain words for the analysis tables' column names, where a person reads them (the analysis
page). The CSVs, the XLSX and the API keep the names: code and R scripts read those.

Labels declared beside a table's columns (passed as `declared`) come first. Otherwise one
declaration for every table: a column is named by `WORDS` when it is there, else from
its parts (`agree_when_ai_right_ci_low` -> "Agreed with the AI when it was right" over "CI
low"), else its name in words ("x_rays" -> "X-rays"), so a column added to a table later
reads as words too. Columns that share a declared prefix (`GROUPS`) are shown under one
header spanning them, which keeps a wide table such as reliance within a 1280-px screen.
"""

from __future__ import annotations

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
# A prefix several columns share -> what they measure (the header spanning them).
GROUPS = {
    "unaided_agree_when_ai_wrong": "Unaided answer the same as the AI's wrong one",
    "agree_when_ai_right": "Agreed with the AI when it was right",
    "agree_when_ai_wrong": "Agreed with the AI when it was wrong",
}
# The part after a group's prefix -> its sub-header ("" is the rate itself).
PARTS = {"": "rate", "n": "n", "k": "agreed", "ci_low": "CI low", "ci_high": "CI high"}
TOKENS = {"ai": "AI", "ci": "CI", "mrmc": "MRMC", "ni": "NI", "se": "SE", "or": "OR", "id": "id"}


def _group(column: str) -> tuple[str, str] | None:
    """(group prefix, part) when `column` is one of a declared group's columns."""
    for prefix in sorted(GROUPS, key=len, reverse=True):
        if column == prefix:
            return prefix, ""
        if column.startswith(prefix + "_") and column[len(prefix) + 1 :] in PARTS:
            return prefix, column[len(prefix) + 1 :]
    return None


def column_label(column: str) -> str:
    """`column` in plain words (see the module docstring)."""
    if column in WORDS:
        return WORDS[column]
    group = _group(column)
    if group:
        return f"{GROUPS[group[0]]}: {PARTS[group[1]]}"
    words = [TOKENS.get(token, token) for token in column.split("_")]
    text = " ".join(words)
    return text[:1].upper() + text[1:]


def header_rows(
    columns: list[str], declared: dict[str, str] | None = None
) -> tuple[list[tuple[str, int]], list[str]]:
    """The page's header of a table: the spanning row ((words, columns spanned); "" above a
    column of no group) and one label per column. A label "what: part" (declared beside the
    table's columns, `declared`, or made from GROUPS) puts `part` under a header `what` that
    spans its neighbours of the same `what`. No group: an empty first row."""
    spans: list[tuple[str, int]] = []
    labels: list[str] = []
    previous = None
    for column in columns:
        label = (declared or {}).get(column) or column_label(column)
        group, _, part = label.rpartition(": ")
        if not group:
            spans.append(("", 1))
            labels.append(label)
            previous = None
            continue
        labels.append(part)
        if group == previous:
            spans[-1] = (spans[-1][0], spans[-1][1] + 1)
        else:
            spans.append((group, 1))
        previous = group
    if all(not words for words, _ in spans):
        return [], labels
    return spans, labels
