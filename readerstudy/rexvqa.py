"""Parse and validate ReXVQA question files without touching the database.

The released files vary: list fields are sometimes stored as strings, ages come as "058Y",
"58Y" or "58", option prefixes as "A." or "A)". We accept those variants and reject anything
that would make a reader study wrong, naming the question id and the field, so a PI can fix
the file and import again with nothing half-written.
"""

from __future__ import annotations

import ast
import json
import os
import re
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from readerstudy.imaging import DEFAULT_MAX_PIXELS, ImagingError, check_source
from readerstudy.models import Task
from readerstudy.vocabulary import LETTERS

REQUIRED_FIELDS = ("question", "options", "correct_answer", "task_name", "study_id", "ImagePath")
_OPTION_PREFIX = re.compile(r"^\s*\(?([A-Da-d])\s*[.):\]]\s*")
_ANSWER = re.compile(r"^\s*\(?([A-Da-d])\s*[.):\]]?\s*$")
_AGE = re.compile(r"^\s*0*(\d{1,3})\s*([YyMmWwDd])?\s*$")
_TASKS_BY_NAME = {label.casefold(): value for value, label in Task.choices}
_TASKS_BY_NAME.update({value: value for value in Task.values})


class RexvqaError(ValueError):
    """A problem with one field of one question (or with the file as a whole)."""

    def __init__(self, message: str, *, question_id: str | None = None, field: str | None = None):
        self.question_id = question_id
        self.field = field
        where = ""
        if question_id is not None:
            where = f"question {question_id!r}"
            if field:
                where += f", field {field!r}"
            where += ": "
        super().__init__(where + message)


@dataclass(frozen=True)
class ParsedImage:
    source_path: str
    view_position: str
    modality: str


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
    if not isinstance(data, dict):
        raise RexvqaError(
            f"{path}: the top level must be an object mapping question ids to questions, "
            f"not a {type(data).__name__}"
        )
    if not data:
        raise RexvqaError(f"{path} holds no questions")
    return data


def _text(record: dict[str, Any], key: str, qid: str, *, required: bool = False) -> str:
    value = record.get(key)
    if value is None or (isinstance(value, float) and value != value):  # NaN from pandas dumps
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
                except (ValueError, SyntaxError):
                    continue
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
        if not isinstance(item, str) or not item.strip():
            raise RexvqaError(
                f"option {expected} is missing or not text", question_id=qid, field="options"
            )
        match = _OPTION_PREFIX.match(item)
        if match:
            if match.group(1).upper() != expected:
                raise RexvqaError(
                    f"option {expected} is labelled {match.group(1)!r}",
                    question_id=qid,
                    field="options",
                )
            item = item[match.end() :]
        if not item.strip():
            raise RexvqaError(f"option {expected} is empty", question_id=qid, field="options")
        texts.append(item.strip())
    return texts[0], texts[1], texts[2], texts[3]


def parse_answer(value: Any, qid: str) -> str:
    match = _ANSWER.match(str(value)) if isinstance(value, str) else None
    if not match:
        raise RexvqaError(
            f"must be one of A, B, C, D, got {value!r}", question_id=qid, field="correct_answer"
        )
    return match.group(1).upper()


def parse_task(value: Any, qid: str) -> str:
    name = _text({"task_name": value}, "task_name", qid, required=True)
    task = _TASKS_BY_NAME.get(" ".join(name.split()).casefold())
    if task is None:
        known = ", ".join(Task.labels)
        raise RexvqaError(
            f"unknown task {name!r}; expected one of: {known}", question_id=qid, field="task_name"
        )
    return task


