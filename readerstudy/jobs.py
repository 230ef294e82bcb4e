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

import datetime as dt
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


class JobRefused(Exception):
    """New work refused for now, in words for the person who asked, with the seconds after
    which asking again may succeed (a 429's Retry-After)."""

    def __init__(self, message: str, retry_after: int):
        super().__init__(message)
        self.retry_after = max(1, int(retry_after))


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


def _fair_priority(job: BackgroundJob) -> int:
    """The engine's priority for `job`: lower by one for each other queued or running job of
    the same study, so a study's first job goes ahead of another study's third and no study
    starves the others on the shared queue (the engine runs higher priorities first)."""
    if job.study_id is None:
        return 0
    others = BackgroundJob.objects.filter(study_id=job.study_id, status__in=ACTIVE)
    return -min(others.exclude(pk=job.pk).count(), 100)


def _enqueue_task(job: BackgroundJob, task, run_after=None) -> None:
    """Hand the job to the engine, at the study's fair priority where the engine orders by
    priority (the database engine; RQ runs in order, and the per-study and per-person
    limits are what keep it fair). RQ lives outside the database, so it is told only once
    the job row is committed; the database backend's row commits with ours."""
    backend = task.get_backend()
    options = {"run_after": run_after} if run_after is not None else {}
    if backend.supports_priority:
        options["priority"] = _fair_priority(job)
    deferred = task.using(**options) if options else task

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
    (a django-tasks task taking `job_id`). New work asked by a person counts towards their
    limit (`check_rate`: JobRefused past it)."""
    with transaction.atomic():
        existing = BackgroundJob.objects.select_for_update().filter(key=key).first()
        if existing is not None and _keeps(existing, rerun_done):
            return existing
        if requested_by is not None:
            check_rate(requested_by)
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
            if _keeps(job, rerun_done):
                return job
            if job.status == JobStatus.RUNNING:
                log.warning("job %s (%s) fell silent; running it again", job.pk, key)
                _abandon_engine_record(job.task_id)
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
    schedule_sweep()
    job.refresh_from_db()
    return job


def _keeps(job: BackgroundJob, rerun_done: bool) -> bool:
    """The job stands as it is: queued, running and alive, or done (and not to be rerun)."""
    alive = job.status == JobStatus.QUEUED or (job.status == JobStatus.RUNNING and not _stale(job))
    return alive or (job.status == JobStatus.DONE and not rerun_done)


def check_rate(user) -> None:
    """JobRefused if `user` queued TASK_USER_LIMIT jobs in the last TASK_USER_WINDOW
    seconds (a job run again counts from then); says when to ask again. Counted from the job
    table, so every web process and worker counts alike."""
    window = settings.TASK_USER_WINDOW
    since = timezone.now() - dt.timedelta(seconds=window)
    recent = list(
        BackgroundJob.objects.filter(requested_by=user, created_at__gte=since)
        .order_by("-created_at")
        .values_list("created_at", flat=True)[: settings.TASK_USER_LIMIT]
    )
    if len(recent) < settings.TASK_USER_LIMIT:
        return
    wait = (recent[-1] - since).total_seconds()
    minutes = f"{window / 60:g} minute{'s' if window != 60 else ''}"
    raise JobRefused(
        f"You have asked for {settings.TASK_USER_LIMIT} pieces of background work (analyses, "
        f"study creations) in the last {minutes}, the most one person may: the workers are "
        f"shared by every study. Ask again in {max(1, round(wait))} s; what is already "
        "queued goes on.",
        retry_after=wait,
    )


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


def _abandon_engine_record(task_id: str) -> None:
    """The database engine's record of a task whose worker died stays "RUNNING" for ever
    (django-tasks-db has no notion of a dead worker): mark it failed, so its admin and
    `prune_db_task_results` see it ended. RQ notices dead workers itself."""
    if not task_id or type(_default_backend()).__name__ != "DatabaseBackend":
        return
    from django_tasks_db.models import DBTaskResult

    DBTaskResult.objects.filter(id=task_id, status="RUNNING").update(
        status="FAILED", finished_at=timezone.now()
    )


def _default_backend():
    """The engine itself (not django-tasks' proxy to it, whose type says nothing)."""
    from django_tasks import DEFAULT_TASK_BACKEND_ALIAS, task_backends

    return task_backends[DEFAULT_TASK_BACKEND_ALIAS]


def _task_of(job: BackgroundJob):
    """The task that ran `job`, from the engine's record of it (None if it is gone)."""
    try:
        return _default_backend().get_result(job.task_id).task
    except Exception:  # no record (pruned, Redis flushed) or a task since renamed
        log.warning("job %s: the engine has no usable record of task %r", job.pk, job.task_id)
        return None


SWEEP_MARK = "jobs:sweep:scheduled"


def schedule_sweep() -> None:
    """Make sure a `jobs_sweep` task is due within TASK_SWEEP_SECONDS (one at a time; the
    task schedules the next one while work is queued or running). Engines that cannot defer
    a task (the immediate backend of the tests) have no worker to die: nothing to do."""
    from readerstudy.tasks import jobs_sweep_task

    backend = jobs_sweep_task.get_backend()
    if not backend.supports_defer:
        return
    interval = settings.TASK_SWEEP_SECONDS
    if cache.add(SWEEP_MARK, 1, timeout=interval * 3):
        when = timezone.now() + dt.timedelta(seconds=interval)

        def send() -> None:
            jobs_sweep_task.using(run_after=when).enqueue()

        if type(backend).__name__ == "RQBackend":
            transaction.on_commit(send)
        else:
            send()


def jobs_sweep() -> dict[str, int]:
    """Housekeeping of the job table, run by a worker every TASK_SWEEP_SECONDS while there is
    work (`jobs_sweep_task`) and by `manage.py jobs_sweep` (cron, or before a worker starts):

    - a running job whose worker fell silent for TASK_STALE_SECONDS (killed, out of memory)
      is queued again, so it runs again even if nobody looks at it; after TASK_MAX_ATTEMPTS
      attempts it is marked failed, with why in words (a job that kills its worker every
      time must not loop). Its work is all or nothing, so nothing half-written remains;
    - finished jobs (done or failed) older than TASK_RETENTION_DAYS are deleted, and so are
      the database engine's finished task records.
    """
    requeued = failed = 0
    for job in BackgroundJob.objects.filter(status=JobStatus.RUNNING):
        if not _stale(job):
            continue
        task = _task_of(job) if job.attempt < settings.TASK_MAX_ATTEMPTS else None
        if task is not None:
            job_enqueue(key=job.key, kind=job.kind, task=task)
            requeued += 1
            continue
        _abandon_engine_record(job.task_id)
        why = (
            f"its worker stopped {job.attempt} times without finishing it (killed, or out "
            "of memory)"
            if job.attempt >= settings.TASK_MAX_ATTEMPTS
            else "its worker stopped and the task could not be found to run it again"
        )
        failed += BackgroundJob.objects.filter(
            pk=job.pk, status=JobStatus.RUNNING, attempt=job.attempt
        ).update(
            status=JobStatus.FAILED,
            error=f"Stopped: {why}. Nothing of it was kept; ask for it again to retry.",
            finished_at=timezone.now(),
        )
    cutoff = timezone.now() - dt.timedelta(days=settings.TASK_RETENTION_DAYS)
    pruned, _ = BackgroundJob.objects.filter(
        status__in=(JobStatus.DONE, JobStatus.FAILED), finished_at__lt=cutoff
    ).delete()
    records = 0
    if type(_default_backend()).__name__ == "DatabaseBackend":
        from django_tasks_db.models import DBTaskResult

        records, _ = DBTaskResult.objects.finished().filter(finished_at__lt=cutoff).delete()
    return {"requeued": requeued, "failed": failed, "pruned": pruned, "task_records": records}


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
