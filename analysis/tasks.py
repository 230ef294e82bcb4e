"""The analysis app's study creation task (Django's Tasks API; TASKS_URL picks the engine):
a study created from the browser with its design. The tasks preparing an analysis are in
analysis.preparation."""

from __future__ import annotations

from django_tasks import task

from analysis.design import designed_study_create
from readerstudy.jobs import Run, job_run
from readerstudy.models import ReaderStudy
from readerstudy.selectors import design_sentence
from readerstudy.services.design import Design, DesignError
from readerstudy.tasks import CREATE_ERRORS, study_create_from_job


@task()
def designed_study_create_task(job_id: int) -> None:
    """A study created from the browser with its design: the creation (readerstudy.tasks) and
    the design (which snapshots the AI's answers: analysis.design) in one transaction."""
    job_run(job_id, _designed_create, expected=(*CREATE_ERRORS, DesignError))


def _designed_create(run: Run) -> dict:
    design = Design(**run.job.params.get("design", {}))
    actor = run.job.requested_by

    def wrap(make):
        created, _ = designed_study_create(design=design, create=make, actor=actor)
        return created

    result = study_create_from_job(run, wrap=wrap)
    study = ReaderStudy.objects.get(slug=result["slug"])
    result["message"] += " " + design_sentence(study) + "."
    return result
