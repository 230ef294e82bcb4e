"""Validate question records without touching the database: the one validation core.

Two readers feed it raw records in the ReXVQA shape: the ReXVQA JSON file (`load_json`) and
the spreadsheet question bank (`readerstudy.question_bank`). Images come from an image source:
a folder (`FolderSource`, here) or a DICOMweb server (`readerstudy.dicomweb`).

The released files vary: list fields are sometimes stored as strings, ages come as "058Y",
"58Y" or "58", option prefixes as "A." or "A)". We accept those variants and reject anything
that would make a reader study wrong, naming the question id (and the spreadsheet row) and the
field, so a PI can fix the file and import again with nothing half-written.
"""

from __future__ import annotations

import ast
import json
import math
import os
import re
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, Protocol

from readerstudy.imaging import DEFAULT_MAX_PIXELS, ImagingError, check_source
from readerstudy.models import Task
from readerstudy.platform.storable import unstorable_text
from readerstudy.vocabulary import LETTERS, ErrorType

REQUIRED_FIELDS = ("question", "options", "correct_answer", "task_name", "study_id")
_LETTER = "([" + "".join(LETTERS) + "".join(LETTERS).lower() + "])"  # either case
_OPTION_PREFIX = re.compile(r"^\s*\(?" + _LETTER + r"\s*[.):\]]\s*")
_ANSWER = re.compile(r"^\s*\(?" + _LETTER + r"\s*[.):\]]?\s*$")
_AGE = re.compile(r"^\s*0*(\d{1,3})\s*([YyMmWwDd])?\s*$")
_TASKS_BY_NAME = {label.casefold(): value for value, label in Task.choices}
_TASKS_BY_NAME.update({value: value for value in Task.values})


QUOTE_MAX = 80  # characters of a value an error message quotes


def quote(value: Any) -> str:
    """repr(value), cut to QUOTE_MAX characters: a message names the value, it does not copy
    it (a whole cell quoted could make an error page of megabytes)."""
    text = repr(value if not isinstance(value, str) else value[: QUOTE_MAX + 1])
    return text if len(text) <= QUOTE_MAX else text[: QUOTE_MAX - 1] + "…"


class RexvqaError(ValueError):
    """A problem with one field of one question (or with the file as a whole)."""

    def __init__(
        self,
        message: str,
        *,
        question_id: str | None = None,
        field: str | None = None,
        item: int | None = None,
        row: int | None = None,
        column: str | None = None,
    ):
        self.detail = message
        self.question_id = question_id
        self.field = field
        self.item = item  # which element of a list field (e.g. option C is item 2)
        self.row = row
        self.column = column
        where = ""
        if row is not None:
            where = f"row {row}"
            if question_id:
                where += f" (question {quote(question_id)})"
            if column:
                where += f", column {quote(column)}"
            where += ": "
        elif question_id is not None:
            where = f"question {quote(question_id)}"
            if field:
                where += f", field {quote(field)}"
            where += ": "
        super().__init__(where + message)

    def at_row(self, row: int, columns: Mapping[str, Any]) -> RexvqaError:
        """The same error, located in a spreadsheet: row number and the column's own name."""
        column = columns.get(self.field) if self.field else None
        if isinstance(column, tuple):  # a list field spread over columns (option_a..option_d)
            column = column[self.item] if self.item is not None else "/".join(column)
        return RexvqaError(
            self.detail,
            question_id=self.question_id,
            field=self.field,
            item=self.item,
            row=row,
            column=column or self.field,
        )


@dataclass(frozen=True)
class ParsedImage:
    source_path: str  # a local file: under the images root, or the DICOMweb cache
    view_position: str
    modality: str
    source_uri: str = ""  # where a fetched image came from (DICOMweb), for provenance


@dataclass(frozen=True)
class RawRecord:
    """One question as a reader found it, in the ReXVQA shape, and where it was in the file."""

    qid: Any
    data: Any
    row: int | None = None  # spreadsheet row (1 = header), None for JSON
    columns: Mapping[str, Any] = field(default_factory=dict)  # ReXVQA key -> column name(s)


class ImageSource(Protocol):
    """Turns the image references of a record into checked local files."""

    # False when the source can list a study's images from StudyInstanceUid alone.
    paths_required: bool

    def image(self, raw: Any, qid: str) -> ParsedImage: ...

    def study_images(self, study_uid: str, qid: str) -> list[ParsedImage]: ...


