"""Import question files: validate everything first (fetching images), then write in one go.

Two readers (ReXVQA JSON, spreadsheet question bank) produce raw records; one validation core
(`readerstudy.rexvqa.iter_parse`) checks them against an image source (a folder, or a DICOMweb
server whose instances are cached under MEDIA_ROOT); one writer stores them. All or nothing:
on any error nothing is written, and files fetched by this import are removed again.
"""

from __future__ import annotations

import sys
from collections import Counter
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import IO, Any

from django.conf import settings
from django.db import transaction

from readerstudy.dicomweb import (
    DicomwebClient,
    DicomwebConfig,
    DicomwebSource,
    InstanceRef,
    SourceCache,
)
from readerstudy.models import Case, Dataset, Image, Question, Task
from readerstudy.question_bank import read_question_bank
from readerstudy.question_versions import QuestionVersion
from readerstudy.rexvqa import (
    FolderSource,
    ImageSource,
    ParsedCase,
    ParsedQuestion,
    RawRecord,
    RexvqaError,
    iter_parse,
    json_records,
    load_json,
)
from readerstudy.services.studies import StudyCreated, study_create
from readerstudy.services.versions import first_versions_create, link_reversals, released_versions

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
    # Binary questions in the file (present_option, given or detected from yes/no options).
    binary: int = 0
    # Questions already imported whose binary declaration (present_option) this import set or
    # changed: it is no content a reader saw, so it may change.
    binary_declared: int = 0
    per_task: dict[str, int] = field(default_factory=dict)

    def as_dict(self) -> dict:
        return asdict(self)


Report = Callable[[int, int, str], None]  # (done, total, stage): a task's progress


def _progress(iterable, total: int, enabled: bool | Report, desc: str = "Checking"):
    """The command line's tqdm bar (`True`), a task's progress report (a callable), or none."""
    if not enabled:
        return iterable
    if callable(enabled):
        return _reported(iterable, total, enabled, f"{desc} questions and their images")
    from tqdm import tqdm

    return tqdm(iterable, total=total, unit="q", desc=desc, file=sys.stderr)


def _reported(iterable, total: int, report: Report, stage: str):
    for done, item in enumerate(iterable):
        report(done, total, stage)
        yield item
    report(total, total, stage)


def _question_fields(parsed: ParsedQuestion) -> dict:
    """The Question row: version 1 (a corrected bank's later versions are its versions)."""
    first = parsed.first
    return {
        "text": first.text,
        "option_a": first.options[0],
        "option_b": first.options[1],
        "option_c": first.options[2],
        "option_d": first.options[3],
        "correct": first.correct,
        "explanation": first.explanation,
        "task": parsed.task,
        "category": parsed.category,
        "subcategory": parsed.subcategory,
        "klass": parsed.klass,
    }


# Question fields an import may change on a question already imported (no content of it).
DECLARATIONS = ("present_option",)


@contextmanager
def image_source(
    *,
    images_root: Path | None,
    dicomweb: DicomwebConfig | None,
    on_fetch: Callable[[InstanceRef], None] | None = None,
) -> Iterator[ImageSource]:
    """The image source for one import; on failure, forget the files it fetched.

    Wrap the import *and* anything else that must succeed with it (e.g. creating a study from
    the new questions) in this context, so that a later failure also removes the fetched files.
    """
    if dicomweb is None:
        if images_root is None or not Path(images_root).is_dir():
            raise RexvqaError(f"images root {images_root} is not a folder")
        yield FolderSource(Path(images_root), max_pixels=settings.MAX_IMAGE_PIXELS)
        return
    cache = SourceCache(Path(settings.MEDIA_ROOT))
    known = dict(
        Image.objects.filter(source_uri__startswith=f"{dicomweb.url}/").values_list(
            "source_uri", "source_path"
        )
    )
    source = DicomwebSource(DicomwebClient(dicomweb), cache, known=known, on_fetch=on_fetch)
    try:
        yield source
    except BaseException:
        cache.discard(keep=lambda path: Image.objects.filter(source_path=path).exists())
        raise


