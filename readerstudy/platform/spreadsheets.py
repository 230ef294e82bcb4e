"""Cells that a spreadsheet opens as text, never as a formula (CSV/formula injection).

Readers write comments, PIs name models and categories, ids come from imported files: any of
them may begin with `=`, `+`, `-`, `@`, a tab or a carriage return, which Excel, LibreOffice
and Google Sheets run as a formula (`=HYPERLINK(...)`). Every export of every app goes through
this module, which sits in the bottom layer so `annotation` and `analysis` can both use it.

Only strings are touched: numbers (a negative kappa, -0.12) stay numbers.
"""

from __future__ import annotations

import csv
import datetime as dt
import io
import math
from collections.abc import Iterable
from decimal import Decimal
from typing import Any, BinaryIO

import pandas as pd
import xlsxwriter
from pandas.api.types import is_bool, is_float, is_integer, is_scalar

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


CHUNK_ROWS = 20_000  # rows converted at a time when a table is written to a file


def write_frame_csv(
    frame: pd.DataFrame,
    stream: BinaryIO,
    *,
    index: bool = False,
    index_label: str | None = None,
) -> None:
    """`frame_csv(frame, ...)` as UTF-8 into `stream`, CHUNK_ROWS rows at a time: the same
    bytes without the whole table as text (and a neutralised copy) in memory at once."""
    for start in range(0, max(len(frame), 1), CHUNK_ROWS):
        part = safe_frame(frame.iloc[start : start + CHUNK_ROWS])
        text = part.to_csv(index=index, index_label=index_label, header=start == 0)
        stream.write(text.encode())


XLSX = "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet"  # content type
XLSX_OPTIONS = {
    # Every string is stored as a string: never a formula, a number or a hyperlink.
    "strings_to_formulas": False,
    "strings_to_numbers": False,
    "strings_to_urls": False,
    # Rows go to a temporary file as they are written (strings inline, no shared table):
    # the 449,000-row responses sheet (ReXVQA's test split, 11 raters) held as cells took
    # 430 MB more than the tables themselves.
    "constant_memory": True,
}
MAX_ROWS, MAX_COLUMNS = 1_048_576, 16_384  # Excel's sheet limits


def xlsx_writer(target) -> xlsxwriter.Workbook:
    """A workbook (file name or binary stream) whose string cells are text exactly as typed;
    a context manager that writes the file on leaving. Fill it with `write_sheet`.

    XlsxWriter, not openpyxl: it writes a string as a string when told to (openpyxl turns any
    string that begins with "=" into a formula), and it writes a report about 2.5x faster.
    """
    return xlsxwriter.Workbook(target, XLSX_OPTIONS)


def write_sheet(
    book: xlsxwriter.Workbook,
    frame: pd.DataFrame,
    sheet_name: str,
    *,
    index: bool = False,
    index_label: str | None = None,
) -> None:
    """`frame.to_excel(sheet_name=..., index=..., index_label=...)` into a workbook from
    `xlsx_writer` (sheet names cut to Excel's 31): the same cells, written row after row as
    the workbook's constant memory needs (pandas writes column after column)."""
    if isinstance(frame.columns, pd.MultiIndex) or isinstance(frame.index, pd.MultiIndex):
        raise NotImplementedError("write_sheet writes one header row and one index column")
    rows, columns = frame.shape
    if rows > MAX_ROWS or columns > MAX_COLUMNS:
        raise ValueError(
            f"This sheet is too large! Your sheet size is: {rows}, {columns} "
            f"Max sheet size is: {MAX_ROWS}, {MAX_COLUMNS}"
        )
    sheet = book.add_worksheet(sheet_name[:31])
    formats: dict[str, xlsxwriter.format.Format] = {}

    def write(row: int, column: int, value) -> None:
        value, number_format = _excel_value(value)
        if number_format and number_format not in formats:
            formats[number_format] = book.add_format({"num_format": number_format})
        sheet.write(row, column, value, formats.get(number_format))

    offset = 1 if index else 0
    label = (index_label or frame.index.name) if index else None
    if label:
        write(0, 0, label)
    for column, name in enumerate(frame.columns):
        write(0, column + offset, name)
    labels = iter(frame.index) if index else None
    for row, values in enumerate(frame.itertuples(index=False, name=None), start=1):
        if labels is not None:
            write(row, 0, next(labels))
        for column, value in enumerate(values):
            write(row, column + offset, value)


def _excel_value(value) -> tuple:
    """A cell as pandas' to_excel writes it (na_rep "", inf_rep "inf"): (value, number
    format or None)."""
    if is_scalar(value) and pd.isna(value):
        value = ""
    elif is_float(value) and math.isinf(value):
        value = "inf" if value > 0 else "-inf"
    if getattr(value, "tzinfo", None) is not None:
        raise ValueError("Excel does not support datetimes with timezones")
    if is_integer(value):
        return int(value), None
    if is_float(value):
        return float(value), None
    if is_bool(value):
        return bool(value), None
    if isinstance(value, Decimal):
        return value, None
    if isinstance(value, dt.datetime):
        return value, "YYYY-MM-DD HH:MM:SS"
    if isinstance(value, dt.date):
        return value, "YYYY-MM-DD"
    if isinstance(value, dt.timedelta):
        return value.total_seconds() / 86400, "0"
    return str(value), None
