"""Study creation from the browser as a task: the question-bank import (the uploaded file is
stored first, under MEDIA_ROOT/uploads, which every web server and worker shares), the
sampling and the display images (read from the folder or fetched by DICOMweb), all or
nothing, with progress the page shows. The command line calls the same services directly and
keeps its tqdm bars."""

from __future__ import annotations

import shutil
import uuid
from pathlib import Path

from django.conf import settings
from django.contrib.auth import get_user_model

from readerstudy.dicomweb import DicomwebError
from readerstudy.imaging import ImagingError
from readerstudy.jobs import JobRefused, Run, job_enqueue
from readerstudy.models import BackgroundJob, Dataset, JobKind
from readerstudy.rexvqa import RexvqaError
from readerstudy.services.importing import configured_dicomweb, question_bank_study_create
from readerstudy.services.studies import StudyError, study_create


def _uploads() -> Path:
    return Path(settings.MEDIA_ROOT) / "uploads"


def study_create_start(
    *, user, options: dict, task, upload=None, dataset=None, **bank
) -> BackgroundJob:
    """Store the upload (if any) and enqueue the study's creation as `task`, a task whose
    work calls `study_create_from_job` (analysis.tasks.designed_study_create_task wraps it to
    set the study's design in the same transaction); `options` as for study_create
    (JSON-able; the requesting user becomes `created_by`), `bank` the question bank's
    `dataset_name` and `image_source` ("folder" or "dicomweb") and any JSON-able extra the
    task needs."""
    token = uuid.uuid4().hex
    params = {"options": options, "dataset": dataset.pk if dataset else None, **bank}
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
            task=task,
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


CREATE_ERRORS = (StudyError, ImagingError, RexvqaError, DicomwebError)


def study_create_from_job(run: Run, wrap=None) -> dict:
    """Create the study a job describes. `wrap(make)` may run the creation `make()` inside
    more work of its own (both or neither), and returns what `make` returned."""
    params = run.job.params
    options = dict(params["options"])
    options["created_by"] = get_user_model().objects.filter(pk=run.job.requested_by_id).first()
    file = params.get("file")
    imported = ""

    def make():
        nonlocal imported
        if file is None:
            dataset = Dataset.objects.get(pk=params["dataset"])
            return study_create(dataset=dataset, progress=run.progress, **options)
        path = _uploads() / file
        from_folder = params["image_source"] == "folder"
        with open(path, "rb") as handle:
            summary, made = question_bank_study_create(
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
        return made

    try:
        created = wrap(make) if wrap is not None else make()
    except Exception:
        _discard(file)  # failed, nothing written: the job is over (a retry is a new upload)
        raise
    # Not on a BaseException (the worker stopping): the job runs again and needs the file.
    _discard(file)
    BackgroundJob.objects.filter(pk=run.job.pk).update(study=created.study)
    return {
        "slug": created.study.slug,
        "message": imported
        + f"Created {created.study.title} with {len(created.question_ids)} questions.",
    }
