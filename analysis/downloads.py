"""The analysis and its downloads (the tables, each figure in every format, the export ZIP),
computed once per data version and policy by a task (`analysis.tasks`) in a worker process,
never by a web request that could be serving readers.

Order of work: the result (the page's tables) first, then the page's SVGs (a PI may be
looking at the page), then PNG/PDF, the XLSX report and the ZIP. Everything goes to the shared
cache under its (study, data version, policy) key (`analysis.cache`), so running the task twice
or after a killed attempt redoes only what is missing.

The newest result computed per study and policy is remembered (`latest`), so while a newer
data version is computed the page shows the older one "as of HH:MM" instead of waiting.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import logging
from dataclasses import asdict

from django.conf import settings
from django.core.cache import cache

from analysis.cache import TIMEOUT, StudyAnalysis
from analysis.exports import ExportInfo, analysis_zip, figure_failure_words
from analysis.figures import figure_builders
from analysis.pipeline import AnalysisSettings
from analysis.stats.figure_formats import FORMATS
from readerstudy.jobs import Run
from readerstudy.models import BackgroundJob, JobKind, JobStatus, ReaderStudy

log = logging.getLogger(__name__)

POLICIES_KEPT = 4  # policies a study's re-analysis keeps up to date (the last ones viewed)


def _policy_hash(policy: AnalysisSettings) -> str:
    return hashlib.sha256(policy.key().encode()).hexdigest()[:16]


def job_key(analysis: StudyAnalysis) -> str:
    """What an analysis job computes: (study, data version, policy)."""
    return f"analysis:{analysis.study.pk}:{analysis.version}:{_policy_hash(analysis.settings)}"


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


def figure(analysis: StudyAnalysis, name: str, fmts) -> dict[str, bytes] | None:
    """Figure `name` in each of `fmts`; None if the analysis has no such figure, or if it
    cannot be drawn: then `figure_failure` says why (remembered with the analysis, so it is
    not tried again for the same data, policy and code), and every table, the other figures
    and the ZIP still come out without it."""
    from analysis.stats.plots import figure_bytes  # matplotlib: drawing processes only

    builders = figure_builders(analysis.result)
    if name not in builders or figure_failure(analysis, name) is not None:
        return None
    # Asked for every format at once (the ZIP): the drawing is not needed afterwards.
    keep = not set(fmts) >= set(FORMATS)
    try:
        return analysis.figure_formats(name, builders[name], figure_bytes, fmts, keep=keep)
    except Exception as error:
        log.exception("figure %s of study %s could not be drawn", name, analysis.study.pk)
        analysis.store(f"figure-failed:{name}", figure_failure_words(error))
        return None


def figure_failure(analysis: StudyAnalysis, name: str) -> str | None:
    """Why figure `name` could not be drawn, in words; None if it was not found to fail."""
    return analysis.lookup(f"figure-failed:{name}")


def failed_figures(analysis: StudyAnalysis) -> dict[str, str]:
    """Every figure of the analysis that could not be drawn: name -> why."""
    found = {name: figure_failure(analysis, name) for name in figure_builders(analysis.result)}
    return {name: why for name, why in found.items() if why is not None}


def export_info(analysis: StudyAnalysis) -> ExportInfo:
    """The study and data version an export is of, dated today (UTC): README.txt's first
    lines and every download's file name."""
    study = analysis.study
    return ExportInfo(
        study.slug,
        study.title,
        analysis.version,
        dt.datetime.now(dt.UTC).date(),
        practice=study.practice,
    )


def build_zip(analysis: StudyAnalysis) -> bytes:
    result = analysis.result
    drawn = {name: figure(analysis, name, FORMATS) for name in figure_builders(result)}
    failed = failed_figures(analysis)
    info = export_info(analysis)
    body = analysis_zip(result, figure=lambda name, fmt: drawn[name][fmt], info=info, failed=failed)
    analysis.store("zip", body)
    return body


def ready(analysis: StudyAnalysis) -> bool:
    """Everything the task prepares is in the cache."""
    if not analysis.has("result"):
        return False
    return analysis.has("zip") or not settings.ANALYSIS_PREPARE_DOWNLOADS


def _latest_key(study_pk: int, policy: AnalysisSettings) -> str:
    return f"analysis:latest:{study_pk}:{_policy_hash(policy)}"


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


def _remember_latest(analysis: StudyAnalysis, as_of: float) -> None:
    """`as_of`: when the data version was read (the data the tables show is as of then)."""
    cache.set(
        _latest_key(analysis.study.pk, analysis.settings),
        {"version": analysis.version, "at": as_of},
        TIMEOUT,
    )


def remember_policy(study: ReaderStudy, policy: AnalysisSettings) -> None:
    """A PI looked at the study under `policy`: keep it up to date after answers change."""
    key = f"analysis:policies:{study.pk}"
    kept = [p for p in cache.get(key, []) if p != asdict(policy)]
    cache.set(key, [asdict(policy), *kept][:POLICIES_KEPT], TIMEOUT)


def viewed_policies(study: ReaderStudy) -> list[AnalysisSettings]:
    """The policies to keep up to date: the default and the last ones viewed."""
    policies = [AnalysisSettings(**p) for p in cache.get(f"analysis:policies:{study.pk}", [])]
    default = AnalysisSettings()
    return policies if default in policies else [default, *policies]


def prepare_work(run: Run) -> dict:
    """The analysis task's work: the result, the page's SVGs, then the downloads."""
    study = run.job.study
    as_of = dt.datetime.now(dt.UTC).timestamp()
    analysis = StudyAnalysis(study, AnalysisSettings(**run.job.params["policy"]))
    run.progress(0, 0, "computing the tables", force=True)
    result = analysis.result
    _remember_latest(analysis, as_of)
    names = list(figure_builders(result))
    downloads = settings.ANALYSIS_PREPARE_DOWNLOADS and not result.accuracy.empty
    total = 1 + len(names) * (2 if downloads else 1) + (1 if downloads else 0)
    done = 1
    for name in names:
        run.progress(done, total, f"drawing the page's figures ({name})")
        figure(analysis, name, ["svg"])
        done += 1
    if downloads:
        for name in names:
            run.progress(done, total, f"drawing the downloads ({name}: PNG, PDF)")
            figure(analysis, name, list(FORMATS))
            done += 1
        run.progress(done, total, "writing the ZIP and the XLSX report")
        build_zip(analysis)
    run.progress(total, total, "ready", force=True)
    return {"version": analysis.version}
