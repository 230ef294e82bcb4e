"""The corrected bank of a study: its questions at their current version, in the ReXVQA JSON
shape and as a question-bank spreadsheet (CSV, XLSX), with a changelog (one row per changed
field of each version) — the files a curator releases as "v2".

Each question carries its `version`, its `accepted_answers` and its `history` (every
version, whole, with what was wrong and how it was decided), so importing a file into a new
dataset (`import_rexvqa`, `import_questions`, the new-study page) reproduces the versions
(readerstudy.rexvqa reads them). Who decided is said by the rule in words, not by username: a
released file names no one.
"""

from __future__ import annotations

import io
import json
import os
import zipfile
from collections.abc import Iterable
from dataclasses import dataclass
from itertools import pairwise
from pathlib import Path

import pandas as pd
from django.conf import settings

from readerstudy.dicomweb import parse_resource
from readerstudy.keys import KeyBook
from readerstudy.models import Image, ReaderStudy, StudyQuestion, Task
from readerstudy.platform.spreadsheets import frame_csv, write_sheet, xlsx_writer
from readerstudy.question_versions import QuestionVersion
from readerstudy.rexvqa import NOT_BINARY
from readerstudy.vocabulary import (
    OPTION_FIELDS,
    VERSION_FIELD_LABELS,
    VERSION_FIELDS,
    ErrorType,
    VersionChange,
)

TASK_LABELS = dict(Task.choices)
ERROR_LABELS = dict(ErrorType.choices)
CHANGE_LABELS = dict(VersionChange.choices)
# The question-bank spreadsheet's columns (readerstudy.question_bank.COLUMNS), then the
# version's own.
BANK_COLUMNS = (
    "id",
    "case_id",
    "question",
    "option_a",
    "option_b",
    "option_c",
    "option_d",
    "correct",
    "accepted",
    "task",
    "category",
    "subcategory",
    "explanation",
    "study_uid",
    "image_paths",
    "view_positions",
    "modalities",
    "age",
    "sex",
    "indication",
    "findings",
    "impression",
    "version",
    "history",
    "present_option",
)
CHANGELOG_COLUMNS = (
    "question_id",
    "version",
    "change",
    "error_type",
    "error_label",
    "field",
    "old",
    "new",
    "decided",
    "decided_at",
    "reverses",
    "note",
)


@dataclass(frozen=True)
class Bank:
    records: dict[str, dict]  # question id -> ReXVQA record
    changelog: list[dict]
    images_root: str  # what image paths are relative to ("" when all come from a PACS)


def _images_root(images: Iterable[Image]) -> str:
    files = [img.source_path for img in images if not img.source_uri]
    if not files:
        return ""
    configured = settings.IMPORT_IMAGES_ROOT
    if configured and all(
        os.path.commonpath([configured, path]) == os.path.realpath(configured) for path in files
    ):
        return os.path.realpath(configured)
    return os.path.commonpath([os.path.dirname(path) for path in files])


def _image_path(image: Image, root: str) -> str:
    if image.source_uri and (ref := parse_resource(image.source_uri)):
        return f"studies/{ref.study}/series/{ref.series}/instances/{ref.sop}"
    return Path(os.path.relpath(image.source_path, root)).as_posix()


def _version_record(version: QuestionVersion) -> dict:
    """A version as the `history` of a record holds it: whole, with its provenance."""
    return {
        "version": version.number,
        "question": version.text,
        "options": [f"{letter}. {text}" for letter, text in version.labelled_options],
        "correct_answer": version.correct,
        "accepted_answers": list(version.accepted),
        "correct_answer_explanation": version.explanation,
        **_provenance(version),
    }


def _provenance(version: QuestionVersion) -> dict:
    return {
        "change": version.change,
        "error_type": version.error_type,
        "decided": version.rule,
        "decided_at": version.created_at.isoformat() if version.number > 1 else "",
        "reverses": version.reverses.number if version.reverses_id else None,
        "note": version.note,
    }


def study_bank(study: ReaderStudy) -> Bank:
    items = list(
        StudyQuestion.objects.filter(study=study)
        .select_related("question__case")
        .order_by("position")
    )
    questions = [item.question for item in items]
    book = KeyBook.of(questions)
    versions = _versions_by_question(questions)
    images: dict[int, list[Image]] = {}
    for image in Image.objects.filter(case__in={q.case_id for q in questions}).order_by(
        "case_id", "position"
    ):
        images.setdefault(image.case_id, []).append(image)
    root = _images_root(img for group in images.values() for img in group)
    records: dict[str, dict] = {}
    changelog: list[dict] = []
    for question in questions:
        history = versions.get(question.pk) or [book.current(question.pk)]
        current = history[-1]
        case = question.case
        shown = images.get(case.pk, [])
        records[question.source_id] = {
            "question": current.text,
            "options": [f"{letter}. {text}" for letter, text in current.labelled_options],
            "correct_answer": current.correct,
            "accepted_answers": list(current.accepted),
            "correct_answer_explanation": current.explanation,
            "task_name": TASK_LABELS[question.task],
            "category": question.category,
            "subcategory": question.subcategory,
            "class": question.klass,
            "study_id": case.study_id,
            "StudyInstanceUid": case.study_instance_uid,
            "PatientID": case.patient_id,
            "PatientAge": "" if case.patient_age is None else str(case.patient_age),
            "PatientSex": case.patient_sex,
            "StudyDate": case.study_date,
            "Indication": case.indication,
            "Findings": case.findings,
            "Impression": case.impression,
            "ImagePath": [_image_path(img, root) for img in shown],
            "ImageViewPosition": [img.view_position for img in shown],
            "ImageModality": [img.modality for img in shown],
            "version": current.number,
            "is_changed": current.number > 1,
            # Every version, whole, the last being this record's: empty while unchanged.
            "history": [_version_record(v) for v in history] if current.number > 1 else [],
            # A binary question's "present" option; "none": not binary (never detected again).
            "present_option": question.present_option or NOT_BINARY,
        }
        changelog.extend(_changes(question.source_id, history))
    return Bank(records, changelog, root)


