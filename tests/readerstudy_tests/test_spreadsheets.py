"""readerstudy.platform.spreadsheets: formula injection neutralised, numbers left as numbers."""

import io

import openpyxl
import pandas as pd
import pytest

from readerstudy.platform.spreadsheets import (
    csv_text,
    frame_csv,
    neutralise,
    write_sheet,
    xlsx_writer,
)


@pytest.mark.parametrize("text", ["=1+1", "+1", "-cmd", "@SUM(A1)", "\tx", "\rx"])
def test_every_trigger_is_prefixed(text):
    assert neutralise(text) == "'" + text


@pytest.mark.parametrize("value", ["ok", "", "a=b", -0.8, -3, None, 1.5])
def test_other_values_pass_unchanged(value):
    assert neutralise(value) == value


def test_csv_neutralises_strings_not_numbers():
    frame = pd.DataFrame({"model": ["=cmd|' /C calc'!A0", "plain"], "kappa": [-0.8, 0.5]})
    frame.index = pd.Index(["-r1", "r2"], name="rater")
    text = frame_csv(frame, index=True, header_lines=["missing: wrong"])
    assert text.startswith("# missing: wrong\n")
    back = pd.read_csv(io.StringIO(text), skiprows=1, index_col=0)
    assert list(back["model"]) == ["'=cmd|' /C calc'!A0", "plain"]
    assert list(back.index) == ["'-r1", "r2"]
    assert list(back["kappa"]) == [-0.8, 0.5]
    assert csv_text([["=x", -1]]) == "'=x,-1\r\n"


def test_xlsx_stores_formula_like_text_as_text():
    frame = pd.DataFrame(
        {
            "comment": ['=HYPERLINK("http://x")', "http://y"],
            "id": ["007", "1e3"],
            "kappa": [-0.5, 1],
        }
    )
    buffer = io.BytesIO()
    with xlsx_writer(buffer) as writer:
        write_sheet(writer, frame, "table", index=False)
    sheet = openpyxl.load_workbook(io.BytesIO(buffer.getvalue()))["table"]
    assert sheet["A2"].value == '=HYPERLINK("http://x")' and sheet["A2"].data_type == "s"
    assert sheet["A3"].value == "http://y" and sheet["A3"].hyperlink is None
    assert sheet["B2"].value == "007" and sheet["B3"].value == "1e3"  # ids stay text
    assert sheet["C2"].value == -0.5 and sheet["C2"].data_type == "n"


def _cells(content: bytes) -> dict:
    book = openpyxl.load_workbook(io.BytesIO(content))
    return {
        sheet.title: [[(c.value, c.data_type) for c in row] for row in sheet.iter_rows()]
        for sheet in book.worksheets
    }


@pytest.mark.parametrize("index", [False, True])
def test_xlsx_sheet_holds_the_cells_pandas_to_excel_writes(index):
    """write_sheet goes row by row (the workbook keeps one row in memory) and must give what
    pandas' column-by-column to_excel gives: blanks for NaN/None, "inf" for infinities,
    booleans, numbers of every numpy type, text."""
    frame = pd.DataFrame(
        {
            "text": ["a", None, "=1+1", ""],
            "number": [1.5, float("nan"), float("inf"), -float("inf")],
            "count": pd.Series([1, 2, 3, 4], dtype="int64"),
            "flag": [True, False, True, False],
            "mixed": [True, 3, 2.5, None],
            "missing": pd.array([1, None, 3, None], dtype="Int64"),
        },
        index=pd.Index(["r1", "-r2", "r3", "r4"], name="who"),
    )
    ours = io.BytesIO()
    with xlsx_writer(ours) as book:
        write_sheet(book, frame, "table", index=index, index_label="rater" if index else None)
    theirs = io.BytesIO()
    text = {"strings_to_formulas": False, "strings_to_numbers": False, "strings_to_urls": False}
    with pd.ExcelWriter(theirs, engine="xlsxwriter", engine_kwargs={"options": text}) as writer:
        frame.to_excel(
            writer, sheet_name="table", index=index, index_label="rater" if index else None
        )
    assert _cells(ours.getvalue()) == _cells(theirs.getvalue())


def test_csv_written_in_chunks_is_the_same_text(monkeypatch):
    from readerstudy.platform import spreadsheets

    frame = pd.DataFrame({"id": ["=a", "b", "c", "-d", "e"], "x": [0.1, None, 3.0, -2.5, 1e-9]})
    frame.index = pd.Index(["+1", "2", "3", "4", "5"], name="rater")
    monkeypatch.setattr(spreadsheets, "CHUNK_ROWS", 2)
    for index in (False, True):
        stream = io.BytesIO()
        spreadsheets.write_frame_csv(frame, stream, index=index, index_label="rater")
        assert stream.getvalue() == frame_csv(frame, index=index, index_label="rater").encode()
    empty = io.BytesIO()
    spreadsheets.write_frame_csv(frame.iloc[:0], empty)
    assert empty.getvalue() == frame_csv(frame.iloc[:0]).encode()