@dataclass(frozen=True)
class ParsedCase:
    study_id: str
    study_instance_uid: str
    patient_id: str
    patient_age: int | None
    patient_sex: str
    study_date: str
    indication: str
    findings: str
    impression: str
    images: tuple[ParsedImage, ...]


@dataclass(frozen=True)
class ParsedVersion:
    """One version of a question in a corrected bank's `history` (readerstudy.bank_export)."""

    number: int
    text: str
    options: tuple[str, str, str, str]
    correct: str
    accepted: str
    explanation: str
    error_type: str = ""
    decided: str = ""
    decided_at: str = ""
    reverses: int | None = None
    note: str = ""


@dataclass(frozen=True)
class ParsedQuestion:
    source_id: str
    text: str
    options: tuple[str, str, str, str]
    correct: str
    explanation: str
    task: str
    category: str
    subcategory: str
    klass: str
    study_id: str
    # A corrected bank: the accepted answers (letters, the key among them) and every version,
    # the last being the record's own (empty: the question as first released).
    accepted: str = ""
    history: tuple[ParsedVersion, ...] = ()
    # A binary question: the option (A-D) meaning the finding is present; "" when not binary.
    present_option: str = ""

    @property
    def first(self) -> ParsedVersion:
        """Version 1: what the Question row holds."""
        if self.history:
            return self.history[0]
        return ParsedVersion(
            1,
            self.text,
            self.options,
            self.correct,
            self.accepted or self.correct,
            self.explanation,
        )


def load_json(path: Path) -> dict[str, Any]:
    try:
        with open(path, encoding="utf-8") as handle:
            data = json.load(handle)
    except FileNotFoundError as exc:
        raise RexvqaError(f"file not found: {path}") from exc
    except UnicodeDecodeError as exc:
        raise RexvqaError(f"{path} is not UTF-8 text: {exc}") from exc
    except json.JSONDecodeError as exc:
        raise RexvqaError(f"{path} is not valid JSON: {exc}") from exc
    except ValueError as exc:  # an integer past Python's 4,300-digit conversion limit
        raise RexvqaError(f"{path} holds a number that cannot be read: {exc}") from exc
    except RecursionError as exc:
        raise RexvqaError(f"{path} is nested too deeply to be read") from exc
    if not isinstance(data, dict):
        raise RexvqaError(
            f"{path}: the top level must be an object mapping question ids to questions, "
            f"not a {type(data).__name__}"
        )
    if not data:
        raise RexvqaError(f"{path} holds no questions")
    return data


def refuse_unstorable(record: dict[str, Any], qid: str) -> None:
    """Values nothing can store are refused wherever they occur: NaN, Infinity and 1e999
    (which Python's json accepts), and text readerstudy.platform.storable refuses (a NUL, an
    unpaired surrogate: a SQLite import kept them; PostgreSQL's failed with a driver error)."""
    for key, value in record.items():
        stack = [value]
        while stack:
            item = stack.pop()
            if isinstance(item, float) and not math.isfinite(item):
                raise RexvqaError(
                    f"{quote(item)} is not a finite number", question_id=qid, field=str(key)
                )
            if isinstance(item, str) and (why := unstorable_text(item)):
                raise RexvqaError(f"{quote(item)} {why}", question_id=qid, field=str(key))
            if isinstance(item, list | tuple):
                stack.extend(item)
            elif isinstance(item, dict):
                stack.extend(item.values())


def _text(record: dict[str, Any], key: str, qid: str, *, required: bool = False) -> str:
    value = record.get(key)
    if value is None:
        value = ""
    if isinstance(value, list | tuple) and len(value) == 1:
        value = value[0]
    if not isinstance(value, str | int | float):
        raise RexvqaError(f"expected text, got {type(value).__name__}", question_id=qid, field=key)
    text = str(value).strip()
    if required and not text:
        raise RexvqaError("missing or empty", question_id=qid, field=key)
    return text


