"""The job table as a queue: one `BackgroundJob` row per piece of work, keyed by what the work
computes, so asking twice for the same work finds the job already there; a new or reset job
handed to the engine, fairly between studies and within each person's limit.
"""

from __future__ import annotations

import datetime as dt
import logging

from django.conf import settings
from django.db import transaction
from django.utils import timezone

from readerstudy.jobs.engine import abandon_record, hand_over
from readerstudy.jobs.progress import is_stale
from readerstudy.models import BackgroundJob, JobKind, JobStatus, ReaderStudy
from readerstudy.platform.errors import TryLater

log = logging.getLogger(__name__)

ACTIVE = (JobStatus.QUEUED, JobStatus.RUNNING)


class JobRefused(TryLater):
    """New background work refused for now (a 429 with Retry-After where a view lets it
    through, readerstudy.platform.middleware.TryLaterMiddleware)."""


def _fair_priority(job: BackgroundJob) -> int:
    """The engine's priority for `job`: lower by one for each other queued or running job of
    the same study, so a study's first job goes ahead of another study's third and no study
    starves the others on the shared queue (the engine runs higher priorities first; where it
    runs in order, RQ, the per-study and per-person limits are what keep it fair)."""
    if job.study_id is None:
        return 0
    others = BackgroundJob.objects.filter(study_id=job.study_id, status__in=ACTIVE)
    return -min(others.exclude(pk=job.pk).count(), 100)


def keeps(job: BackgroundJob, rerun_done: bool) -> bool:
    """The job stands as it is: queued, running and alive, or done (and not to be rerun)."""
    alive = job.status == JobStatus.QUEUED or (
        job.status == JobStatus.RUNNING and not is_stale(job)
    )
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


def queue_job(
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
    done (unless `rerun_done`), else a new or reset one handed to `task` (a django-tasks task
    taking `job_id`). New work asked by a person counts towards their limit (`check_rate`:
    JobRefused past it)."""
    with transaction.atomic():
        existing = BackgroundJob.objects.select_for_update().filter(key=key).first()
        if existing is not None and keeps(existing, rerun_done):
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
            if keeps(job, rerun_done):
                return job
            if job.status == JobStatus.RUNNING:
                log.warning("job %s (%s) fell silent; running it again", job.pk, key)
                abandon_record(job.task_id)
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
        priority = _fair_priority(job) if task.get_backend().supports_priority else 0
        hand_over(job, task, priority=priority, run_after=run_after)
    job.refresh_from_db()
    return job
