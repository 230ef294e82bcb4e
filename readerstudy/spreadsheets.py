"""Cells that a spreadsheet opens as text, never as a formula (CSV/formula injection).

Readers write comments, PIs name models and categories, ids come from imported files: any of
them may begin with `=`, `+`, `-`, `@`, a tab or a carriage return, which Excel, LibreOffice
and Google Sheets run as a formula (`=HYPERLINK(...)`). Every export of every app goes through
this module, which sits in the bottom layer so `annotation` and `analysis` can both use it.

Only strings are touched: numbers (a negative kappa, -0.12) stay numbers.
"""

from __future__ import annotations

import csv
import io
from collections.abc import Iterable
from typing import Any

import pandas as pd

TRIGGERS = ("=", "+", "-", "@", "\t", "\r")


def neutralise(value: Any) -> Any:
    """Prefix a string that a spreadsheet would run as a formula with `'`; other values as is."""
    if isinstance(value, str) and value.startswith(TRIGGERS):
        return "'" + value
    return value


def safe_frame(frame: pd.DataFrame) -> pd.DataFrame:
    """A copy of `frame` whose string cells, index labels and column names are neutralised."""
    out = frame.copy()
    for column in out.columns:
        if out[column].dtype == object or pd.api.types.is_string_dtype(out[column]):
            out[column] = out[column].map(neutralise)
    out.columns = [neutralise(c) for c in out.columns]
    if pd.api.types.is_object_dtype(out.index) or pd.api.types.is_string_dtype(out.index):
        out.index = pd.Index([neutralise(v) for v in out.index], name=neutralise(out.index.name))
    return out


def csv_text(rows: Iterable[Iterable[Any]], header_lines: Iterable[str] = ()) -> str:
    """CSV of `rows` with neutralised cells, after optional `# ...` header lines."""
    out = io.StringIO()
    for line in header_lines:
        out.write(f"# {line}\n")
    writer = csv.writer(out)
    for row in rows:
        writer.writerow([neutralise(v) for v in row])
    return out.getvalue()


def frame_csv(
    frame: pd.DataFrame,
    *,
    index: bool = False,
    index_label: str | None = None,
    header_lines: Iterable[str] = (),
) -> str:
    """`DataFrame.to_csv` with neutralised strings, after optional `# ...` header lines."""
    head = "".join(f"# {line}\n" for line in header_lines)
    body = safe_frame(frame).to_csv(index=index, index_label=index_label)
    return head + body


XLSX = "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet"  # content type
XLSX_OPTIONS = {
    # Every string is stored as a string: never a formula, a number or a hyperlink.
    "strings_to_formulas": False,
    "strings_to_numbers": False,
    "strings_to_urls": False,
}


def xlsx_writer(target) -> pd.ExcelWriter:
    """A pandas ExcelWriter whose string cells are text exactly as typed.

    XlsxWriter, not openpyxl: it writes a string as a string when told to (openpyxl turns any
    string that begins with "=" into a formula), and it writes a report about 2.5x faster.
    """
    return pd.ExcelWriter(target, engine="xlsxwriter", engine_kwargs={"options": XLSX_OPTIONS})


def write_sheet(writer: pd.ExcelWriter, frame: pd.DataFrame, sheet_name: str, **kwargs) -> None:
    """`DataFrame.to_excel` into a writer from `xlsx_writer` (sheet names cut to Excel's 31)."""
    frame.to_excel(writer, sheet_name=sheet_name[:31], **kwargs)
