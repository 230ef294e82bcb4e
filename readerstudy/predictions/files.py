"""Reading a predictions file (CSV or ReXVQA inference JSON) into rows, with every problem of
its rows found in one pass: the preview, the import, the API and the command line all say every
problem of a file at once, each with its rows, rather than one kind per upload.

A file that cannot be read at all (not UTF-8, empty, no header, not JSON) is a
PredictionImportError at once; problems of single rows (an empty or duplicate question id,
text a database cannot store, a JSON record that is not a prediction, a question id not in the
dataset) are RowProblems, grouped by kind in `problem_lines`.
"""

from __future__ import annotations

import csv
import io
import json
from collections import defaultdict
from dataclasses import dataclass, field

from readerstudy.platform.storable import unstorable_text
from readerstudy.prediction_probabilities import (
    CHOSEN,
    COLUMNS,
    JSON_KEYS,
    PER_OPTION,
    Probabilities,
    parse,
    unread_names,
)

MAX_ROWS_SHOWN = 30  # rows named per kind of problem (the count says how many there are)


class PredictionImportError(ValueError):
    pass


NO_PROBABILITIES = Probabilities()


@dataclass(frozen=True)
class PredictionRow:
    where: str  # "line 7" (CSV; the header is line 1) or "record 7" (JSON, in file order)
    question_id: str
    text: str  # what the letter is extracted from
    raw: str  # the model's response as stored
    # The model's probabilities, when the file gives them (readerstudy.prediction_probabilities)
    probabilities: Probabilities = NO_PROBABILITIES


@dataclass(frozen=True)
class RowProblem:
    kind: str  # one of KINDS
    where: str
    question_id: str
    detail: str = ""


# Every kind of row problem, in the order they are said, with how they are said.
KINDS = {
    "empty_id": "empty question_id",
    "duplicate": "duplicate rows for {n} question id(s)",
    "unstorable": "text a database cannot store",
    "not_a_record": "records that are not predictions",
    "unknown": "{n} question id(s) not in dataset {dataset}",
    "bad_probability": "probabilities that are not probabilities (0 to 1; all four options "
    "summing to 1)",
}


@dataclass
class PredictionFile:
    rows: list[PredictionRow]
    problems: list[RowProblem] = field(default_factory=list)

    @property
    def size(self) -> int:
        """The file's rows (records), those left out for a problem of their own included."""
        return len(self.rows) + sum(p.kind != "duplicate" for p in self.problems)


def _rows_from_json(text: str) -> PredictionFile:
    try:
        # Numbers stay the text they were written as: a prediction is text, and an integer of
        # 5000 digits or 1e999 must not fail the conversion.
        data = json.loads(text, parse_int=str, parse_float=str, parse_constant=str)
    except json.JSONDecodeError as exc:
        raise PredictionImportError(f"not valid JSON: {exc}") from exc
    except RecursionError as exc:
        raise PredictionImportError("not valid JSON: nested too deeply") from exc
    if not isinstance(data, dict):
        raise PredictionImportError("JSON must map question ids to objects")
    out = PredictionFile(rows=[])
    for number, (qid, record) in enumerate(data.items(), start=1):
        where, qid = f"record {number}", str(qid).strip()
        if not isinstance(record, dict):
            out.problems.append(RowProblem("not_a_record", where, qid, "expected an object"))
            continue
        pred, resp = record.get("model_prediction"), record.get("model_response")
        if pred is None and resp is None:
            out.problems.append(
                RowProblem(
                    "not_a_record", where, qid, "needs 'model_prediction' or 'model_response'"
                )
            )
            continue
        text = str(pred) if pred not in (None, "") else str(resp or "")
        raw = str(resp) if resp not in (None, "") else str(pred or "")
        options = record.get("probabilities") or {}
        try:
            if unread := unread_names(record, known=JSON_KEYS):
                raise ValueError(
                    f"key {unread[0]!r} is not read: give 'probability' (the answer's) or "
                    '\'probabilities\' ({"A": ..., "D": ...})'
                )
            if not isinstance(options, dict):
                raise ValueError("'probabilities' must map options A-D to numbers")
            probabilities = parse(record.get(CHOSEN), options)
        except ValueError as exc:
            out.problems.append(RowProblem("bad_probability", where, qid, str(exc)))
            continue
        out.rows.append(PredictionRow(where, qid, text, raw, probabilities))
    return out


def _rows_from_csv(text: str) -> PredictionFile:
    # Universal newlines: a file saved with CR line endings reads as one with LF.
    reader = csv.reader(io.StringIO(text, newline=None))
    try:
        return _read_csv(reader)
    except csv.Error as exc:  # e.g. a field over csv.field_size_limit() (128 KiB)
        raise PredictionImportError(f"line {reader.line_num}: not valid CSV: {exc}") from exc


