"""Every XML part of an uploaded workbook is read by a parser that refuses a DTD outright,
wherever the DOCTYPE stands and whatever the part's encoding (issue 38): the guard looked at
the first 4,096 bytes only, so a DOCTYPE after a 5 KB comment, or in a UTF-16 part, passed and
expat expanded its entities (a 2,767-byte file took a worker to 820 MB).

The refusal names the part; memory is bounded (tracemalloc, deterministic); the time goal
(well under a second) is measured in benchmarks/xlsx_guard_bench.py.
"""

from __future__ import annotations

import io
import tracemalloc

import openpyxl
import pytest

from readerstudy.question_bank import read_question_bank
from readerstudy.rexvqa import RexvqaError
from tests.readerstudy_tests.test_question_bank_limits import NS, good_rows, replaced, workbook

STRINGS = "xl/sharedStrings.xml"
PEAK_BYTES = 50 * 1024 * 1024

# An entity of 1,000 characters used 100,000 times in one shared string: 100 MB of text from
# 1.5 MB of XML (zipped, a few KB), under expat's own amplification limit (factor 100).
_ENTITY = f'<!ENTITY a "{"lol" * 333}x">'
_BODY = f'<sst {NS} count="1" uniqueCount="1"><si><t>{"&a;yyyyyyyyyyyy" * 100_000}</t></si></sst>'


def hidden_doctype() -> bytes:
    """The DOCTYPE after a 5 KB comment: past the first 4,096 bytes."""
    comment = "<!--" + "x" * 5000 + "-->"
    text = f'<?xml version="1.0" encoding="UTF-8"?>{comment}<!DOCTYPE sst [{_ENTITY}]>{_BODY}'
    return text.encode()


def utf16_doctype() -> bytes:
    """The whole part in UTF-16 (with its byte-order mark): no ASCII "<!DOCTYPE" in it."""
    text = f'<?xml version="1.0" encoding="UTF-16"?><!DOCTYPE sst [{_ENTITY}]>{_BODY}'
    return text.encode("utf-16")


def _bank_with(part: str, content: bytes) -> bytes:
    return replaced(workbook(good_rows(2)), part, content)


def _refused(data: bytes) -> tuple[RexvqaError, int]:
    """The error, and the peak of memory allocated while reading (bytes)."""
    tracemalloc.start()
    try:
        with pytest.raises(RexvqaError) as caught:
            read_question_bank(io.BytesIO(data), "bank.xlsx")
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    return caught.value, peak


@pytest.mark.parametrize("make", [hidden_doctype, utf16_doctype], ids=["hidden", "utf16"])
def test_a_doctype_anywhere_in_shared_strings_is_refused_by_name(make):
    error, peak = _refused(_bank_with(STRINGS, make()))
    assert "xl/sharedStrings.xml" in str(error) and "DTD" in str(error)
    assert peak < PEAK_BYTES


@pytest.mark.parametrize(
    "part",
    ["xl/worksheets/sheet1.xml", "xl/workbook.xml", "[Content_Types].xml", "docProps/core.xml"],
)
def test_every_xml_part_is_checked_not_only_strings_and_sheets(part):
    error, peak = _refused(_bank_with(part, utf16_doctype()))
    assert part in str(error) and "DTD" in str(error)
    assert peak < PEAK_BYTES


def test_a_doctype_without_entities_is_refused_too():
    """Outright: a workbook's parts never need a DTD."""
    part = f'<?xml version="1.0"?><!DOCTYPE sst SYSTEM "http://x.invalid/x.dtd">{_BODY}'
    error, _ = _refused(_bank_with(STRINGS, part.replace("&a;", "").encode()))
    assert STRINGS in str(error)


def test_a_part_that_is_not_xml_is_left_to_what_reads_it():
    """A printer-settings blob or an image in the archive is no XML: no parser reads past its
    first bytes, so it cannot hide a DOCTYPE; the bank still reads."""
    data = replaced(
        workbook(good_rows(2)), "xl/printerSettings/printerSettings1.bin", b"\x00\x01<!DOC"
    )
    assert len(read_question_bank(io.BytesIO(data), "bank.xlsx")) == 2


def test_openpyxl_itself_reads_through_defusedxml():
    """Any other workbook the platform opens with openpyxl refuses entity declarations."""
    assert openpyxl.DEFUSEDXML