def _versions_by_question(questions) -> dict[int, list[QuestionVersion]]:
    out: dict[int, list[QuestionVersion]] = {}
    rows = (
        QuestionVersion.objects.filter(question__in=questions)
        .select_related("reverses")
        .order_by("question_id", "number")
    )
    for version in rows:
        out.setdefault(version.question_id, []).append(version)
    return out


def _changes(question_id: str, history: list[QuestionVersion]) -> list[dict]:
    rows = []
    for before, version in pairwise(history):
        old, new = before.content(), version.content()
        for name in VERSION_FIELDS:
            if old[name] == new[name]:
                continue
            rows.append(
                {
                    "question_id": question_id,
                    "version": version.number,
                    "change": version.change,
                    "error_type": version.error_type,
                    "error_label": ERROR_LABELS.get(version.error_type, ""),
                    "field": VERSION_FIELD_LABELS[name],
                    "old": old[name],
                    "new": new[name],
                    "decided": version.rule,
                    "decided_at": version.created_at.isoformat(),
                    "reverses": version.reverses.number if version.reverses_id else "",
                    "note": version.note,
                }
            )
    return rows


def bank_frame(bank: Bank) -> pd.DataFrame:
    """The bank as the question-bank spreadsheet (one row per question, its history as JSON)."""
    rows = []
    for qid, record in bank.records.items():
        options = [text.split(". ", 1)[1] for text in record["options"]]
        rows.append(
            {
                "id": qid,
                "case_id": record["study_id"],
                "question": record["question"],
                **dict(zip(OPTION_FIELDS, options, strict=True)),
                "correct": record["correct_answer"],
                "accepted": "|".join(record["accepted_answers"]),
                "task": record["task_name"],
                "category": record["category"],
                "subcategory": record["subcategory"],
                "explanation": record["correct_answer_explanation"],
                "study_uid": record["StudyInstanceUid"],
                "image_paths": "|".join(record["ImagePath"]),
                "view_positions": "|".join(record["ImageViewPosition"]),
                "modalities": "|".join(record["ImageModality"]),
                "age": record["PatientAge"],
                "sex": record["PatientSex"],
                "indication": record["Indication"],
                "findings": record["Findings"],
                "impression": record["Impression"],
                "version": record["version"],
                "history": json.dumps(record["history"]) if record["history"] else "",
                "present_option": record["present_option"],
            }
        )
    return pd.DataFrame(rows, columns=list(BANK_COLUMNS))


def changelog_frame(bank: Bank) -> pd.DataFrame:
    return pd.DataFrame(bank.changelog, columns=list(CHANGELOG_COLUMNS))


def bank_json(bank: Bank) -> bytes:
    return json.dumps(bank.records, indent=1, ensure_ascii=False).encode()


def bank_csv(bank: Bank) -> bytes:
    return frame_csv(bank_frame(bank)).encode()


def bank_xlsx(bank: Bank) -> bytes:
    buffer = io.BytesIO()
    with xlsx_writer(buffer) as book:
        write_sheet(book, bank_frame(bank), "questions")
        write_sheet(book, changelog_frame(bank), "changelog")
    return buffer.getvalue()


def changelog_csv(bank: Bank) -> bytes:
    return frame_csv(changelog_frame(bank)).encode()


def readme(study: ReaderStudy, bank: Bank) -> str:
    changed = sum(1 for r in bank.records.values() if r["is_changed"])
    root = bank.images_root or "(every image from a PACS: import with --dicomweb URL)"
    return "\n".join(
        [
            f"Corrected question bank of {study.title} ({study.slug})",
            "",
            f"{len(bank.records)} questions, {changed} at a version after the one imported; "
            f"{len(bank.changelog)} changed fields in changelog.csv.",
            "",
            "bank.json: the ReXVQA shape (question id -> record), each question at its current "
            "version, with `version`, `is_changed`, `accepted_answers` (every option counted "
            "correct, the key among them) and `history` (every version, whole, with "
            "its error type, how it was decided and when, the last being the record's own).",
            "bank.csv / bank.xlsx: the same as a question-bank spreadsheet (columns of "
            "import_questions, plus `accepted`, `version` and `history` as JSON).",
            "present_option (both): a binary question's option meaning the finding is present, "
            "'none' for a question that is not binary.",
            "changelog.csv: one row per changed field of each version: question, version, "
            "change (key / wording / explanation), error type, field, old and new value, how "
            "it was decided and when, the version a reversal undoes, the note.",
            "",
            f"Image paths are relative to: {root}",
            "Import into a new dataset (the versions are reproduced):",
            "  python manage.py import_rexvqa bank.json --dataset NAME --images-root ROOT",
            "  python manage.py import_questions bank.csv --dataset NAME --images-root ROOT",
        ]
    )


def bank_zip(study: ReaderStudy, bank: Bank) -> bytes:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as archive:
        archive.writestr("README.txt", readme(study, bank))
        archive.writestr("bank.json", bank_json(bank))
        archive.writestr("bank.csv", bank_csv(bank))
        archive.writestr("bank.xlsx", bank_xlsx(bank))
        archive.writestr("changelog.csv", changelog_csv(bank))
    return buffer.getvalue()
