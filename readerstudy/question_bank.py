"""Read a spreadsheet question bank (.csv or .xlsx) into raw records for the validation core.

One row per question; the columns (see docs/cli.md, `import_questions`, and the template
in docs/question_bank_template.csv/.xlsx) map onto the ReXVQA fields, so the same rules and
messages apply, located by row and column. Every cell is read as text; a formula cell in an
.xlsx is refused (never evaluated, and its cached value is not trusted either).
"""

from __future__ import annotations

import csv
import datetime
import io
import math
from collections.abc import Iterable
from typing import IO, Any

from readerstudy.platform.spreadsheets import TRIGGERS
from readerstudy.rexvqa import RawRecord, RexvqaError, parse_record, quote
from readerstudy.vocabulary import LETTERS, OPTION_FIELDS

MAX_ROWS = 100_000  # questions; rows in the sheet, empty ones included, at most one more
MAX_COLUMNS = 256  # cells in one row (the template has 22 columns)
MAX_CELL_CHARS = 32_767  # Excel's own limit for one cell
MAX_XLSX_UNCOMPRESSED = 64 * 1024 * 1024  # bytes of the workbook's parts, unzipped
MAX_XLSX_PARTS = 1_000
MAX_SHARED_STRINGS = MAX_ROWS * len(("id", "question", *LETTERS, "explanation"))
LIST_SEPARATOR = "|"

# Spreadsheet column -> ReXVQA field. option_a..option_d together make "options".
COLUMNS: dict[str, str] = {
    "id": "id",
    "case_id": "study_id",
    "question": "question",
    "option_a": "options",
    "option_b": "options",
    "option_c": "options",
    "option_d": "options",
    "correct": "correct_answer",
    "task": "task_name",
    "category": "category",
    "subcategory": "subcategory",
    "explanation": "correct_answer_explanation",
    "study_uid": "StudyInstanceUid",
    "image_paths": "ImagePath",
    "view_positions": "ImageViewPosition",
    "modalities": "ImageModality",
    "age": "PatientAge",
    "sex": "PatientSex",
    "indication": "Indication",
    "findings": "Findings",
    "impression": "Impression",
    # A corrected bank (readerstudy.bank_export): the accepted answers, the version, and every
    # version as JSON.
    "accepted": "accepted_answers",
    "version": "version",
    "history": "history",
    # A binary question (ROC): the option meaning "finding present", "none", or empty (detect).
    "present_option": "present_option",
}
OPTION_COLUMNS = OPTION_FIELDS
REQUIRED_COLUMNS = ("id", "question", *OPTION_COLUMNS, "correct", "task")
LIST_COLUMNS = ("image_paths", "view_positions", "modalities")
# Field (as the validation core names it) -> column(s), to name the column in errors.
FIELD_COLUMNS: dict[str, Any] = {
    field: column for column, field in COLUMNS.items() if field != "options"
} | {"options": OPTION_COLUMNS}


def _header_name(value: str) -> str:
    return "_".join(value.strip().lower().replace("-", " ").split())


def _check_length(text: str, row: int, column: str) -> str:
    if len(text) > MAX_CELL_CHARS:
        raise RexvqaError(
            f"a cell longer than {MAX_CELL_CHARS} characters ({quote(text)})",
            row=row,
            column=column,
        )
    return text


def _check_width(cells: list, row: int) -> None:
    if len(cells) > MAX_COLUMNS:
        raise RexvqaError(f"more than {MAX_COLUMNS} cells in one row", row=row)


def _check_row(row: int) -> None:
    if row > MAX_ROWS + 1:
        raise RexvqaError(f"more than {MAX_ROWS} rows under the header; split the file")


def _cell_text(value: Any, row: int, column: str) -> str:
    if value is None:
        return ""
    if isinstance(value, bool):
        return "TRUE" if value else "FALSE"
    if isinstance(value, float):
        if not math.isfinite(value):
            raise RexvqaError(f"{quote(value)} is not a finite number", row=row, column=column)
        return str(int(value)) if value.is_integer() else repr(value)
    if isinstance(value, datetime.datetime | datetime.date):
        return value.strftime("%Y%m%d")
    return _check_length(str(value), row, column).strip()