def parse_records(
    records: Sequence[RawRecord], source: ImageSource, *, progress: bool | Report = False
) -> tuple[list[ParsedQuestion], dict[str, ParsedCase]]:
    questions: list[ParsedQuestion] = []
    cases: dict[str, ParsedCase] = {}
    desc = "Checking" if isinstance(source, FolderSource) else "Fetching"
    for question, case in _progress(iter_parse(records, source), len(records), progress, desc):
        questions.append(question)
        if case is not None:
            cases[case.study_id] = case
    return questions, cases


def records_import(
    *,
    records: Sequence[RawRecord],
    dataset_name: str,
    source: ImageSource,
    progress: bool | Report = False,
) -> ImportSummary:
    """Validate every record (fetching its images), then write all of them in one transaction."""
    questions, cases = parse_records(records, source, progress=progress)
    summary = ImportSummary(dataset=dataset_name)
    summary.per_task = {
        Task(task).label: count
        for task, count in sorted(Counter(q.task for q in questions).items())
    }
    summary.binary = sum(1 for q in questions if q.present_option)
    with transaction.atomic():
        dataset, _ = Dataset.objects.get_or_create(name=dataset_name)
        case_ids = _write_cases(dataset, cases, summary)
        _write_questions(dataset, questions, case_ids, summary)
    return summary


def rexvqa_import(
    *,
    path: Path,
    dataset_name: str,
    images_root: Path | None = None,
    dicomweb: DicomwebConfig | None = None,
    progress: bool = False,
    on_fetch: Callable[[InstanceRef], None] | None = None,
) -> ImportSummary:
    """Import a ReXVQA file; on any error raise RexvqaError and write nothing at all.

    Images come from `images_root` (default: the parent of the file's folder, which holds
    deid_png/) or, with `dicomweb`, from a DICOMweb server by the UIDs in each ImagePath.
    """
    records = json_records(load_json(path))
    if dicomweb is None and images_root is None:
        images_root = path.resolve().parent.parent
    with image_source(images_root=images_root, dicomweb=dicomweb, on_fetch=on_fetch) as source:
        return records_import(
            records=records, dataset_name=dataset_name, source=source, progress=progress
        )


def question_bank_import(
    *,
    path: Path,
    dataset_name: str,
    images_root: Path | None = None,
    dicomweb: DicomwebConfig | None = None,
    progress: bool = False,
) -> ImportSummary:
    """Import a spreadsheet question bank (.csv or .xlsx); all or nothing, like rexvqa_import.

    Image paths are relative to `images_root` (default: the spreadsheet's folder).
    """
    with open(path, "rb") as handle:
        records = read_question_bank(handle, path.name)
    if dicomweb is None and images_root is None:
        images_root = path.resolve().parent
    with image_source(images_root=images_root, dicomweb=dicomweb) as source:
        return records_import(
            records=records, dataset_name=dataset_name, source=source, progress=progress
        )


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
    # A fetched image is the same image when it has the same source (server + UIDs); a file
    # is the same when it has the same path.
    existing_images = {
        (case_id, uri or path)
        for case_id, uri, path in Image.objects.filter(case__dataset=dataset).values_list(
            "case_id", "source_uri", "source_path"
        )
    }
    new_images = []
    for sid, case in cases.items():
        for position, img in enumerate(case.images):
            key = (case_ids[sid], img.source_uri or img.source_path)
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
                    source_uri=img.source_uri,
                )
            )
    summary.images_created = len(new_images)
    Image.objects.bulk_create(new_images, batch_size=BATCH)
    return case_ids


