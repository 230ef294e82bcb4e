"""Preparing a study's analysis, off the request: which analyses are kept up to date, the
job that computes one, and what a request may show meanwhile. Each analysis (study, data
version, policy: `analysis.cache.StudyAnalysis`) is computed once, by a task in a worker
process, never by a web request that could be serving readers.

- After the data change (`refresh_later`, on `study_data_changed`), the debounced
  `analysis_refresh` asks for the default policy and the last ones a PI viewed
  (`viewed_policies`), so the results are ready before a PI asks.
- `prepare` asks for one analysis: one job per (study, data version, policy), bounded per
  study (LIVE_POLICIES) and per person (readerstudy.jobs.check_rate).
- The job's task `analysis_prepare` does `prepare_work`: the result (the page's tables) first,
  then the page's SVGs (a PI may be looking at the page), then the downloads
  (analysis.downloads: PNG/PDF, the XLSX report and the ZIP). Everything goes to the shared
  cache under its (study, data version, policy) key, so running the task twice or after a
  killed attempt redoes only what is missing.
- The newest result computed per study and policy is remembered (`latest`), so while a newer
  data version is computed a request shows the older one "as of HH:MM" instead of waiting
  (`shown_or_prepared`).
"""

from __future__ import annotations

import datetime as dt
import hashlib
from dataclasses import asdict

from django.conf import settings
from django.core.cache import cache
from django.db import transaction
from django.utils import timezone
from django_tasks import TaskResultStatus, task
from django_tasks.exceptions import TaskResultDoesNotExist, TaskResultMismatch

from analysis import downloads
from analysis.cache import TIMEOUT, StudyAnalysis
from analysis.figure_formats import FORMATS
from analysis.figures import figure_builders
from analysis.pipeline import AnalysisSettings
from readerstudy.jobs import ACTIVE, JobRefused, Run, job_enqueue, job_refresh, job_run
from readerstudy.models import BackgroundJob, JobKind, JobStatus, ReaderStudy

POLICIES_KEPT = 4  # policies a study's re-analysis keeps up to date (the last ones viewed)
LIVE_POLICIES = 3  # analysis policies of one study queued or running at once


def refresh_later(sender=None, *, study: ReaderStudy, **kwargs) -> None:
    """Receiver of `study_data_changed`: schedule one re-analysis per quiet spell. The
    immediate backend (tests) cannot defer, so there it does nothing."""
    if not analysis_refresh.get_backend().supports_defer:
        return
    delay = settings.ANALYSIS_REFRESH_DELAY
    if cache.add(f"analysis:refresh:{study.pk}", 1, timeout=delay):
        when = timezone.now() + dt.timedelta(seconds=delay)
        analysis_refresh.using(run_after=when).enqueue(study_id=study.pk)


@task()
def analysis_refresh(study_id: int) -> None:
    study = ReaderStudy.objects.filter(pk=study_id).first()
    if study is None:
        return
    for policy in viewed_policies(study):
        try:
            prepare(StudyAnalysis(study, policy))
        except JobRefused:
            continue  # computed when next viewed, once a slot is free


def remember_policy(study: ReaderStudy, policy: AnalysisSettings) -> None:
    """A PI looked at the study under `policy`: keep it up to date after answers change."""
    key = f"analysis:policies:{study.pk}"
    kept = [p for p in cache.get(key, []) if p != asdict(policy)]
    cache.set(key, [asdict(policy), *kept][:POLICIES_KEPT], TIMEOUT)


def viewed_policies(study: ReaderStudy) -> list[AnalysisSettings]:
    """The policies to keep up to date: the default (the page's, its settings-backed values
    read from the settings) and the last ones viewed that a page can still ask for."""
    default = AnalysisSettings()
    viewed = [AnalysisSettings(**p) for p in cache.get(f"analysis:policies:{study.pk}", [])]
    policies = [p for p in viewed if _askable(p, default)]
    return policies if default in policies else [default, *policies]


def _askable(policy: AnalysisSettings, default: AnalysisSettings) -> bool:
    """A page can ask for `policy`: it differs from the default only in switches the page
    takes (one remembered before a setting such as FAST_ANSWER_MS changed cannot be)."""
    return all(
        getattr(policy, switch.name) == getattr(default, switch.name)
        for switch in policy.switches
        if not switch.param
    )


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
    key = job_key(analysis)
    waiting = waiting_job(analysis)
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
        key=job_key(analysis),
        kind=JobKind.ANALYSIS,
        task=analysis_prepare,
        study=analysis.study,
        requested_by=requested_by,
        label=analysis.settings.describe()[:200],
        params={"policy": asdict(analysis.settings)},
        # Done but its downloads were since evicted from the cache: compute them again.
        rerun_done=not ready(analysis),
    )


def job_key(analysis: StudyAnalysis) -> str:
    """What an analysis job computes: (study, data version, policy)."""
    return f"analysis:{analysis.study.pk}:{analysis.version}:{_policy_hash(analysis.settings)}"