def _header(cells: list[str]) -> list[str]:
    names = [_header_name(cell) for cell in cells]
    while names and not names[-1]:
        names.pop()
    seen: set[str] = set()
    for number, name in enumerate(names, start=1):
        if not name:
            raise RexvqaError(f"the header (row 1) has an empty column name in column {number}")
        if name not in COLUMNS:
            known = ", ".join(COLUMNS)
            raise RexvqaError(f"unknown column {quote(name)} in the header (row 1); known: {known}")
        if name in seen:
            raise RexvqaError(f"column {quote(name)} appears twice in the header (row 1)")
        seen.add(name)
    missing = [name for name in REQUIRED_COLUMNS if name not in seen]
    if missing:
        raise RexvqaError(f"the header (row 1) has no {', '.join(map(repr, missing))} column")
    if "image_paths" not in seen and "study_uid" not in seen:
        raise RexvqaError("the header (row 1) needs an 'image_paths' or a 'study_uid' column")
    return names


def _split(text: str) -> list[str]:
    return [part.strip() for part in text.replace("\n", LIST_SEPARATOR).split(LIST_SEPARATOR)]


def _record(header: list[str], cells: list[str], row: int) -> RawRecord | None:
    if not any(cells):
        return None
    extra = [cell for cell in cells[len(header) :] if cell]
    if extra:
        raise RexvqaError(f"a value ({quote(extra[0])}) in a column without a header", row=row)
    # A row may stop before the header does (an .xlsx drops trailing empty cells): "".
    values = dict(zip(header, [*cells, *[""] * (len(header) - len(cells))], strict=False))
    data: dict[str, Any] = {}
    for column, text in values.items():
        target = COLUMNS[column]
        if column in OPTION_COLUMNS or target == "id":
            continue
        data[target] = [p for p in _split(text) if p] if column in LIST_COLUMNS and text else text
    data["options"] = [values.get(column, "") for column in OPTION_COLUMNS]
    if not data.get("study_id"):
        data["study_id"] = values.get("study_uid", "")  # one case per study by default
    return RawRecord(values.get("id", ""), data, row=row, columns=FIELD_COLUMNS)


def _check_early(record: RawRecord) -> None:
    """The checks that need no image, on this row now: the first bad row is reported without
    reading the rows after it (a million-row file is not read to its end first)."""
    qid = str(record.qid).strip()
    if not qid or len(qid) > 200:
        return  # the full parse reports the id, located, with the same words
    try:
        parse_record(qid, record.data, paths_required=False)
    except RexvqaError as exc:
        raise exc.at_row(record.row, record.columns) from exc


def _records(rows: Iterable[tuple[int, list[str]]]) -> list[RawRecord]:
    iterator = iter(rows)
    try:
        _, first = next(iterator)
    except StopIteration:
        raise RexvqaError("the spreadsheet is empty (no header row)") from None
    header = _header(first)
    records: list[RawRecord] = []
    rows_by_id: dict[str, int] = {}
    for row, cells in iterator:
        record = _record(header, cells, row)
        if record is None:
            continue
        if len(records) >= MAX_ROWS:
            raise RexvqaError(f"more than {MAX_ROWS} questions; split the file")
        qid = str(record.qid).strip()
        if qid in rows_by_id:
            raise RexvqaError(
                f"question id {quote(qid)} is already used in row {rows_by_id[qid]}",
                question_id=qid,
                row=row,
                column="id",
            )
        rows_by_id[qid] = row
        _check_early(record)
        records.append(record)
    if not records:
        raise RexvqaError("the spreadsheet holds no questions (only a header row)")
    return records


