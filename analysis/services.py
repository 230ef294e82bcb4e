"""Import AI predictions (CSV or ReXVQA inference JSON), all or nothing."""

from __future__ import annotations

import csv
import io
import json
from collections import Counter
from dataclasses import asdict, dataclass, field
from pathlib import Path

from django.db import connection, transaction

from analysis.models import AIModel, Prediction
from analysis.stats.extraction import extract_letter
from readerstudy.models import (
    AuditEvent,
    Dataset,
    Membership,
    Question,
    ReaderStudy,
    Role,
    StudyQuestion,
)
from readerstudy.signals import data_changed
from readerstudy.storable import unstorable_text

MAX_ERRORS_SHOWN = 10
BATCH_SIZE = 5000
PREDICTION_COLUMNS = ("model", "question", "letter", "raw_response", "rule")


class PredictionImportError(ValueError):
    pass


class PredictionForbidden(PermissionError):
    """The upload would change what a study shows whose PI the uploader is not."""


@dataclass
class PredictionSummary:
    model: str
    dataset: str
    predictions: int = 0
    failed_extractions: int = 0
    replaced: int = 0
    rules: dict[str, int] = field(default_factory=dict)
    studies: list[str] = field(default_factory=list)  # slugs of every study it changed

    def as_dict(self) -> dict:
        return asdict(self)


def _rows_from_json(text: str) -> list[tuple[str, str, str]]:
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
    rows = []
    for qid, record in data.items():
        if not isinstance(record, dict):
            raise PredictionImportError(f"question {qid!r}: expected an object")
        pred, resp = record.get("model_prediction"), record.get("model_response")
        if pred is None and resp is None:
            raise PredictionImportError(
                f"question {qid!r}: needs 'model_prediction' or 'model_response'"
            )
        text = str(pred) if pred not in (None, "") else str(resp or "")
        raw = str(resp) if resp not in (None, "") else str(pred or "")
        rows.append((str(qid).strip(), text, raw))
    return rows


def _rows_from_csv(text: str) -> list[tuple[str, str, str]]:
    reader = csv.reader(io.StringIO(text))
    try:
        return _read_csv(reader)
    except csv.Error as exc:  # e.g. a field over csv.field_size_limit() (128 KiB)
        raise PredictionImportError(f"line {reader.line_num}: not valid CSV: {exc}") from exc


def _read_csv(reader) -> list[tuple[str, str, str]]:
    """Rows by column position, read from the header (a dict per row cost a third of the
    parse at 40,826 rows). Blank lines are skipped; a short row has empty cells."""
    columns = [c.strip() for c in next(reader, [])]
    if "question_id" not in columns or "prediction" not in columns:
        raise PredictionImportError(
            "CSV needs a header with question_id,prediction[,raw_response]; "
            f"got {','.join(columns) or 'nothing'}"
        )
    at_qid, at_pred = columns.index("question_id"), columns.index("prediction")
    at_raw = columns.index("raw_response") if "raw_response" in columns else None
    rows = []
    for line, row in enumerate(reader, start=2):
        if not row:
            continue
        qid = row[at_qid].strip() if at_qid < len(row) else ""
        if not qid:
            raise PredictionImportError(f"line {line}: empty question_id")
        prediction = row[at_pred] if at_pred < len(row) else ""
        raw = row[at_raw] if at_raw is not None and at_raw < len(row) else ""
        rows.append((qid, prediction, raw or prediction))
    return rows


def _check_storable(row: tuple[str, str, str]) -> None:
    """A NUL (raw, or JSON's \\u0000) or a lone surrogate (JSON's \\ud800) is not text a
    database can store: PostgreSQL refused it with a 500 (readerstudy.storable)."""
    for value in row:
        if why := unstorable_text(value):
            raise PredictionImportError(f"question {row[0]!r}: {why}")


