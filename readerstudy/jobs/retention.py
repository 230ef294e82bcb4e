"""How long finished jobs are kept: TASK_RETENTION_DAYS, for the job table and for the
database engine's own records of finished tasks (RQ expires its own)."""

from __future__ import annotations

import datetime as dt

from django.conf import settings
from django.utils import timezone

from readerstudy.jobs.engine import records_in_database
from readerstudy.models import BackgroundJob, JobStatus


def prune_finished() -> dict[str, int]:
    """Delete finished jobs (done or failed) and the database engine's finished task records
    older than TASK_RETENTION_DAYS; how many of each."""
    cutoff = timezone.now() - dt.timedelta(days=settings.TASK_RETENTION_DAYS)
    pruned, _ = BackgroundJob.objects.filter(
        status__in=(JobStatus.DONE, JobStatus.FAILED), finished_at__lt=cutoff
    ).delete()
    records = 0
    if records_in_database():
        from django_tasks_db.models import DBTaskResult

        records, _ = DBTaskResult.objects.finished().filter(finished_at__lt=cutoff).delete()
    return {"pruned": pruned, "task_records": records}
