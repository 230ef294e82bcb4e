"""Creating a study from the browser, with its design, as a task: the question-bank import
(the uploaded file is stored first, under MEDIA_ROOT/uploads, which every web server and
worker shares), the sampling, the display images (read from the folder or fetched by
DICOMweb) and the design, all or nothing, with progress the page shows. The command line
(`create_study`) calls the same services directly and keeps its tqdm bars.
"""

from __future__ import annotations

import shutil
import uuid
from dataclasses import asdict
from pathlib import Path

from django.conf import settings
from django.contrib.auth import get_user_model
from django.db import transaction
from django_tasks import task

from readerstudy.design.rules import Design, DesignError
from readerstudy.design.services import study_design_set
from readerstudy.dicomweb import DicomwebError
from readerstudy.imaging import ImagingError
from readerstudy.jobs import JobRefused, Run, job_enqueue, job_run
from readerstudy.models import BackgroundJob, Dataset, JobKind
from readerstudy.rexvqa import RexvqaError
from readerstudy.selectors import design_sentence
from readerstudy.services.importing import configured_dicomweb, question_bank_study_create
from readerstudy.services.studies import StudyCreated, StudyError, study_create

# What a creation may refuse with, in words written for the person who asked.
CREATE_ERRORS = (StudyError, ImagingError, RexvqaError, DicomwebError, DesignError)


def _uploads() -> Path:
    return Path(settings.MEDIA_ROOT) / "uploads"


def study_create_start(
    *, user, options: dict, design: Design, upload=None, dataset=None, **bank
) -> BackgroundJob:
    """Store the upload (if any) and enqueue the study's creation with its design
    (`study_create_task`); `options` as for study_create (JSON-able; the requesting user
    becomes `created_by`), `bank` the question bank's `dataset_name` and `image_source`
    ("folder" or "dicomweb")."""
    token = uuid.uuid4().hex
    params = {
        "options": options,
        "dataset": dataset.pk if dataset else None,
        "design": asdict(design),
        **bank,
    }
    if upload is not None:
        folder = _uploads() / token
        folder.mkdir(parents=True)
        name = Path(upload.name).name or "questions"
        with open(folder / name, "wb") as out:
            for chunk in upload.chunks():
                out.write(chunk)
        params["file"] = f"{token}/{name}"
    try:
        return job_enqueue(
            key=f"study-create:{token}",
            kind=JobKind.QUESTION_BANK if upload is not None else JobKind.STUDY_IMAGES,
            task=study_create_task,
            requested_by=user,
            label=f"Create study {options['slug']}",
            params=params,
        )
    except JobRefused:  # the person's limit: nothing queued, so nothing kept
        _discard(params.get("file"))
        raise


def _discard(file: str | None) -> None:
    if file is not None:
        shutil.rmtree(_uploads() / Path(file).parent, ignore_errors=True)


@task()
def study_create_task(job_id: int) -> None:
    job_run(job_id, _create, expected=CREATE_ERRORS)


def _create(run: Run) -> dict:
    """Create and design the study a job describes, both or neither."""
    params = run.job.params
    file = params.get("file")
    try:
        with transaction.atomic():
            created, imported = _sample(run)
            study_design_set(
                study=created.study,
                design=Design(**params.get("design", {})),
                actor=run.job.requested_by,
            )
    except Exception:
        _discard(file)  # failed, nothing written: the job is over (a retry is a new upload)
        raise
    # Not on a BaseException (the worker stopping): the job runs again and needs the file.
    _discard(file)
    study = created.study
    BackgroundJob.objects.filter(pk=run.job.pk).update(study=study)
    return {
        "slug": study.slug,
        "message": imported
        + f"Created {study.title} with {len(created.question_ids)} questions. "
        + design_sentence(study)
        + ".",
    }


def _sample(run: Run) -> tuple[StudyCreated, str]:
    """The study sampled from the job's dataset, or from its uploaded question bank once
    imported; and what the import did, in words ("" without an upload)."""
    params = run.job.params
    options = dict(params["options"])
    options["created_by"] = get_user_model().objects.filter(pk=run.job.requested_by_id).first()
    file = params.get("file")
    if file is None:
        dataset = Dataset.objects.get(pk=params["dataset"])
        return study_create(dataset=dataset, progress=run.progress, **options), ""
    path = _uploads() / file
    from_folder = params["image_source"] == "folder"
    with open(path, "rb") as handle:
        summary, created = question_bank_study_create(
            handle=handle,
            filename=path.name,
            dataset_name=params["dataset_name"],
            images_root=Path(settings.IMPORT_IMAGES_ROOT) if from_folder else None,
            dicomweb=None if from_folder else configured_dicomweb(),
            progress=run.progress,
            **options,
        )
    imported = (
        f"Imported {summary.questions_created} new questions "
        f"({summary.questions_unchanged} already there) into {summary.dataset}. "
    )
    return created, imported
