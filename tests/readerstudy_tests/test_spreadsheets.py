"""readerstudy.spreadsheets: formula injection neutralised, numbers left as numbers."""

import io

import openpyxl
import pandas as pd
import pytest

from readerstudy.spreadsheets import csv_text, frame_csv, neutralise, write_sheet, xlsx_writer


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