def parse_predictions(content: bytes) -> list[tuple[str, str, str]]:
    """(question_id, text to extract from, raw response) rows; format by content."""
    try:
        text = content.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise PredictionImportError("the file is not UTF-8 text") from exc
    if not text.strip():
        raise PredictionImportError("the file is empty")
    rows = _rows_from_json(text) if text.lstrip().startswith("{") else _rows_from_csv(text)
    for row in rows:
        _check_storable(row)
    duplicates = [qid for qid, n in Counter(r[0] for r in rows).items() if n > 1]
    if duplicates:
        shown = ", ".join(duplicates[:MAX_ERRORS_SHOWN])
        raise PredictionImportError(f"duplicate rows for question id(s): {shown}")
    if not rows:
        raise PredictionImportError("the file holds no predictions")
    return rows


def studies_showing(model: AIModel) -> list[ReaderStudy]:
    """The studies of the model's dataset whose analysis shows its predictions: one query,
    the join done by the database (a question set of tens of thousands is never sent)."""
    return list(
        ReaderStudy.objects.filter(
            dataset=model.dataset_id,
            pk__in=StudyQuestion.objects.filter(question__predictions__model=model).values(
                "study_id"
            ),
        ).order_by("slug")
    )


def studies_showing_questions(dataset: Dataset, question_pks: set[int]) -> list[ReaderStudy]:
    """The studies of the dataset whose analysis would show predictions on these questions
    (a preview: nothing is written yet). Matched here rather than by `question_id IN (...)`:
    tens of thousands of parameters."""
    items = StudyQuestion.objects.filter(study__dataset=dataset)
    showing = {
        study
        for study, question in items.values_list("study_id", "question_id")
        if question in question_pks
    }
    return list(ReaderStudy.objects.filter(pk__in=showing).order_by("slug"))


def question_lookup(dataset: Dataset) -> dict[str, tuple]:
    """source_id -> (pk, option_a, …, option_d) for every question of the dataset: one query,
    read as plain rows (the ORM's per-row work cost a second at 40,826 questions)."""
    query = Question.objects.filter(dataset=dataset).values_list(
        "source_id", "id", "option_a", "option_b", "option_c", "option_d"
    )
    sql, params = query.query.sql_with_params()
    with connection.cursor() as cursor:
        cursor.execute(sql, params)
        return {row[0]: row[1:] for row in cursor.fetchall()}


def _insert_predictions(rows: list[tuple[int, int, str, str, str]]) -> None:
    """Bulk insert of (model, question, letter, raw response, rule) rows: COPY on PostgreSQL,
    one INSERT per batch elsewhere. A model instance per row cost more than all the rest at
    40,826 predictions (issue 27: <= 3 s per model). The columns come from the model, so a
    renamed field cannot go unnoticed."""
    fields = [Prediction._meta.get_field(name) for name in PREDICTION_COLUMNS]
    table = connection.ops.quote_name(Prediction._meta.db_table)
    columns = ", ".join(connection.ops.quote_name(f.column) for f in fields)
    with connection.cursor() as cursor:
        if connection.vendor == "postgresql":
            with cursor.cursor.copy(f"COPY {table} ({columns}) FROM STDIN") as copy:
                for row in rows:
                    copy.write_row(row)
            return
        marks = ", ".join(["%s"] * len(fields))
        for start in range(0, len(rows), BATCH_SIZE):
            cursor.executemany(
                f"INSERT INTO {table} ({columns}) VALUES ({marks})",
                rows[start : start + BATCH_SIZE],
            )


def _check_scope(actor, model_name: str, studies: list[ReaderStudy]) -> None:
    """Predictions belong to the dataset, so an upload changes every study that shows the
    model (its earlier predictions or the new ones): its uploader must be a PI of each.
    The other studies are counted, not named: the uploader may not be a member of them."""
    led = set(
        Membership.objects.filter(user=actor, role=Role.PI, study__in=studies).values_list(
            "study_id", flat=True
        )
    )
    others = [s for s in studies if s.id not in led]
    if others:
        raise PredictionForbidden(
            f"Nothing was imported. Predictions belong to the dataset, and model "
            f"{model_name!r} is (or would be) shown by {len(others)} other study(ies) of which "
            "you are not a PI. Only a PI of every study that shows a model may upload or "
            "replace it; choose another model name if it is a different model, or ask those "
            "studies' PIs."
        )


