"""Background jobs: the one way long work is started, run, watched and re-run.

The engine is Django's Tasks API (the `django-tasks` backport; TASKS_URL picks the database
or RQ on Redis). On top of it a `BackgroundJob` row per piece of work, keyed by what the work
computes, gives what the engine alone does not:

- idempotence: `job_enqueue` with the key of a queued, running or finished job returns that
  job instead of starting the work again;
- a killed worker's job runs again: a running job reports a heartbeat (with its progress) to
  the shared cache; one silent for TASK_STALE_SECONDS is enqueued again by the next request
  that looks at it (`job_refresh`), and `job_run` lets only one attempt at a time do the work;
- progress and errors people can read: counts, a stage, an estimate, the error in words.

Progress goes to the cache, not the database: an import writes it from inside its own
transaction, which no other process can see until the end (and which SQLite would make any
second writer wait for).
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from django.conf import settings
from django.core.cache import cache
from django.db import transaction
from django.utils import timezone

from readerstudy.models import BackgroundJob, JobKind, JobStatus, ReaderStudy

log = logging.getLogger(__name__)

ACTIVE = (JobStatus.QUEUED, JobStatus.RUNNING)


class Superseded(Exception):
    """This attempt's job was taken over by a newer attempt (it was thought dead)."""


def _progress_key(job_id: int) -> str:
    return f"job:{job_id}:progress"


@dataclass
class Progress:
    done: int = 0
    total: int = 0
    stage: str = ""
    attempt: int = 0
    beat: float = 0.0  # time.time() of the last report
    started: float = 0.0

    @property
    def fraction(self) -> float | None:
        return min(1.0, self.done / self.total) if self.total else None

    @property
    def eta_seconds(self) -> float | None:
        """Seconds left at the rate so far (None until there is a rate)."""
        if not self.total or not self.done or self.done >= self.total:
            return None
        elapsed = self.beat - self.started
        return elapsed / self.done * (self.total - self.done)


def job_progress(job: BackgroundJob) -> Progress:
    raw = cache.get(_progress_key(job.pk))
    return Progress(**raw) if raw else Progress()


def _stale(job: BackgroundJob) -> bool:
    """A running job whose worker has said nothing for TASK_STALE_SECONDS (killed)."""
    if job.status != JobStatus.RUNNING:
        return False
    beat = job_progress(job).beat or (job.started_at.timestamp() if job.started_at else 0)
    return time.time() - beat > settings.TASK_STALE_SECONDS


class Run:
    """One attempt at a job, inside a worker: reports progress and notices a takeover."""

    def __init__(self, job: BackgroundJob):
        self.job = job
        self.attempt = job.attempt
        self.started = time.time()
        self._last = 0.0

    def progress(self, done: int = 0, total: int = 0, stage: str = "", *, force=False) -> None:
        """Report progress (and that this worker is alive); at most a few writes a second.
        Raises Superseded if another attempt has taken the job over."""
        now = time.time()
        if not force and now - self._last < 0.5:
            return
        self._last = now
        current = cache.get(_progress_key(self.job.pk))
        if current and current.get("attempt", 0) > self.attempt:
            raise Superseded(f"job {self.job.pk} attempt {self.attempt}")
        cache.set(
            _progress_key(self.job.pk),
            {
                "done": done,
                "total": total,
                "stage": stage,
                "attempt": self.attempt,
                "beat": now,
                "started": self.started,
            },
            timeout=24 * 3600,
        )


def _enqueue_task(job: BackgroundJob, task, run_after=None) -> None:
    """Hand the job to the engine. RQ lives outside the database, so it is told only once
    the job row is committed; the database backend's row commits with ours."""
    backend = task.get_backend()
    deferred = task.using(run_after=run_after) if run_after is not None else task

    def send() -> None:
        result = deferred.enqueue(job_id=job.pk)
        BackgroundJob.objects.filter(pk=job.pk).update(task_id=str(result.id)[:64])

    if type(backend).__name__ == "RQBackend":
        transaction.on_commit(send)
    else:
        send()


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
    """The job computing `key`: the existing one if it is queued, running (and alive) or
    done (unless `rerun_done`), else a new or reset one handed to `task`
    (a django-tasks task taking `job_id`)."""
    with transaction.atomic():
        job, created = BackgroundJob.objects.select_for_update().get_or_create(
            key=key,
            defaults={
                "kind": kind,
                "study": study,
                "requested_by": requested_by,
                "label": label,
                "params": params or {},
            },
        )
        if not created:
            alive = job.status == JobStatus.QUEUED or (
                job.status == JobStatus.RUNNING and not _stale(job)
            )
            if alive or (job.status == JobStatus.DONE and not rerun_done):
                return job
            if job.status == JobStatus.RUNNING:
                log.warning("job %s (%s) fell silent; running it again", job.pk, key)
            job.status = JobStatus.QUEUED
            job.error = ""
            job.finished_at = None
            job.requested_by = requested_by or job.requested_by
            job.created_at = timezone.now()
            job.params = params if params is not None else job.params
            job.save(
                update_fields=[
                    "status",
                    "error",
                    "finished_at",
                    "requested_by",
                    "created_at",
                    "params",
                ]
            )
        _enqueue_task(job, task, run_after=run_after)
    job.refresh_from_db()
    return job


def job_refresh(job: BackgroundJob, task) -> BackgroundJob:
    """The job as it is now; a stale one (its worker was killed) is enqueued again."""
    job.refresh_from_db()
    if _stale(job):
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
        if job.status == JobStatus.RUNNING and not _stale(job):
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


def run_queue_until_empty(*, worker_id: str = "inline", queue_names=("default",)) -> None:
    """Run the database backend's own worker loop (django-tasks-db's `Worker`, as
    `manage.py db_worker --batch` does) in this process until no task is ready, then return.

    For benchmarks and tests that need what a worker does, through the real claim-and-run
    code, without a second process. Tasks deferred to later (`run_after`) stay queued."""
    from django_tasks_db.management.commands.db_worker import Worker

    Worker(
        queue_names=list(queue_names),
        interval=0,
        batch=True,
        backend_name="default",
        startup_delay=False,
        max_tasks=None,
        worker_id=worker_id,
        excluded_queue_names=[],
    ).run()


def jobs_of_study(study: ReaderStudy, limit: int = 10) -> list[BackgroundJob]:
    """Running and recent jobs of a study, newest first (the PI dashboard)."""
    jobs = BackgroundJob.objects.filter(study=study).select_related("requested_by")
    return list(jobs.order_by("-created_at")[:limit])
