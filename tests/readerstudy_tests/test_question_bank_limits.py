"""Bounded question banks (issue 25, finding 3): caps on the unzipped size, shared strings,
cells per row, rows and cell length, checked while streaming; the first error is reported
without reading the rest; messages quote at most ~80 characters of a value."""

from __future__ import annotations

import csv
import io
import time
import zipfile

import pytest
from openpyxl import Workbook

from readerstudy.question_bank import (
    MAX_CELL_CHARS,
    MAX_COLUMNS,
    MAX_ROWS,
    MAX_XLSX_UNCOMPRESSED,
    read_question_bank,
)
from readerstudy.rexvqa import RexvqaError
from tests.readerstudy_tests.test_import_questions import HEADER, row

SHEET = "xl/worksheets/sheet1.xml"
NS = 'xmlns="http://schemas.openxmlformats.org/spreadsheetml/2006/main"'


def workbook(rows: list[list[str]]) -> bytes:
    book = Workbook()
    sheet = book.active
    for values in rows:
        sheet.append(values)
    out = io.BytesIO()
    book.save(out)
    return out.getvalue()


def replaced(xlsx: bytes, name: str, content: bytes) -> bytes:
    """The workbook with one part's content replaced or added (what a hostile file holds)."""
    source = zipfile.ZipFile(io.BytesIO(xlsx))
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as target:
        for info in source.infolist():
            if info.filename != name:
                target.writestr(info.filename, source.read(info.filename))
        target.writestr(name, content)
    return out.getvalue()


def good_rows(n: int) -> list[list[str]]:
    return [HEADER] + [[row(f"q{i}", f"c{i}")[h] for h in HEADER] for i in range(n)]


def refused(data: bytes, filename: str) -> RexvqaError:
    started = time.perf_counter()
    with pytest.raises(RexvqaError) as caught:
        read_question_bank(io.BytesIO(data), filename)
    assert time.perf_counter() - started < 20
    assert len(str(caught.value)) < 400, str(caught.value)[:500]
    return caught.value


def test_one_huge_shared_string_is_refused_with_a_short_quote():
    """A 410 KB file holding one 400 MB shared string took a worker to 2 GB."""
    strings = f'<sst {NS} count="1" uniqueCount="1"><si><t>{"x" * 5_000_000}</t></si></sst>'
    data = replaced(workbook(good_rows(1)), "xl/sharedStrings.xml", strings.encode())
    error = refused(data, "bank.xlsx")
    assert f"longer than {MAX_CELL_CHARS} characters" in str(error)
    assert "xxxxxxxx" in str(error)  # a short quote of the value, not the value


def test_an_inline_string_over_the_cell_limit_is_refused():
    long = "x" * (MAX_CELL_CHARS + 1)  # openpyxl itself cuts what it writes; a file need not
    cell = f'<c r="A2" t="inlineStr"><is><t>{long}</t></is></c>'
    sheet = f'<worksheet {NS}><sheetData><row r="2">{cell}</row></sheetData></worksheet>'
    data = replaced(workbook(good_rows(1)), SHEET, sheet.encode())
    assert f"longer than {MAX_CELL_CHARS} characters" in str(refused(data, "bank.xlsx"))


def test_a_workbook_that_unzips_past_the_limit_is_refused_before_reading():
    bomb = (
        b"<worksheet "
        + NS.encode()
        + b"><sheetData/></worksheet>"
        + b" " * (MAX_XLSX_UNCOMPRESSED + 1)
    )
    data = replaced(workbook(good_rows(1)), SHEET, bomb)
    assert len(data) < MAX_XLSX_UNCOMPRESSED // 100  # a small file ...
    assert "unzips to" in str(refused(data, "bank.xlsx"))  # ... refused for what it holds


def test_a_row_of_two_million_cells_is_refused_at_the_limit():
    cells = "<c/>" * 2_000_000
    sheet = f'<worksheet {NS}><sheetData><row r="1">{cells}</row></sheetData></worksheet>'
    data = replaced(workbook(good_rows(1)), SHEET, sheet.encode())
    assert f"more than {MAX_COLUMNS} cells in one row" in str(refused(data, "bank.xlsx"))


def test_a_million_rows_are_refused_without_reading_them_all():
    rows = "".join(f'<row r="{i}"/>' for i in range(1, 1_000_001))
    sheet = f"<worksheet {NS}><sheetData>{rows}</sheetData></worksheet>"
    data = replaced(workbook(good_rows(1)), SHEET, sheet.encode())
    assert f"more than {MAX_ROWS} rows" in str(refused(data, "bank.xlsx"))


def test_the_first_bad_row_is_reported_without_reading_the_rest():
    """Row 2 is wrong; the 150,000 rows after it are never read (they were, before the
    first error, and the file was refused for its size instead)."""
    out = io.StringIO()
    writer = csv.writer(out)
    writer.writerow(HEADER)
    writer.writerow([row("bad", "c0", correct="E")[h] for h in HEADER])
    for i in range(150_000):
        writer.writerow([row(f"q{i}", f"c{i}")[h] for h in HEADER])
    error = refused(out.getvalue().encode(), "bank.csv")
    assert error.row == 2 and "must be one of A, B, C, D" in str(error)


@pytest.mark.parametrize("filename", ["bank.csv", "bank.xlsx"])
def test_an_error_quotes_at_most_80_characters_of_a_value(filename):
    """A 22 KB file returned a 21 MB error page: the message quoted the whole cell."""
    long_task = "T" * 20_000
    values = [row(task=long_task)[h] for h in HEADER]
    if filename.endswith(".csv"):
        out = io.StringIO()
        csv.writer(out).writerows([HEADER, values])
        data = out.getvalue().encode()
    else:
        data = workbook([HEADER, values])
    error = refused(data, filename)
    assert "unknown task" in str(error) and "T" * 70 in str(error)
    assert "T" * 80 not in str(error)


def test_a_cell_over_the_limit_in_a_csv_is_refused():
    out = io.StringIO()
    csv.writer(out).writerows(
        [HEADER, [row(explanation="e" * (MAX_CELL_CHARS + 1))[h] for h in HEADER]]
    )
    error = refused(out.getvalue().encode(), "bank.csv")
    assert f"longer than {MAX_CELL_CHARS} characters" in str(error) and error.row == 2


def test_a_deeply_nested_list_cell_is_a_clear_error():
    """'[' * 5000 in a list field reached json.loads and raised RecursionError."""
    out = io.StringIO()
    csv.writer(out).writerows([HEADER, [row(option_a="[" * 5000)[h] for h in HEADER]])
    with pytest.raises(RexvqaError):
        from readerstudy.rexvqa import as_list

        as_list("[" * 5000, "q1", "options")


def test_a_good_bank_still_reads():
    assert len(read_question_bank(io.BytesIO(workbook(good_rows(3))), "bank.xlsx")) == 3
