"""The analysis's background tasks (Django's Tasks API; TASKS_URL picks the engine).

`analysis_prepare` computes one study's analysis and downloads at one data version and
policy (`analysis.downloads.prepare_work`), once: the job is keyed by what it computes.
`analysis_refresh` is the debounced re-analysis after the data changed: the first change
schedules it ANALYSIS_REFRESH_DELAY seconds later, later changes in that spell ride along,
so the results are ready before a PI asks.
"""

from __future__ import annotations

import datetime as dt
from dataclasses import asdict

from django.conf import settings
from django.core.cache import cache
from django.db import transaction
from django.utils import timezone
from django_tasks import TaskResultStatus, task
from django_tasks.exceptions import TaskResultDoesNotExist, TaskResultMismatch

from analysis import downloads
from analysis.cache import StudyAnalysis
from readerstudy.jobs import ACTIVE, JobRefused, job_enqueue, job_refresh, job_run
from readerstudy.models import BackgroundJob, JobKind, JobStatus, ReaderStudy


@task()
def analysis_prepare(job_id: int) -> None:
    job_run(job_id, downloads.prepare_work)


def prepare(analysis: StudyAnalysis, *, requested_by=None) -> BackgroundJob:
    """The job computing `analysis` (started unless it is queued, running or done).

    While readers answer, the data version changes with every answer; a job computes the
    data as it is when it starts, so one that has not started yet will also cover this
    version: it is returned instead of queueing one more. Without this, each page view or
    ZIP progress poll during reading queued a full analysis per answer since the last one,
    a backlog the workers were still working through long after the readers had stopped
    (benchmarks/scale).

    A study has at most LIVE_POLICIES policies queued or running at once: each policy is a
    full analysis (10 margins asked in a second queued 10 jobs, 79 s of work on the demo and
    minutes per job at scale, starving every study on the shared queue). Past that, and past
    the person's own limit (readerstudy.jobs.check_rate), JobRefused says when to ask again."""
    key = downloads.job_key(analysis)
    waiting = downloads.waiting_job(analysis)
    if (
        waiting is not None
        and _not_started(waiting)
        and not BackgroundJob.objects.filter(key=key).exists()
    ):
        return waiting
    with transaction.atomic():
        # The study's row serialises the count and the enqueue (PostgreSQL; SQLite has one
        # writer at a time).
        ReaderStudy.objects.select_for_update().filter(pk=analysis.study.pk).first()
        _check_live_policies(analysis)
        return _enqueue(analysis, key, requested_by)


def _enqueue(analysis: StudyAnalysis, key: str, requested_by) -> BackgroundJob:
    return job_enqueue(
        key=downloads.job_key(analysis),
        kind=JobKind.ANALYSIS,
        task=analysis_prepare,
        study=analysis.study,
        requested_by=requested_by,
        label=analysis.settings.describe()[:200],
        params={"policy": asdict(analysis.settings)},
        # Done but its downloads were since evicted from the cache: compute them again.
        rerun_done=not downloads.ready(analysis),
    )


LIVE_POLICIES = 3  # analysis policies of one study queued or running at once


def _policy_of(key: str) -> str:
    return key.rsplit(":", 1)[1]  # downloads.job_key: analysis:<study>:<version>:<policy>


def _check_live_policies(analysis: StudyAnalysis) -> None:
    """JobRefused if this would be one more policy than LIVE_POLICIES queued or running for
    the study (a new data version of a live policy is not one more)."""
    key = downloads.job_key(analysis)
    existing = BackgroundJob.objects.filter(key=key).first()
    if existing is not None and existing.status in ACTIVE:
        return
    live = {
        _policy_of(k)
        for k in BackgroundJob.objects.filter(
            kind=JobKind.ANALYSIS, study=analysis.study, status__in=ACTIVE
        ).values_list("key", flat=True)
    }
    if _policy_of(key) in live or len(live) < LIVE_POLICIES:
        return
    if existing is not None and existing.status == JobStatus.DONE and downloads.ready(analysis):
        return  # nothing to compute
    raise JobRefused(
        f"{len(live)} analyses of this study under other settings are being computed, the "
        f"most at once ({LIVE_POLICIES}); these settings' will be computed when one of them "
        "is done. Ask again in a minute, or use settings already computed.",
        retry_after=60,
    )


def _not_started(job: BackgroundJob) -> bool:
    """The engine has not handed the job's task to a worker yet. A task a worker took and
    died on before the job said it was running is not waited for (it would be forever)."""
    if not job.task_id:
        return True  # RQ: handed over when the request's transaction commits
    try:
        return analysis_prepare.get_result(job.task_id).status == TaskResultStatus.READY
    except (TaskResultDoesNotExist, TaskResultMismatch):
        return False


def live_job(analysis: StudyAnalysis) -> BackgroundJob | None:
    """A queued or running analysis job of this study and policy, which will draw the
    figures of the data as it is when it runs; a silent one (its worker was killed) is
    enqueued again on the way, so it is never waited for in vain."""
    for job in downloads.policy_jobs(analysis, ACTIVE):
        job = job_refresh(job, analysis_prepare)
        if job.status in ACTIVE:
            return job
    return None


def shown_or_prepared(
    analysis: StudyAnalysis, *, requested_by=None
) -> tuple[StudyAnalysis | None, dt.datetime | None, BackgroundJob | None]:
    """What a request may show without computing: (analysis, as_of, job). The analysis itself
    when computed (as_of None); else a worker is asked and meanwhile the newest older analysis
    of the study and policy is shown "as of" when it was computed; with none, (None, None,
    job) and the caller answers 202 with the job's progress."""
    if analysis.has("result"):
        return analysis, None, None
    job = prepare(analysis, requested_by=requested_by)
    if analysis.has("result"):  # computed by an immediate backend
        return analysis, None, job
    older = downloads.latest(analysis)
    if older is None:
        return None, None, job
    return older[0], older[1], job


def job_of(analysis: StudyAnalysis) -> BackgroundJob | None:
    """The job computing `analysis`, if any, as it is now (a silent one is run again)."""
    job = BackgroundJob.objects.filter(key=downloads.job_key(analysis)).first()
    return job_refresh(job, analysis_prepare) if job else None


@task()
def analysis_refresh(study_id: int) -> None:
    study = ReaderStudy.objects.filter(pk=study_id).first()
    if study is None:
        return
    for policy in downloads.viewed_policies(study):
        try:
            prepare(StudyAnalysis(study, policy))
        except JobRefused:
            continue  # computed when next viewed, once a slot is free


def refresh_later(sender=None, *, study: ReaderStudy, **kwargs) -> None:
    """Receiver of `study_data_changed`: schedule one re-analysis per quiet spell. The
    immediate backend (tests) cannot defer, so there it does nothing."""
    if not analysis_refresh.get_backend().supports_defer:
        return
    delay = settings.ANALYSIS_REFRESH_DELAY
    if cache.add(f"analysis:refresh:{study.pk}", 1, timeout=delay):
        when = timezone.now() + dt.timedelta(seconds=delay)
        analysis_refresh.using(run_after=when).enqueue(study_id=study.pk)
