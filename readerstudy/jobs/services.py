"""The one way long work is started, run and watched: `job_enqueue` in the web process (or a
command), `job_run` inside the task in a worker, `job_refresh` when a page looks at a job."""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import Any

from django.db import transaction
from django.utils import timezone

from readerstudy.jobs.progress import Run, Superseded, is_stale
from readerstudy.jobs.queue import queue_job
from readerstudy.jobs.sweep import schedule_sweep
from readerstudy.models import BackgroundJob, JobKind, JobStatus, ReaderStudy

log = logging.getLogger(__name__)


def job_enqueue(
    *,
    key: str,
    kind: JobKind,
    task,
    study: ReaderStudy | None = None,
    requested_by=None,
    label: str = "",
    params: dict | None = None,
    rerun_done: bool = False,
    run_after=None,
) -> BackgroundJob:
    """The job computing `key` (`queue_job`: the existing one, or a new or reset one handed
    to `task`), with a sweep scheduled to run it again should its worker die. JobRefused past
    the limit of the person who asked (`requested_by`)."""
    job = queue_job(
        key=key,
        kind=kind,
        task=task,
        study=study,
        requested_by=requested_by,
        label=label,
        params=params,
        rerun_done=rerun_done,
        run_after=run_after,
    )
    schedule_sweep()
    return job


def job_refresh(job: BackgroundJob, task) -> BackgroundJob:
    """The job as it is now; a stale one (its worker was killed) is enqueued again."""
    job.refresh_from_db()
    if is_stale(job):
        return job_enqueue(key=job.key, kind=job.kind, task=task)
    return job


def job_run(
    job_id: int,
    work: Callable[[Run], dict[str, Any] | None],
    expected: tuple[type[Exception], ...] = (Exception,),
) -> dict | None:
    """Run `work` for the job unless it is done or another live attempt runs it; record
    the outcome. A failure is recorded in words (and not raised again: the job row is where
    people read it; the engine's own record would only repeat it): the message of an
    `expected` error (written for people), else a plain sentence (the rest is in the log)."""
    with transaction.atomic():
        job = BackgroundJob.objects.select_for_update().filter(pk=job_id).first()
        if job is None or job.status == JobStatus.DONE:
            return None
        if job.status == JobStatus.RUNNING and not is_stale(job):
            return None  # a live attempt is at it
        job.status = JobStatus.RUNNING
        job.attempt += 1
        job.started_at = timezone.now()
        job.error = ""
        job.save(update_fields=["status", "attempt", "started_at", "error"])
    run = Run(job)
    run.progress(stage="starting", force=True)
    try:
        result = work(run) or {}
    except Superseded:
        log.warning("job %s: attempt %s was taken over", job_id, run.attempt)
        return None
    except Exception as exc:
        log.exception("job %s (%s) failed", job_id, job.key)
        error = (
            _in_words(exc)
            if isinstance(exc, expected)
            else "an unexpected error; the details are in the server's log."
        )
        _finish(run, JobStatus.FAILED, error=error)
        return None
    _finish(run, JobStatus.DONE, result=result)
    return result


def _in_words(exc: Exception) -> str:
    text = str(exc).strip()
    return text or f"{type(exc).__name__} (no message)"


def _finish(run: Run, status: JobStatus, *, error: str = "", result: dict | None = None) -> None:
    BackgroundJob.objects.filter(pk=run.job.pk, attempt=run.attempt).update(
        status=status, error=error, result=result or {}, finished_at=timezone.now()
    )


def jobs_of_study(study: ReaderStudy, limit: int = 10) -> list[BackgroundJob]:
    """Running and recent jobs of a study, newest first (the PI dashboard)."""
    jobs = BackgroundJob.objects.filter(study=study).select_related("requested_by")
    return list(jobs.order_by("-created_at")[:limit])
