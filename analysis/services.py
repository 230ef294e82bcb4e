"""Import AI predictions (CSV or ReXVQA inference JSON), all or nothing."""

from __future__ import annotations

import csv
import io
import json
from collections import Counter
from dataclasses import asdict, dataclass, field
from pathlib import Path

from django.db import transaction

from analysis.models import AIModel, Prediction
from analysis.stats.extraction import extract_letter
from readerstudy.models import Dataset

MAX_ERRORS_SHOWN = 10


class PredictionImportError(ValueError):
    pass


@dataclass
class PredictionSummary:
    model: str
    dataset: str
    predictions: int = 0
    failed_extractions: int = 0
    replaced: int = 0
    rules: dict[str, int] = field(default_factory=dict)

    def as_dict(self) -> dict:
        return asdict(self)


def _rows_from_json(text: str) -> list[tuple[str, str, str]]:
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise PredictionImportError(f"not valid JSON: {exc}") from exc
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
    reader = csv.DictReader(io.StringIO(text))
    columns = [c.strip() for c in reader.fieldnames or []]
    if "question_id" not in columns or "prediction" not in columns:
        raise PredictionImportError(
            "CSV needs a header with question_id,prediction[,raw_response]; "
            f"got {','.join(columns) or 'nothing'}"
        )
    reader.fieldnames = columns
    rows = []
    for line, row in enumerate(reader, start=2):
        qid = (row.get("question_id") or "").strip()
        if not qid:
            raise PredictionImportError(f"line {line}: empty question_id")
        prediction = row.get("prediction") or ""
        rows.append((qid, prediction, row.get("raw_response") or prediction))
    return rows


def parse_predictions(content: bytes) -> list[tuple[str, str, str]]:
    """(question_id, text to extract from, raw response) rows; format by content."""
    try:
        text = content.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise PredictionImportError("the file is not UTF-8 text") from exc
    if not text.strip():
        raise PredictionImportError("the file is empty")
    rows = _rows_from_json(text) if text.lstrip().startswith("{") else _rows_from_csv(text)
    duplicates = [qid for qid, n in Counter(r[0] for r in rows).items() if n > 1]
    if duplicates:
        shown = ", ".join(duplicates[:MAX_ERRORS_SHOWN])
        raise PredictionImportError(f"duplicate rows for question id(s): {shown}")
    if not rows:
        raise PredictionImportError("the file holds no predictions")
    return rows


def predictions_import(
    *, dataset: Dataset, model_name: str, content: bytes, source: str = "", replace: bool = False
) -> PredictionSummary:
    model_name = model_name.strip()
    if not model_name:
        raise PredictionImportError("a model name is required")
    rows = parse_predictions(content)
    questions = {
        q.source_id: q
        for q in dataset.questions.only(
            "id", "source_id", "option_a", "option_b", "option_c", "option_d"
        )
    }
    unknown = [qid for qid, _, _ in rows if qid not in questions]
    if unknown:
        shown = ", ".join(unknown[:MAX_ERRORS_SHOWN])
        more = f" and {len(unknown) - MAX_ERRORS_SHOWN} more" if len(unknown) > 10 else ""
        raise PredictionImportError(
            f"{len(unknown)} question id(s) not in dataset {dataset.name!r}: {shown}{more}"
        )
    summary = PredictionSummary(model=model_name, dataset=dataset.name)
    rules: Counter[str] = Counter()
    with transaction.atomic():
        model, created = AIModel.objects.get_or_create(dataset=dataset, name=model_name)
        if not created:
            if not replace:
                raise PredictionImportError(
                    f"model {model_name!r} already has predictions; pass replace to overwrite"
                )
            summary.replaced, _ = model.predictions.all().delete()
        model.source_file = source[:500]
        model.save()
        new = []
        for qid, text, raw in rows:
            question = questions[qid]
            extraction = extract_letter(text, question.options)
            rules[extraction.rule] += 1
            new.append(
                Prediction(
                    model=model,
                    question=question,
                    letter=extraction.letter,
                    raw_response=raw,
                    rule=extraction.rule,
                )
            )
        Prediction.objects.bulk_create(new, batch_size=2000)
    summary.predictions = len(rows)
    summary.failed_extractions = rules.get("failed", 0)
    summary.rules = dict(sorted(rules.items()))
    return summary


def predictions_import_file(*, dataset: Dataset, model_name: str, path: Path, **kwargs):
    try:
        content = path.read_bytes()
    except OSError as exc:
        raise PredictionImportError(f"cannot read {path}: {exc}") from exc
    return predictions_import(
        dataset=dataset, model_name=model_name, content=content, source=path.name, **kwargs
    )
