"""Import a ReXVQA question file: validate everything first, then write in one transaction."""

from __future__ import annotations

import sys
from collections import Counter
from dataclasses import asdict, dataclass, field
from pathlib import Path

from django.conf import settings
from django.db import transaction

from readerstudy.models import Case, Dataset, Image, Question, Task
from readerstudy.rexvqa import ParsedCase, ParsedQuestion, RexvqaError, iter_parse, load_json

BATCH = 2000


@dataclass
class ImportSummary:
    dataset: str
    questions_created: int = 0
    questions_unchanged: int = 0
    cases_created: int = 0
    cases_unchanged: int = 0
    images_created: int = 0
    images_unchanged: int = 0
    per_task: dict[str, int] = field(default_factory=dict)

    def as_dict(self) -> dict:
        return asdict(self)


def _progress(iterable, total: int, enabled: bool):
    if not enabled:
        return iterable
    from tqdm import tqdm

    return tqdm(iterable, total=total, unit="q", desc="Checking", file=sys.stderr)


def _question_fields(parsed: ParsedQuestion) -> dict:
    return {
        "text": parsed.text,
        "option_a": parsed.options[0],
        "option_b": parsed.options[1],
        "option_c": parsed.options[2],
        "option_d": parsed.options[3],
        "correct": parsed.correct,
        "explanation": parsed.explanation,
        "task": parsed.task,
        "category": parsed.category,
        "subcategory": parsed.subcategory,
        "klass": parsed.klass,
    }


def parse_file(path: Path, images_root: Path | None, *, progress: bool = False):
    data = load_json(path)
    root = images_root if images_root is not None else path.resolve().parent.parent
    if not root.is_dir():
        raise RexvqaError(f"images root {root} is not a folder")
    questions: list[ParsedQuestion] = []
    cases: dict[str, ParsedCase] = {}
    parsed = iter_parse(data, root, max_pixels=settings.MAX_IMAGE_PIXELS)
    for question, case in _progress(parsed, len(data), progress):
        questions.append(question)
        if case is not None:
            cases[case.study_id] = case
    return questions, cases


def rexvqa_import(
    *, path: Path, dataset_name: str, images_root: Path | None = None, progress: bool = False
) -> ImportSummary:
    """Import a file; on any error raise RexvqaError and write nothing at all."""
    questions, cases = parse_file(path, images_root, progress=progress)
    summary = ImportSummary(dataset=dataset_name)
    summary.per_task = {
        Task(task).label: count
        for task, count in sorted(Counter(q.task for q in questions).items())
    }
    with transaction.atomic():
        dataset, _ = Dataset.objects.get_or_create(name=dataset_name)
        case_ids = _write_cases(dataset, cases, summary)
        _write_questions(dataset, questions, case_ids, summary)
    return summary


def _write_cases(dataset: Dataset, cases: dict[str, ParsedCase], summary: ImportSummary):
    existing = dict(dataset.cases.values_list("study_id", "id"))
    new_cases = [
        Case(
            dataset=dataset,
            study_id=c.study_id,
            study_instance_uid=c.study_instance_uid[:200],
            patient_id=c.patient_id[:200],
            patient_age=c.patient_age,
            patient_sex=c.patient_sex,
            study_date=c.study_date,
            indication=c.indication,
            findings=c.findings,
            impression=c.impression,
        )
        for sid, c in cases.items()
        if sid not in existing
    ]
    summary.cases_unchanged = len(cases) - len(new_cases)
    summary.cases_created = len(new_cases)
    Case.objects.bulk_create(new_cases, batch_size=BATCH)
    case_ids = dict(dataset.cases.values_list("study_id", "id"))
    existing_images = set(
        Image.objects.filter(case__dataset=dataset).values_list("case_id", "source_path")
    )
    new_images = []
    for sid, case in cases.items():
        for position, img in enumerate(case.images):
            key = (case_ids[sid], img.source_path)
            if key in existing_images:
                summary.images_unchanged += 1
                continue
            if sid in existing:
                raise RexvqaError(
                    f"case {sid!r} is already imported with other images; "
                    "import it into a new dataset instead"
                )
            new_images.append(
                Image(
                    case_id=case_ids[sid],
                    position=position,
                    view_position=img.view_position,
                    modality=img.modality,
                    source_path=img.source_path,
                )
            )
    summary.images_created = len(new_images)
    Image.objects.bulk_create(new_images, batch_size=BATCH)
    return case_ids


def _write_questions(dataset, questions, case_ids, summary: ImportSummary) -> None:
    existing = {
        row["source_id"]: row
        for row in dataset.questions.values(
            "source_id", "case__study_id", *_question_fields(questions[0]).keys()
        )
    }
    new = []
    for parsed in questions:
        fields = _question_fields(parsed)
        current = existing.get(parsed.source_id)
        if current is None:
            new.append(
                Question(
                    dataset=dataset,
                    case_id=case_ids[parsed.study_id],
                    source_id=parsed.source_id,
                    **fields,
                )
            )
            continue
        changed = [k for k, v in fields.items() if current[k] != v]
        if current["case__study_id"] != parsed.study_id:
            changed.append("study_id")
        if changed:
            raise RexvqaError(
                f"already imported with different {', '.join(changed)}; answers may refer to "
                "the old text, so it is not overwritten (import into a new dataset)",
                question_id=parsed.source_id,
                field=changed[0],
            )
        summary.questions_unchanged += 1
    summary.questions_created = len(new)
    Question.objects.bulk_create(new, batch_size=BATCH)