def _write_questions(dataset, questions, case_ids, summary: ImportSummary) -> None:
    existing = {
        row["source_id"]: row
        for row in dataset.questions.values(
            "pk",
            "source_id",
            "case__study_id",
            *_question_fields(questions[0]).keys(),
            *DECLARATIONS,
        )
    }
    declared: list[Question] = []
    stored_versions = _stored_versions(
        dataset, [q.source_id for q in questions if q.source_id in existing]
    )
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
                    present_option=parsed.present_option,
                    **fields,
                )
            )
            continue
        changed = [k for k, v in fields.items() if current[k] != v]
        if current["case__study_id"] != parsed.study_id:
            changed.append("study_id")
        if not changed and _versions_of(parsed) != stored_versions.get(parsed.source_id):
            changed.append("versions")
        if changed:
            raise RexvqaError(
                f"already imported with different {', '.join(changed)}; answers may refer to "
                "the old text, so it is not overwritten (import into a new dataset)",
                question_id=parsed.source_id,
                field=changed[0],
            )
        summary.questions_unchanged += 1
        if current["present_option"] != parsed.present_option:
            declared.append(Question(pk=current["pk"], present_option=parsed.present_option))
    summary.questions_created = len(new)
    summary.binary_declared = len(declared)
    Question.objects.bulk_create(new, batch_size=BATCH)
    Question.objects.bulk_update(declared, DECLARATIONS, batch_size=BATCH)
    released = {q.source_id: q for q in questions if q.history or q.accepted != q.correct}
    created = dataset.questions.filter(source_id__in=[q.source_id for q in new])
    first_versions_create(
        created.exclude(source_id__in=list(released)).values_list("pk", flat=True)
    )
    for question in created.filter(source_id__in=list(released)):
        parsed = released[question.source_id]
        history = parsed.history or (parsed.first,)
        versions = QuestionVersion.objects.bulk_create(released_versions(question, history))
        link_reversals(versions, history)


def _versions_of(parsed: ParsedQuestion) -> list[tuple]:
    """A parsed question's versions as compared with stored ones (number, content, error)."""
    return [
        (v.number, v.text, *v.options, v.correct, v.accepted, v.explanation, v.error_type)
        for v in (parsed.history or (parsed.first,))
    ]


def _stored_versions(dataset, source_ids: list[str]) -> dict[str, list[tuple]]:
    out: dict[str, list[tuple]] = {}
    rows = (
        QuestionVersion.objects.filter(
            question__dataset=dataset, question__source_id__in=source_ids
        )
        .order_by("question_id", "number")
        .values_list(
            "question__source_id",
            "number",
            "text",
            "option_a",
            "option_b",
            "option_c",
            "option_d",
            "correct",
            "accepted",
            "explanation",
            "error_type",
        )
    )
    for source_id, *version in rows:
        out.setdefault(source_id, []).append(tuple(version))
    return out


def configured_dicomweb() -> DicomwebConfig | None:
    """The DICOMweb server set in the settings (the only one the web pages may use)."""
    if not settings.DICOMWEB_URL:
        return None
    return DicomwebConfig(
        url=settings.DICOMWEB_URL,
        username=settings.DICOMWEB_USER,
        password=settings.DICOMWEB_PASSWORD,
        token=settings.DICOMWEB_TOKEN,
        timeout=settings.DICOMWEB_TIMEOUT,
        retries=settings.DICOMWEB_RETRIES,
        backoff=settings.DICOMWEB_BACKOFF,
        max_instance_bytes=settings.DICOMWEB_MAX_INSTANCE_BYTES,
    )


def question_bank_study_create(
    *,
    handle: IO[bytes],
    filename: str,
    dataset_name: str,
    images_root: Path | None,
    dicomweb: DicomwebConfig | None,
    progress: Report | None = None,
    **study_options: Any,
) -> tuple[ImportSummary, StudyCreated]:
    """Import an uploaded question bank and sample a study from it, both or neither.

    Raises RexvqaError (the file), StudyError (the sampling) or ImagingError (a display image);
    then no dataset, question, study or fetched file is left behind.
    """
    records = read_question_bank(handle, filename)
    with (
        image_source(images_root=images_root, dicomweb=dicomweb) as source,
        transaction.atomic(),
    ):
        summary = records_import(
            records=records, dataset_name=dataset_name, source=source, progress=progress or False
        )
        created = study_create(
            dataset=Dataset.objects.get(name=dataset_name), progress=progress, **study_options
        )
    return summary, created