def as_list(value: Any, qid: str, key: str) -> list[Any]:
    """Lists are sometimes serialised as strings ("['a', 'b']" or '["a"]'); accept both."""
    if value is None:
        return []
    if isinstance(value, list | tuple):
        return list(value)
    if isinstance(value, str):
        stripped = value.strip()
        if not stripped:
            return []
        if stripped.startswith("["):
            for loader in (json.loads, ast.literal_eval):
                try:
                    parsed = loader(stripped)
                except (ValueError, SyntaxError, RecursionError, MemoryError):
                    continue  # RecursionError: "[" * 5000 (JSON's parser recurses per level)
                if isinstance(parsed, list | tuple):
                    return list(parsed)
            raise RexvqaError("looks like a list but cannot be parsed", question_id=qid, field=key)
        return [stripped]
    raise RexvqaError(f"expected a list, got {type(value).__name__}", question_id=qid, field=key)


def parse_options(value: Any, qid: str) -> tuple[str, str, str, str]:
    items = as_list(value, qid, "options")
    if len(items) != 4:
        raise RexvqaError(
            f"expected exactly four options, got {len(items)}", question_id=qid, field="options"
        )
    texts: list[str] = []
    for expected, item in zip(LETTERS, items, strict=True):
        index = LETTERS.index(expected)
        if not isinstance(item, str) or not item.strip():
            raise RexvqaError(
                f"option {expected} is missing or not text",
                question_id=qid,
                field="options",
                item=index,
            )
        match = _OPTION_PREFIX.match(item)
        if match:
            if match.group(1).upper() != expected:
                raise RexvqaError(
                    f"option {expected} is labelled {quote(match.group(1))}",
                    question_id=qid,
                    field="options",
                    item=index,
                )
            item = item[match.end() :]
        if not item.strip():
            raise RexvqaError(
                f"option {expected} is empty", question_id=qid, field="options", item=index
            )
        texts.append(item.strip())
    return texts[0], texts[1], texts[2], texts[3]


def parse_answer(value: Any, qid: str) -> str:
    match = _ANSWER.match(str(value)) if isinstance(value, str) else None
    if not match:
        raise RexvqaError(
            f"must be one of A, B, C, D, got {quote(value)}",
            question_id=qid,
            field="correct_answer",
        )
    return match.group(1).upper()


def parse_task(value: Any, qid: str) -> str:
    name = _text({"task_name": value}, "task_name", qid, required=True)
    task = _TASKS_BY_NAME.get(" ".join(name.split()).casefold())
    if task is None:
        known = ", ".join(Task.labels)
        raise RexvqaError(
            f"unknown task {quote(name)}; expected one of: {known}",
            question_id=qid,
            field="task_name",
        )
    return task


def _non_finite_text(text: str) -> bool:
    """'Infinity', 'NaN', '1e999' written as text (spreadsheet cells are read as text)."""
    try:
        return not math.isfinite(float(text))
    except (ValueError, OverflowError):
        return False