def _csv_rows(handle: IO[bytes]) -> Iterable[tuple[int, list[str]]]:
    try:
        text = io.TextIOWrapper(handle, encoding="utf-8-sig", newline="").read()
    except UnicodeDecodeError as exc:
        raise RexvqaError(
            f"the CSV file is not UTF-8 text ({exc.reason} at byte {exc.start}); "
            "save it as 'CSV UTF-8'"
        ) from exc
    first_line = text.split("\n", 1)[0]
    try:
        delimiter = csv.Sniffer().sniff(first_line, delimiters=",;\t").delimiter
    except csv.Error:
        delimiter = ","
    # Only the delimiter is guessed (from the header, which holds no quotes): the rest is
    # Excel's CSV, where a quote inside a quoted cell is written twice ("say ""no""").
    reader = csv.reader(io.StringIO(text, newline=""), csv.excel, delimiter=delimiter)
    try:
        for row, cells in enumerate(reader, start=1):
            _check_row(row)
            _check_width(cells, row)
            yield (
                row,
                [
                    _text_marker_dropped(_check_length(cell, row, f"column {i}").strip())
                    for i, cell in enumerate(cells, 1)
                ],
            )
    except csv.Error as exc:
        raise RexvqaError(
            f"the CSV file cannot be read near line {reader.line_num}: {exc}"
        ) from exc


def _text_marker_dropped(text: str) -> str:
    """A cell our CSV exports wrote as text ("'=..."; readerstudy.platform.spreadsheets.neutralise,
    against formula injection) reads as what it holds, so an exported bank imports as it was."""
    if len(text) > 1 and text[0] == "'" and text[1] in TRIGGERS:
        return text[1:]
    return text


def _xlsx_parts_checked(handle: IO[bytes]) -> None:
    """Bound the workbook before openpyxl reads it: openpyxl holds every shared string and a
    whole row in memory, so a 410 KB file (one 400 MB shared string) would take 2 GB, and a
    row of two million cells 1.6 GB. zipfile never inflates a part past its declared size,
    so capping the declared sizes caps what is decompressed; then every part is streamed
    once through a parser that refuses a DTD (`_events`), the shared strings and worksheets
    stopping at the first string, row or cell over its limit.
    """
    import zipfile

    try:
        archive = zipfile.ZipFile(handle)
        parts = archive.infolist()
    except (zipfile.BadZipFile, OSError, ValueError) as exc:
        raise RexvqaError(f"not a readable .xlsx workbook ({exc})") from exc
    if len(parts) > MAX_XLSX_PARTS:
        raise RexvqaError(f"not a question bank workbook: more than {MAX_XLSX_PARTS} parts")
    unzipped = sum(part.file_size for part in parts)
    if unzipped > MAX_XLSX_UNCOMPRESSED:
        raise RexvqaError(
            f"the workbook unzips to {unzipped} bytes, more than the limit of "
            f"{MAX_XLSX_UNCOMPRESSED}; split it, or save it as CSV"
        )
    try:
        for part in parts:  # each entry, a name given twice included
            name = part.filename
            if name == "xl/sharedStrings.xml":
                _scan_shared_strings(archive, part)
            elif name.startswith("xl/worksheets/") and name.endswith(".xml"):
                _scan_sheet(archive, part)
            else:
                _scan_other(archive, part)
    except (zipfile.BadZipFile, OSError, EOFError) as exc:
        raise RexvqaError(f"not a readable .xlsx workbook ({exc})") from exc
    handle.seek(0)


class _NotXml(Exception):
    """A part no XML parser reads past its first bytes (an image, printer settings)."""


