"""The task engine: Django's Tasks API (the `django-tasks` backport), with TASKS_URL choosing
its backend (the database, RQ on Redis, or immediate in the tests). What the job table needs
of it, and nothing more: hand a job's task over, find the task that ran a job, end the record
of a task whose worker died.
"""

from __future__ import annotations

import logging
from collections.abc import Callable

from django.db import transaction
from django.utils import timezone
from django_tasks import DEFAULT_TASK_BACKEND_ALIAS, task_backends
from django_tasks.backends.immediate import ImmediateBackend
from django_tasks_db import DatabaseBackend

from readerstudy.models import BackgroundJob

log = logging.getLogger(__name__)


def default_backend():
    """The engine itself (not django-tasks' proxy to it, whose type says nothing)."""
    return task_backends[DEFAULT_TASK_BACKEND_ALIAS]


def records_in_database() -> bool:
    """The engine keeps its task records in this database (django-tasks-db), where they
    are this project's to end and prune."""
    return isinstance(default_backend(), DatabaseBackend)


def when_committed(backend, send: Callable[[], object]) -> None:
    """Call `send` (which hands a task to `backend`) once the caller's transaction commits
    where the engine lives outside this database (RQ), so a worker never picks up a task
    whose job row it cannot see yet; at once where the task's record commits with ours (the
    database engine) or the task runs in this process (immediate)."""
    if isinstance(backend, DatabaseBackend | ImmediateBackend):
        send()
    else:
        transaction.on_commit(send)


def hand_over(job: BackgroundJob, task, *, priority: int = 0, run_after=None) -> None:
    """Hand the job to the engine as `task` (a django-tasks task taking `job_id`), at
    `priority` where the engine orders by priority (the database engine; RQ runs in order)."""
    backend = task.get_backend()
    options = {"run_after": run_after} if run_after is not None else {}
    if backend.supports_priority:
        options["priority"] = priority
    deferred = task.using(**options) if options else task

    def send() -> None:
        result = deferred.enqueue(job_id=job.pk)
        BackgroundJob.objects.filter(pk=job.pk).update(task_id=str(result.id)[:64])

    when_committed(backend, send)


def abandon_record(task_id: str) -> None:
    """The database engine's record of a task whose worker died stays "RUNNING" for ever
    (django-tasks-db has no notion of a dead worker): mark it failed, so its admin and
    `prune_db_task_results` see it ended. RQ notices dead workers itself."""
    if not task_id or not records_in_database():
        return
    from django_tasks_db.models import DBTaskResult

    DBTaskResult.objects.filter(id=task_id, status="RUNNING").update(
        status="FAILED", finished_at=timezone.now()
    )


def task_of(job: BackgroundJob):
    """The task that ran `job`, from the engine's record of it (None if it is gone)."""
    try:
        return default_backend().get_result(job.task_id).task
    except Exception:  # no record (pruned, Redis flushed) or a task since renamed
        log.warning("job %s: the engine has no usable record of task %r", job.pk, job.task_id)
        return None


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