def parse_age(value: Any, qid: str) -> int | None:
    """DICOM age strings (nnnY/M/W/D) or plain numbers, as whole years."""
    if value is None or value == "":
        return None
    if isinstance(value, float) and not math.isfinite(value):
        raise RexvqaError(
            f"{quote(value)} is not a finite number", question_id=qid, field="PatientAge"
        )
    if isinstance(value, int | float) and not isinstance(value, bool):
        years = int(value)
    else:
        match = _AGE.match(str(value))
        if not match:
            if _non_finite_text(str(value)):
                raise RexvqaError(
                    f"{quote(value)} is not a finite number", question_id=qid, field="PatientAge"
                )
            raise RexvqaError(
                f"cannot read age {quote(value)}", question_id=qid, field="PatientAge"
            )
        number, unit = int(match.group(1)), (match.group(2) or "Y").upper()
        years = {"Y": number, "M": number // 12, "W": number // 52, "D": number // 365}[unit]
    if not 0 <= years <= 130:
        raise RexvqaError(
            f"age {quote(value)} is out of range", question_id=qid, field="PatientAge"
        )
    return years


def parse_sex(value: Any) -> str:
    text = str(value or "").strip().upper()[:1]
    return text if text in {"F", "M", "O"} else ""


def resolve_image_path(raw: Any, images_root: Path, qid: str) -> str:
    """Resolve an `ImagePath` entry ("../deid_png/...") under the images root.

    The entries are relative to the folder of the JSON file, whose parent holds `deid_png/`;
    so the leading "../" is dropped and the rest must stay inside the images root.
    """
    if not isinstance(raw, str) or not raw.strip():
        raise RexvqaError("empty image path", question_id=qid, field="ImagePath")
    relative = raw.strip().replace("\\", "/")
    if relative.startswith("/") or re.match(r"^[A-Za-z]:", relative):
        raise RexvqaError(
            f"absolute path {quote(raw)} not allowed", question_id=qid, field="ImagePath"
        )
    if relative.startswith("../"):
        relative = relative[3:]
    elif relative.startswith("./"):
        relative = relative[2:]
    root = os.path.realpath(images_root)
    resolved = os.path.realpath(os.path.join(root, relative))
    if os.path.commonpath([root, resolved]) != root:
        raise RexvqaError(
            f"{quote(raw)} escapes the images root {root}", question_id=qid, field="ImagePath"
        )
    return resolved


def check_image_file(path: str, qid: str, *, max_pixels: int = DEFAULT_MAX_PIXELS) -> None:
    """The file must be a regular file, a PNG or a DICOM by content (not by name), within the
    pixel cap, and decodable with the installed codecs: checked from its header now, so that
    create_study never discovers a bad image later."""
    try:
        check_source(Path(path), max_pixels=max_pixels)
    except ImagingError as exc:
        raise RexvqaError(str(exc), question_id=qid, field="ImagePath") from exc


class FolderSource:
    """Images are files under a folder (ReXVQA's deid_png/ layout, or any relative paths)."""

    paths_required = True

    def __init__(self, images_root: Path, *, max_pixels: int = DEFAULT_MAX_PIXELS):
        self.images_root = Path(images_root)
        self.max_pixels = max_pixels
        self._checked: set[str] = set()

    def image(self, raw: Any, qid: str) -> ParsedImage:
        resolved = resolve_image_path(raw, self.images_root, qid)
        if resolved not in self._checked:
            check_image_file(resolved, qid, max_pixels=self.max_pixels)
            self._checked.add(resolved)
        return ParsedImage(resolved, "", "")

    def study_images(self, study_uid: str, qid: str) -> list[ParsedImage]:
        raise RexvqaError("missing or empty", question_id=qid, field="ImagePath")


def _at(values: list[Any], index: int) -> str:
    return str(values[index]).strip() if index < len(values) and values[index] else ""


def parse_case(record: dict[str, Any], qid: str, source: ImageSource) -> ParsedCase:
    paths = as_list(record.get("ImagePath"), qid, "ImagePath")
    views = as_list(record.get("ImageViewPosition"), qid, "ImageViewPosition")
    modalities = as_list(record.get("ImageModality"), qid, "ImageModality")
    study_uid = _text(record, "StudyInstanceUid", qid)
    if paths:
        found = [source.image(raw, qid) for raw in paths]
    elif study_uid and not source.paths_required:
        found = source.study_images(study_uid, qid)
    else:
        raise RexvqaError("missing or empty", question_id=qid, field="ImagePath")
    images = []
    for index, image in enumerate(found):
        # The file's own values (read from a DICOM header) are used where the record is silent.
        view = _at(views, index) or image.view_position
        modality = _at(modalities, index) or image.modality
        images.append(
            ParsedImage(
                image.source_path, view.upper()[:32], modality.upper()[:16], image.source_uri
            )
        )
    return ParsedCase(
        study_id=_text(record, "study_id", qid, required=True),
        study_instance_uid=study_uid,
        patient_id=_text(record, "PatientID", qid),
        patient_age=parse_age(record.get("PatientAge"), qid),
        patient_sex=parse_sex(record.get("PatientSex")),
        study_date=_text(record, "StudyDate", qid)[:32],
        indication=_text(record, "Indication", qid),
        findings=_text(record, "Findings", qid),
        impression=_text(record, "Impression", qid),
        images=tuple(images),
    )


# A ReXVQA-style yes/no question (a presence question whose options say "yes" or "no" as their
# first word: "Yes", "yes.", "Yes, on the left", "No", "No pleural effusion"; not "Not
# assessable", "None", "Nodular"): binary when exactly one option says yes, exactly one says no
# and its key is one of the two. The "yes" option means the finding is present. Only presence
# questions: in a negation question ("Is there no effusion?") "yes" would mean absent.
_YES = re.compile(r"^\s*yes\b", re.IGNORECASE)
_NO = re.compile(r"^\s*no\b", re.IGNORECASE)
NOT_BINARY = "none"  # the present_option that says "not binary", whatever the options


def yes_no_present(options: tuple[str, ...], correct: str, task: str) -> str:
    """The option meaning "present" of a ReXVQA-style yes/no question, else ""."""
    if task != Task.PRESENCE:
        return ""
    yes = [letter for letter, text in zip(LETTERS, options, strict=True) if _YES.match(text)]
    no = [letter for letter, text in zip(LETTERS, options, strict=True) if _NO.match(text)]
    if len(yes) != 1 or len(no) != 1 or correct not in (yes[0], no[0]):
        return ""
    return yes[0]


def parse_present_option(value: Any, question: ParsedQuestion) -> str:
    """A question's binary declaration (`present_option`): a letter A-D (that option means the
    finding is present), "none" (not binary) or empty (detected: yes_no_present)."""
    text = "" if value is None else str(value).strip()
    if not text:
        # The options as released (a correction of their words keeps each letter's meaning,
        # so rewording cannot clear the declaration), else as shown now (a correction that
        # made them yes/no); the key as it is now either way (a key corrected to an option
        # that is neither yes nor no leaves no truth for present/absent).
        return yes_no_present(
            question.first.options, question.correct, question.task
        ) or yes_no_present(question.options, question.correct, question.task)
    if text.casefold() == NOT_BINARY:
        return ""
    if text.upper() in LETTERS and len(text) == 1:
        return text.upper()
    raise RexvqaError(
        f"must be the letter (A-D) of the option that means the finding is present, "
        f"{NOT_BINARY!r} for a question that is not binary, or empty to detect it from yes/no "
        f"options, got {quote(value)}",
        question_id=question.source_id,
        field="present_option",
    )


def parse_accepted(value: Any, key: str, qid: str, field: str = "accepted_answers") -> str:
    """Accepted answers: a list of letters or "B|C" (the key among them); empty: the key."""
    if value is None or value == "" or value == []:
        return key
    items = value.split("|") if isinstance(value, str) else as_list(value, qid, field)
    letters = set()
    for item in items:
        if not isinstance(item, str) or item.strip().upper() not in LETTERS:
            raise RexvqaError(
                f"accepted answers are letters A-D, got {quote(item)}", question_id=qid, field=field
            )
        letters.add(item.strip().upper())
    if key not in letters:
        raise RexvqaError(
            f"the accepted answers {quote('|'.join(sorted(letters)))} leave out the key {key}",
            question_id=qid,
            field=field,
        )
    return "".join(letter for letter in LETTERS if letter in letters)


def _version_number(value: Any, qid: str, field: str) -> int:
    text = str(value).strip() if value is not None else ""
    if isinstance(value, bool) or not text.isdigit() or not 1 <= int(text) <= 10_000:
        raise RexvqaError(
            f"a version is a whole number from 1, got {quote(value)}", question_id=qid, field=field
        )
    return int(text)


def parse_history(record: dict[str, Any], qid: str, current: ParsedVersion) -> tuple:
    """The `version` and `history` of a corrected bank's record: every version, whole, the
    last being the record itself; none for a question as first released."""
    raw_version = record.get("version")
    number = 1 if raw_version in (None, "") else _version_number(raw_version, qid, "version")
    raw = record.get("history")
    if isinstance(raw, str) and raw.strip():
        try:
            raw = json.loads(raw)
        except (ValueError, RecursionError) as exc:
            raise RexvqaError("is not JSON", question_id=qid, field="history") from exc
    if raw in (None, "", []):
        if number != 1:
            raise RexvqaError(
                f"version {number} needs its history (versions 1 to {number})",
                question_id=qid,
                field="history",
            )
        return ()
    if not isinstance(raw, list) or not all(isinstance(entry, dict) for entry in raw):
        raise RexvqaError("must be a list of versions", question_id=qid, field="history")
    versions = []
    for index, entry in enumerate(raw, start=1):
        where = f"history {index}"
        if _version_number(entry.get("version"), qid, where) != index:
            raise RexvqaError(
                "versions must be numbered 1, 2, ... in order", question_id=qid, field=where
            )
        options = parse_options(entry.get("options"), qid)
        key = parse_answer(entry.get("correct_answer"), qid)
        error_type = str(entry.get("error_type") or "")
        if error_type not in ErrorType.values and error_type:
            raise RexvqaError(
                f"unknown error type {quote(error_type)}", question_id=qid, field=where
            )
        reverses = entry.get("reverses")
        versions.append(
            ParsedVersion(
                number=index,
                text=_text(entry, "question", qid, required=True),
                options=options,
                correct=key,
                accepted=parse_accepted(entry.get("accepted_answers"), key, qid, where),
                explanation=_text(entry, "correct_answer_explanation", qid),
                error_type="" if index == 1 else error_type,
                decided=_text(entry, "decided", qid)[:200],
                decided_at=_text(entry, "decided_at", qid)[:40],
                reverses=None if reverses in (None, "") else _version_number(reverses, qid, where),
                note=_text(entry, "note", qid),
            )
        )
    if len(versions) != number:
        raise RexvqaError(
            f"version {number} but {len(versions)} versions in its history",
            question_id=qid,
            field="history",
        )
    last = versions[-1]
    if (last.text, last.options, last.correct, last.accepted, last.explanation) != (
        current.text,
        current.options,
        current.correct,
        current.accepted,
        current.explanation,
    ):
        raise RexvqaError(
            "the last version of the history is not the question as the record gives it",
            question_id=qid,
            field="history",
        )
    return tuple(versions)


def _empty(value: Any) -> bool:
    return value is None or (isinstance(value, str | list | tuple | dict) and not value)


def parse_record(qid: str, record: Any, *, paths_required: bool = True) -> ParsedQuestion:
    if not isinstance(record, dict):
        raise RexvqaError(f"expected an object, got {type(record).__name__}", question_id=qid)
    refuse_unstorable(record, qid)
    for key in REQUIRED_FIELDS:
        if _empty(record.get(key)):
            raise RexvqaError("missing or empty", question_id=qid, field=key)
    # Every question names its images; a DICOMweb source may list them from the study UID.
    if _empty(record.get("ImagePath")) and (
        paths_required or _empty(record.get("StudyInstanceUid"))
    ):
        raise RexvqaError("missing or empty", question_id=qid, field="ImagePath")
    text = _text(record, "question", qid, required=True)
    options = parse_options(record["options"], qid)
    correct = parse_answer(record["correct_answer"], qid)
    explanation = _text(record, "correct_answer_explanation", qid)
    accepted = parse_accepted(record.get("accepted_answers"), correct, qid)
    current = ParsedVersion(0, text, options, correct, accepted, explanation)
    question = ParsedQuestion(
        source_id=qid,
        text=text,
        options=options,
        correct=correct,
        explanation=explanation,
        task=parse_task(record["task_name"], qid),
        category=_text(record, "category", qid)[:200],
        subcategory=_text(record, "subcategory", qid)[:200],
        klass=_text(record, "class", qid)[:200],
        study_id=_text(record, "study_id", qid, required=True)[:200],
        accepted=accepted,
        history=parse_history(record, qid, current),
    )
    return replace(
        question, present_option=parse_present_option(record.get("present_option"), question)
    )


def json_records(data: dict[str, Any]) -> list[RawRecord]:
    """The records of a ReXVQA JSON object (question id -> record)."""
    return [RawRecord(qid, record) for qid, record in data.items()]


def iter_parse(
    data: dict[str, Any] | Iterable[RawRecord], images: Path | ImageSource
) -> Iterator[tuple[ParsedQuestion, ParsedCase | None]]:
    """Yield each question with its case (None when the case was already seen in this file)."""
    source = FolderSource(images) if isinstance(images, str | Path) else images
    records = json_records(data) if isinstance(data, dict) else data
    seen_cases: set[str] = set()
    for raw in records:
        try:
            qid = str(raw.qid).strip()
            if not qid or len(qid) > 200:
                raise RexvqaError(
                    f"question id {quote(raw.qid)} is empty or longer than 200 characters",
                    field="id",
                )
            if why := unstorable_text(qid):
                raise RexvqaError(f"question id {quote(raw.qid)} {why}", field="id")
            question = parse_record(qid, raw.data, paths_required=source.paths_required)
            case = None
            if question.study_id not in seen_cases:
                case = parse_case(raw.data, qid, source)
                seen_cases.add(question.study_id)
        except RexvqaError as exc:
            if raw.row is None:
                raise
            raise exc.at_row(raw.row, raw.columns) from exc
        yield question, case