def _events(archive, part, events=("end",), *, required: bool = True):
    """Streamed XML events of one part (a ZipInfo), by a parser that refuses a DTD outright,
    wherever its DOCTYPE stands and whatever the part's encoding (defusedxml: expat, which
    reads the encoding declaration and byte-order mark, with its DOCTYPE, entity and external
    reference handlers refusing). A part that is not XML: RexvqaError if `required`, else
    _NotXml (openpyxl's own parser, expat too, stops at the same byte, before any DOCTYPE)."""
    from defusedxml import DefusedXmlException
    from defusedxml.ElementTree import ParseError, iterparse

    name = part.filename
    with archive.open(part) as stream:
        try:
            yield from iterparse(stream, events=events, forbid_dtd=True)
        except DefusedXmlException as exc:
            raise RexvqaError(
                f"not a readable .xlsx workbook ({name} declares a DTD, which a workbook never "
                f"needs and which could expand to any size: {type(exc).__name__})"
            ) from exc
        except ParseError as exc:
            if not required:
                raise _NotXml(name) from exc
            raise RexvqaError(f"not a readable .xlsx workbook ({name}: {exc})") from exc


def _scan_other(archive, part) -> None:
    """Any other part: read through, only for a DTD (elements dropped as they end)."""
    try:
        for _, element in _events(archive, part, required=False):
            element.clear()
    except _NotXml:
        return


def _local(tag: str) -> str:
    return tag.rsplit("}", 1)[-1]


def _scan_shared_strings(archive, part) -> None:
    count = 0
    for _, element in _events(archive, part):
        tag = _local(element.tag)
        if tag == "t" and element.text and len(element.text) > MAX_CELL_CHARS:
            raise RexvqaError(
                f"a text longer than {MAX_CELL_CHARS} characters ({quote(element.text)}) "
                "in the workbook's shared strings"
            )
        if tag == "si":
            count += 1
            if count > MAX_SHARED_STRINGS:
                raise RexvqaError(f"more than {MAX_SHARED_STRINGS} different texts in the workbook")
            element.clear()


def _scan_sheet(archive, part) -> None:
    rows = cells = 0
    for event, element in _events(archive, part, ("start", "end")):
        tag = _local(element.tag)
        if event == "start":
            if tag == "row":
                rows, cells = rows + 1, 0
                _check_row(rows)
            continue
        if tag == "c":
            cells += 1
            if cells > MAX_COLUMNS:
                raise RexvqaError(f"more than {MAX_COLUMNS} cells in one row", row=rows)
            element.clear()
        elif tag in ("t", "v", "f") and element.text and len(element.text) > MAX_CELL_CHARS:
            raise RexvqaError(
                f"a cell longer than {MAX_CELL_CHARS} characters ({quote(element.text)})",
                row=rows,
            )
        elif tag == "row":
            element.clear()


def _xlsx_rows(handle: IO[bytes]) -> Iterable[tuple[int, list[str]]]:
    from openpyxl import load_workbook

    _xlsx_parts_checked(handle)
    try:
        workbook = load_workbook(handle, read_only=True, data_only=False)
    except Exception as exc:  # zipfile, XML and openpyxl errors alike
        raise RexvqaError(f"not a readable .xlsx workbook ({exc})") from exc
    try:
        sheet = workbook.worksheets[0]
        sheet.reset_dimensions()  # the stored size may be wrong (files written by other tools)
        header: list[str] = []
        row = 0
        for cells in sheet.iter_rows():
            row = next((c.row for c in cells if getattr(c, "row", None)), row + 1)
            _check_row(row)
            _check_width(cells, row)
            texts = []
            for index, cell in enumerate(cells):
                column = header[index] if index < len(header) else f"column {index + 1}"
                if getattr(cell, "data_type", None) == "f":
                    raise RexvqaError(
                        "is a formula; formulas are not evaluated: paste the values instead",
                        row=row,
                        column=column,
                    )
                texts.append(_cell_text(cell.value, row, column))
            if not header:
                header = [_header_name(t) for t in texts]
            yield row, texts
    finally:
        workbook.close()


def read_question_bank(handle: IO[bytes], filename: str) -> list[RawRecord]:
    """The rows of a .csv or .xlsx question bank as raw records (row numbers as shown in Excel)."""
    name = filename.lower()
    if name.endswith(".csv"):
        return _records(_csv_rows(handle))
    if name.endswith(".xlsx"):
        return _records(_xlsx_rows(handle))
    raise RexvqaError(f"{quote(filename)}: a question bank must be a .csv or .xlsx file")