def _policy_hash(policy: AnalysisSettings) -> str:
    return hashlib.sha256(policy.key().encode()).hexdigest()[:16]


def _policy_of(key: str) -> str:
    return key.rsplit(":", 1)[1]  # job_key: analysis:<study>:<version>:<policy>


def policy_jobs(analysis: StudyAnalysis, statuses) -> list[BackgroundJob]:
    """The analysis jobs of this study and policy (any data version) in `statuses`, newest
    first. A job computes the data as it is when it starts, whatever version it was asked for."""
    pk, policy = analysis.study.pk, _policy_hash(analysis.settings)
    jobs = BackgroundJob.objects.filter(
        kind=JobKind.ANALYSIS,
        status__in=statuses,
        key__startswith=f"analysis:{pk}:",
        key__endswith=f":{policy}",
    )
    return list(jobs.order_by("-created_at"))


def waiting_job(analysis: StudyAnalysis) -> BackgroundJob | None:
    """An analysis job of this study and policy that no worker has started yet."""
    waiting = policy_jobs(analysis, [JobStatus.QUEUED])
    return waiting[0] if waiting else None


def _check_live_policies(analysis: StudyAnalysis) -> None:
    """JobRefused if this would be one more policy than LIVE_POLICIES queued or running for
    the study (a new data version of a live policy is not one more)."""
    key = job_key(analysis)
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
    if existing is not None and existing.status == JobStatus.DONE and ready(analysis):
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


@task()
def analysis_prepare(job_id: int) -> None:
    job_run(job_id, prepare_work)


def prepare_work(run: Run) -> dict:
    """The analysis task's work: the result, the page's SVGs, then the downloads."""
    study = run.job.study
    as_of = dt.datetime.now(dt.UTC).timestamp()
    analysis = StudyAnalysis(study, AnalysisSettings(**run.job.params["policy"]))
    run.progress(0, 0, "computing the tables", force=True)
    result = analysis.result
    _remember_latest(analysis, as_of)
    names = list(figure_builders(result))
    with_downloads = settings.ANALYSIS_PREPARE_DOWNLOADS and not result.accuracy.empty
    total = 1 + len(names) * (2 if with_downloads else 1) + (1 if with_downloads else 0)
    done = 1
    for name in names:
        run.progress(done, total, f"drawing the page's figures ({name})")
        downloads.figure(analysis, name, ["svg"])
        done += 1
    if with_downloads:
        for name in names:
            run.progress(done, total, f"drawing the downloads ({name}: PNG, PDF)")
            downloads.figure(analysis, name, list(FORMATS))
            done += 1
        run.progress(done, total, "writing the ZIP and the XLSX report")
        downloads.build_zip(analysis)
    run.progress(total, total, "ready", force=True)
    return {"version": analysis.version}


def ready(analysis: StudyAnalysis) -> bool:
    """Everything the task prepares is in the cache."""
    if not analysis.has("result"):
        return False
    return analysis.has("zip") or not settings.ANALYSIS_PREPARE_DOWNLOADS


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
    older = latest(analysis)
    if older is None:
        return None, None, job
    return older[0], older[1], job


def latest(analysis: StudyAnalysis) -> tuple[StudyAnalysis, dt.datetime] | None:
    """The newest analysis of this study and policy still in the cache, with the time it was
    computed (an older data version while a newer one is computed)."""
    mark = cache.get(_latest_key(analysis.study.pk, analysis.settings))
    if not mark:
        return None
    older = StudyAnalysis(analysis.study, analysis.settings, version=mark["version"])
    if not older.has("result"):
        return None
    return older, dt.datetime.fromtimestamp(mark["at"], tz=dt.UTC)


def _latest_key(study_pk: int, policy: AnalysisSettings) -> str:
    return f"analysis:latest:{study_pk}:{_policy_hash(policy)}"


def _remember_latest(analysis: StudyAnalysis, as_of: float) -> None:
    """`as_of`: when the data version was read (the data the tables show is as of then)."""
    cache.set(
        _latest_key(analysis.study.pk, analysis.settings),
        {"version": analysis.version, "at": as_of},
        TIMEOUT,
    )


def live_job(analysis: StudyAnalysis) -> BackgroundJob | None:
    """A queued or running analysis job of this study and policy, which will draw the
    figures of the data as it is when it runs; a silent one (its worker was killed) is
    enqueued again on the way, so it is never waited for in vain."""
    for job in policy_jobs(analysis, ACTIVE):
        job = job_refresh(job, analysis_prepare)
        if job.status in ACTIVE:
            return job
    return None


def job_of(analysis: StudyAnalysis) -> BackgroundJob | None:
    """The job computing `analysis`, if any, as it is now (a silent one is run again)."""
    job = BackgroundJob.objects.filter(key=job_key(analysis)).first()
    return job_refresh(job, analysis_prepare) if job else None