def _cell(row: list[str], at: int | None) -> str:
    return row[at] if at is not None and at < len(row) else ""


def _read_csv(reader) -> PredictionFile:
    """Rows by column position, read from the header (a dict per row cost a third of the
    parse at 40,826 rows). Blank lines are skipped; a short row has empty cells."""
    columns = [c.strip() for c in next(reader, [])]
    if "question_id" not in columns or "prediction" not in columns:
        raise PredictionImportError(
            "CSV needs a header with question_id,prediction[,raw_response]; "
            f"got {','.join(columns) or 'nothing'}"
        )
    if unread := unread_names(columns):
        raise PredictionImportError(
            f"column(s) {', '.join(map(repr, unread))} not read (misspelt or given twice): "
            f"the probability columns are {', '.join(COLUMNS)}, each at most once"
        )
    at_qid, at_pred = columns.index("question_id"), columns.index("prediction")
    at_raw = columns.index("raw_response") if "raw_response" in columns else None
    at_chosen = columns.index(CHOSEN) if CHOSEN in columns else None
    at_option = {
        letter: columns.index(name) for letter, name in PER_OPTION.items() if name in columns
    }
    out = PredictionFile(rows=[])
    for row in reader:
        if not row:
            continue
        where = f"line {reader.line_num}"
        qid = row[at_qid].strip() if at_qid < len(row) else ""
        if not qid:
            out.problems.append(RowProblem("empty_id", where, ""))
            continue
        prediction = row[at_pred] if at_pred < len(row) else ""
        raw = row[at_raw] if at_raw is not None and at_raw < len(row) else ""
        try:
            probabilities = parse(
                _cell(row, at_chosen), {letter: _cell(row, at) for letter, at in at_option.items()}
            )
        except ValueError as exc:
            out.problems.append(RowProblem("bad_probability", where, qid, str(exc)))
            continue
        out.rows.append(PredictionRow(where, qid, prediction, raw or prediction, probabilities))
    return out


def read_predictions(content: bytes) -> PredictionFile:
    """The file's rows, and every problem of its rows (format by content). Rows with a
    problem of their own are left out of `rows`; duplicates stay (they are the file's rows)."""
    try:
        text = content.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise PredictionImportError("the file is not UTF-8 text") from exc
    if not text.strip():
        raise PredictionImportError("the file is empty")
    parsed = _rows_from_json(text) if text.lstrip().startswith("{") else _rows_from_csv(text)
    kept = []
    for row in parsed.rows:
        # A NUL (raw, or JSON's \u0000) or a lone surrogate (JSON's \ud800) is not text a
        # database can store: PostgreSQL refused it with a 500 (readerstudy.platform.storable).
        why = next(
            (w for value in (row.question_id, row.text, row.raw) if (w := unstorable_text(value))),
            "",
        )
        if why:
            parsed.problems.append(RowProblem("unstorable", row.where, row.question_id, why))
        else:
            kept.append(row)
    parsed.rows = kept
    seen: dict[str, str] = {}
    for row in kept:
        if row.question_id in seen:
            parsed.problems.append(
                RowProblem("duplicate", row.where, row.question_id, f"also {seen[row.question_id]}")
            )
        seen.setdefault(row.question_id, row.where)
    if not kept:  # nothing to preview: the file is not a predictions file
        found = "; ".join(problem_lines(parsed.problems))
        raise PredictionImportError(f"the file holds no predictions{f': {found}' if found else ''}")
    return parsed


def unknown_ids(rows: list[PredictionRow], known) -> list[RowProblem]:
    """A RowProblem for each row whose question id is not in `known` (the dataset's ids)."""
    return [
        RowProblem("unknown", r.where, r.question_id) for r in rows if r.question_id not in known
    ]


def problem_lines(problems: list[RowProblem], dataset: str = "") -> list[str]:
    """The problems in words, one sentence per kind, naming its rows (at most MAX_ROWS_SHOWN
    each): "duplicate rows for 1 question id(s): q0 (line 4, also line 2)"."""
    by_kind: dict[str, list[RowProblem]] = defaultdict(list)
    for problem in problems:
        by_kind[problem.kind].append(problem)
    lines = []
    for kind, template in KINDS.items():
        found = by_kind.get(kind)
        if not found:
            continue
        ids = {p.question_id for p in found}
        head = template.format(n=len(ids), dataset=repr(dataset))
        shown = []
        for p in found[:MAX_ROWS_SHOWN]:
            where = f"{p.where}, {p.detail}" if p.detail else p.where
            shown.append(f"{p.question_id} ({where})" if p.question_id else where)
        more = f" and {len(found) - MAX_ROWS_SHOWN} more" if len(found) > MAX_ROWS_SHOWN else ""
        lines.append(f"{head} ({len(found)} row(s)): {'; '.join(shown)}{more}")
    return lines
