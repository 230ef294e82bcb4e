"""The domain's periodic task: the background jobs' housekeeping."""

from __future__ import annotations

from django.core.cache import cache
from django_tasks import task

from readerstudy.jobs import (
    ACTIVE,
    SWEEP_MARK,
    jobs_sweep,
    schedule_sweep,
)
from readerstudy.models import BackgroundJob


@task()
def jobs_sweep_task() -> dict[str, int]:
    """Periodic housekeeping of background jobs (readerstudy.jobs.jobs_sweep): killed
    workers' jobs run again or failed in words, old finished jobs pruned. Schedules the next
    sweep while any job is queued or running; the next job enqueued starts it again."""
    cache.delete(SWEEP_MARK)
    counts = jobs_sweep()
    if BackgroundJob.objects.filter(status__in=ACTIVE).exists():
        schedule_sweep()
    return counts
