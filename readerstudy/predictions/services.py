"""Import AI predictions (CSV or ReXVQA inference JSON), all or nothing."""

from __future__ import annotations

import json
from collections import Counter
from dataclasses import asdict, dataclass, field
from pathlib import Path

from django.db import connection, transaction

from readerstudy.models import (
    AuditEvent,
    Dataset,
    Membership,
    Question,
    ReaderStudy,
    Role,
    StudyQuestion,
)
from readerstudy.prediction_probabilities import check_chosen
from readerstudy.predictions.extraction import extract_letter
from readerstudy.predictions.files import (
    PredictionImportError,
    PredictionRow,
    problem_lines,
    read_predictions,
    unknown_ids,
)
from readerstudy.predictions.models import AIModel, Prediction
from readerstudy.signals import data_changed
from readerstudy.vocabulary import OPTION_FIELDS

BATCH_SIZE = 5000
PREDICTION_COLUMNS = (
    "model",
    "question",
    "letter",
    "raw_response",
    "rule",
    "probability",
    "option_probabilities",
)
FAILED = "failed"  # the extraction rule of a response with no letter found


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
    # Where no letter was found: {"where": "line 7", "question_id": ..., "text": ...}
    failed_rows: list[dict] = field(default_factory=list)

    def as_dict(self) -> dict:
        return asdict(self)


def checked_rows(dataset: Dataset, content: bytes) -> tuple[list[PredictionRow], dict]:
    """The file's rows and the dataset's questions (question_lookup), once every row is
    importable; else PredictionImportError naming every problem of the file with its rows."""
    parsed = read_predictions(content)
    questions = question_lookup(dataset)
    problems = parsed.problems + unknown_ids(parsed.rows, questions)
    if problems:
        raise PredictionImportError("; ".join(problem_lines(problems, dataset.name)))
    return parsed.rows, questions


def failed_row(row: PredictionRow) -> dict:
    """A row whose response gave no letter, as the preview and the summary list it."""
    return {"where": row.where, "question_id": row.question_id, "text": row.text[:200]}


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
    query = Question.objects.filter(dataset=dataset).values_list("source_id", "id", *OPTION_FIELDS)
    sql, params = query.query.sql_with_params()
    with connection.cursor() as cursor:
        cursor.execute(sql, params)
        return {row[0]: row[1:] for row in cursor.fetchall()}


def _insert_predictions(rows: list[tuple]) -> None:
    """Bulk insert of (model, question, letter, raw response, rule, probability, option
    probabilities as JSON text) rows: COPY on PostgreSQL, one INSERT per batch elsewhere. A
    model instance per row would cost more than all the rest at 40,826 predictions (goal:
    <= 3 s per model, benchmarks/prediction_import_bench.py). The columns come from the model,
    so a renamed field cannot go unnoticed."""
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
    rows, questions = checked_rows(dataset, content)
    # Extraction before the transaction: it needs no database, and SQLite's write lock is
    # then held only for the writes.
    rules: Counter[str] = Counter()
    new = []
    failed = []
    contradictions = []
    for row in rows:
        question_pk, *options = questions[row.question_id]
        extraction = extract_letter(row.text, options)
        rules[extraction.rule] += 1
        if extraction.rule == FAILED:
            failed.append(failed_row(row))
        given = row.probabilities
        why = check_chosen(given, extraction.letter)
        if why:
            contradictions.append(
                f"{row.question_id} ({row.where}, answer {extraction.letter}: {why})"
            )
        new.append(
            (
                question_pk,
                extraction.letter,
                row.raw,
                extraction.rule,
                given.of_answer(extraction.letter) if extraction.letter else given.chosen,
                json.dumps(given.options),
            )
        )
    if contradictions:
        raise PredictionImportError(
            f"{len(contradictions)} row(s) give a probability for the chosen answer that is not "
            f"its option's: {'; '.join(contradictions[:30])}"
        )
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
        summary.failed_extractions = rules.get(FAILED, 0)
        summary.failed_rows = failed
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