def predictions_import(
    *,
    dataset: Dataset,
    model_name: str,
    content: bytes,
    source: str = "",
    replace: bool = False,
    actor=None,
    through: ReaderStudy | None = None,
) -> PredictionSummary:
    """Import one model's predictions, all or nothing, and audit it in every study it changes.

    `actor` is the uploading user, who must be a PI of every such study (the command line,
    run by an operator, passes none); `through` is the study the upload came through.
    """
    model_name = model_name.strip()
    if not model_name:
        raise PredictionImportError("a model name is required")
    rows = parse_predictions(content)
    questions = question_lookup(dataset)
    unknown = [qid for qid, _, _ in rows if qid not in questions]
    if unknown:
        shown = ", ".join(unknown[:MAX_ERRORS_SHOWN])
        more = f" and {len(unknown) - MAX_ERRORS_SHOWN} more" if len(unknown) > 10 else ""
        raise PredictionImportError(
            f"{len(unknown)} question id(s) not in dataset {dataset.name!r}: {shown}{more}"
        )
    # Extraction before the transaction: it needs no database, and SQLite's write lock is
    # then held only for the writes.
    rules: Counter[str] = Counter()
    new = []
    for qid, text, raw in rows:
        question_pk, *options = questions[qid]
        extraction = extract_letter(text, options)
        rules[extraction.rule] += 1
        new.append((question_pk, extraction.letter, raw, extraction.rule))
    summary = PredictionSummary(model=model_name, dataset=dataset.name)
    with transaction.atomic():
        model, created = AIModel.objects.select_for_update().get_or_create(
            dataset=dataset, name=model_name
        )
        # The studies its earlier predictions show in (checked first: someone who may not
        # change them learns nothing more), then those the new ones show in.
        studies = {s.pk: s for s in studies_showing(model)} if not created else {}
        if actor is not None:
            _check_scope(actor, model_name, list(studies.values()))
        if not created and not replace:
            raise PredictionImportError(
                f"model {model_name!r} already has predictions; pass replace to overwrite"
            )
        if not created:
            summary.replaced, _ = model.predictions.all().delete()
        model.source_file = source[:500]
        model.save()
        _insert_predictions([(model.pk, *row) for row in new])
        studies |= {s.pk: s for s in studies_showing(model)}
        studies = sorted(studies.values(), key=lambda s: s.slug)
        if actor is not None:  # refused: the transaction takes the rows back
            _check_scope(actor, model_name, studies)
        summary.predictions = len(rows)
        summary.failed_extractions = rules.get("failed", 0)
        summary.rules = dict(sorted(rules.items()))
        summary.studies = [study.slug for study in studies]
        detail = {
            "model": model_name,
            "predictions": summary.predictions,
            "failed_extractions": summary.failed_extractions,
            "replaced": summary.replaced,
            "source": source[:500],
            "through": through.slug if through else None,
        }
        action = "predictions.upload" if created else "predictions.replace"
        AuditEvent.objects.bulk_create(
            AuditEvent(study=study, actor=actor, action=action, detail=detail) for study in studies
        )
        for study in studies:
            data_changed(study)
    return summary


def predictions_import_file(*, dataset: Dataset, model_name: str, path: Path, **kwargs):
    try:
        content = path.read_bytes()
    except OSError as exc:
        raise PredictionImportError(f"cannot read {path}: {exc}") from exc
    return predictions_import(
        dataset=dataset, model_name=model_name, content=content, source=path.name, **kwargs
    )