def parse_age(value: Any, qid: str) -> int | None:
    """DICOM age strings (nnnY/M/W/D) or plain numbers, as whole years."""
    if value is None or value == "" or (isinstance(value, float) and value != value):
        return None
    if isinstance(value, int | float) and not isinstance(value, bool):
        years = int(value)
    else:
        match = _AGE.match(str(value))
        if not match:
            raise RexvqaError(f"cannot read age {value!r}", question_id=qid, field="PatientAge")
        number, unit = int(match.group(1)), (match.group(2) or "Y").upper()
        years = {"Y": number, "M": number // 12, "W": number // 52, "D": number // 365}[unit]
    if not 0 <= years <= 130:
        raise RexvqaError(f"age {value!r} is out of range", question_id=qid, field="PatientAge")
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
        raise RexvqaError(f"absolute path {raw!r} not allowed", question_id=qid, field="ImagePath")
    if relative.startswith("../"):
        relative = relative[3:]
    elif relative.startswith("./"):
        relative = relative[2:]
    root = os.path.realpath(images_root)
    resolved = os.path.realpath(os.path.join(root, relative))
    if os.path.commonpath([root, resolved]) != root:
        raise RexvqaError(
            f"{raw!r} escapes the images root {root}", question_id=qid, field="ImagePath"
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


def parse_case(
    record: dict[str, Any],
    qid: str,
    images_root: Path,
    checked: set[str],
    *,
    max_pixels: int = DEFAULT_MAX_PIXELS,
) -> ParsedCase:
    paths = as_list(record.get("ImagePath"), qid, "ImagePath")
    if not paths:
        raise RexvqaError("missing or empty", question_id=qid, field="ImagePath")
    views = as_list(record.get("ImageViewPosition"), qid, "ImageViewPosition")
    modalities = as_list(record.get("ImageModality"), qid, "ImageModality")
    images = []
    for index, raw in enumerate(paths):
        resolved = resolve_image_path(raw, images_root, qid)
        if resolved not in checked:
            check_image_file(resolved, qid, max_pixels=max_pixels)
            checked.add(resolved)
        view = str(views[index]).strip() if index < len(views) and views[index] else ""
        modality = (
            str(modalities[index]).strip() if index < len(modalities) and modalities[index] else ""
        )
        images.append(ParsedImage(resolved, view.upper()[:32], modality.upper()[:16]))
    return ParsedCase(
        study_id=_text(record, "study_id", qid, required=True),
        study_instance_uid=_text(record, "StudyInstanceUid", qid),
        patient_id=_text(record, "PatientID", qid),
        patient_age=parse_age(record.get("PatientAge"), qid),
        patient_sex=parse_sex(record.get("PatientSex")),
        study_date=_text(record, "StudyDate", qid)[:32],
        indication=_text(record, "Indication", qid),
        findings=_text(record, "Findings", qid),
        impression=_text(record, "Impression", qid),
        images=tuple(images),
    )


def parse_record(qid: str, record: Any) -> ParsedQuestion:
    if not isinstance(record, dict):
        raise RexvqaError(f"expected an object, got {type(record).__name__}", question_id=qid)
    for key in REQUIRED_FIELDS:
        value = record.get(key)
        if value is None or (isinstance(value, str | list | tuple | dict) and not value):
            raise RexvqaError("missing or empty", question_id=qid, field=key)
    return ParsedQuestion(
        source_id=qid,
        text=_text(record, "question", qid, required=True),
        options=parse_options(record["options"], qid),
        correct=parse_answer(record["correct_answer"], qid),
        explanation=_text(record, "correct_answer_explanation", qid),
        task=parse_task(record["task_name"], qid),
        category=_text(record, "category", qid)[:200],
        subcategory=_text(record, "subcategory", qid)[:200],
        klass=_text(record, "class", qid)[:200],
        study_id=_text(record, "study_id", qid, required=True)[:200],
    )


def iter_parse(
    data: dict[str, Any], images_root: Path, *, max_pixels: int = DEFAULT_MAX_PIXELS
) -> Iterator[tuple[ParsedQuestion, ParsedCase | None]]:
    """Yield each question with its case (None when the case was already seen in this file)."""
    seen_cases: set[str] = set()
    checked_paths: set[str] = set()
    for raw_qid, record in data.items():
        qid = str(raw_qid).strip()
        if not qid or len(qid) > 200:
            raise RexvqaError(f"question id {raw_qid!r} is empty or longer than 200 characters")
        question = parse_record(qid, record)
        case = None
        if question.study_id not in seen_cases:
            case = parse_case(record, qid, images_root, checked_paths, max_pixels=max_pixels)
            seen_cases.add(question.study_id)
        yield question, case
