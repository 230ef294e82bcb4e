"""Housekeeping of the job table, run by a worker every TASK_SWEEP_SECONDS while there is work
(`jobs_sweep_task`, scheduled by `schedule_sweep`) and by `manage.py jobs_sweep` (cron, or
before a worker starts), so a killed worker's job runs again even when nobody looks at it.
"""

from __future__ import annotations

import datetime as dt

from django.conf import settings
from django.core.cache import cache
from django.utils import timezone
from django_tasks import task

from readerstudy.jobs.engine import abandon_record, task_of, when_committed
from readerstudy.jobs.progress import is_stale
from readerstudy.jobs.queue import ACTIVE, queue_job
from readerstudy.jobs.retention import prune_finished
from readerstudy.models import BackgroundJob, JobStatus

SWEEP_MARK = "jobs:sweep:scheduled"


def schedule_sweep() -> None:
    """Make sure a `jobs_sweep_task` is due within TASK_SWEEP_SECONDS (one at a time; the
    task schedules the next one while work is queued or running). Engines that cannot defer
    a task (the immediate backend of the tests) have no worker to die: nothing to do."""
    backend = jobs_sweep_task.get_backend()
    if not backend.supports_defer:
        return
    interval = settings.TASK_SWEEP_SECONDS
    if cache.add(SWEEP_MARK, 1, timeout=interval * 3):
        when = timezone.now() + dt.timedelta(seconds=interval)
        when_committed(backend, lambda: jobs_sweep_task.using(run_after=when).enqueue())


def jobs_sweep() -> dict[str, int]:
    """One sweep:

    - a running job whose worker fell silent for TASK_STALE_SECONDS (killed, out of memory)
      is queued again, so it runs again even if nobody looks at it; after TASK_MAX_ATTEMPTS
      attempts it is marked failed, with why in words (a job that kills its worker every
      time must not loop). Its work is all or nothing, so nothing half-written remains;
    - finished jobs (done or failed) older than TASK_RETENTION_DAYS are deleted, and so are
      the database engine's finished task records (`prune_finished`).
    """
    requeued = failed = 0
    for job in BackgroundJob.objects.filter(status=JobStatus.RUNNING):
        if not is_stale(job):
            continue
        job_task = task_of(job) if job.attempt < settings.TASK_MAX_ATTEMPTS else None
        if job_task is not None:
            queue_job(key=job.key, kind=job.kind, task=job_task)
            requeued += 1
            continue
        abandon_record(job.task_id)
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
    if requeued:
        schedule_sweep()  # the jobs queued again are watched like any other
    return {"requeued": requeued, "failed": failed, **prune_finished()}


@task()
def jobs_sweep_task() -> dict[str, int]:
    """Periodic housekeeping of background jobs (`jobs_sweep`): killed workers' jobs run
    again or failed in words, old finished jobs pruned. Schedules the next sweep while any
    job is queued or running; the next job enqueued starts it again."""
    cache.delete(SWEEP_MARK)
    counts = jobs_sweep()
    if BackgroundJob.objects.filter(status__in=ACTIVE).exists():
        schedule_sweep()
    return counts
