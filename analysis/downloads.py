"""The analysis downloads (each figure in every format, the export ZIP): drawn once per data
version and policy, and prepared in the background as soon as a PI opens the page.

Why in the background: the page shows its figures as SVG; the ZIP adds PNG at 300 dpi, PDF
with TrueType fonts and the XLSX report, several seconds of matplotlib and fontTools work
that no one waits for if it starts while the PI reads the page. One thread per process
prepares (a queue, so at most one core), at a lower CPU priority than requests; a job is
dropped once its study's page was opened (in any worker) at a newer data version or under
another policy (what the PI looks at now is what gets prepared). A request for something a
job is drawing waits for it instead of drawing it twice: in this process through the job itself,
in another worker through a "preparing" mark in the shared cache (CACHE_URL).
"""

from __future__ import annotations

import atexit
import contextlib
import logging
import os
import threading
import time
from concurrent.futures import Future, ThreadPoolExecutor, wait

from django.conf import settings
from django.core.cache import cache

from analysis.cache import TIMEOUT, StudyAnalysis
from analysis.exports import analysis_zip, figure_builders
from analysis.stats import plots

log = logging.getLogger(__name__)

WAIT = 60.0  # seconds a request waits for a job before drawing for itself
PREPARING_TIMEOUT = 120  # a mark left by a worker that died stops mattering after this
NICE = 10  # how much lower the preparing thread's CPU priority is (Linux: per thread)

_jobs: dict[str, Future] = {}  # the ZIP's cache key -> the job preparing it
_jobs_lock = threading.Lock()


def _latest_key(analysis: StudyAnalysis) -> str:
    """Where the ZIP key of the study's latest page view is kept: in the shared cache, so a
    page opened in any worker drops the older jobs of every worker."""
    return f"analysis-downloads:latest:{analysis.study.pk}"


def _lower_priority() -> None:
    """Readers' requests come first. On Linux a thread has its own nice value."""
    with contextlib.suppress(AttributeError, OSError):  # elsewhere: normal priority
        os.setpriority(os.PRIO_PROCESS, threading.get_native_id(), NICE)


_executor = ThreadPoolExecutor(
    max_workers=1, thread_name_prefix="analysis-downloads", initializer=_lower_priority
)
_exiting = threading.Event()


def _stop() -> None:
    """The process is exiting (a gunicorn worker restarting): the running job stops at its
    next figure and the queued ones end at once, each taking its "preparing" mark away."""
    _exiting.set()


# At exit the pool's thread is joined only after it has run every queued job, from a hook
# of threading's that runs before non-daemon threads are joined; such hooks run newest
# first, so this one comes before the pool's (registered when concurrent.futures.thread was
# imported, above).
# Where a Python lacks that hook, atexit: later (after the pool's thread has joined), so a
# queued job still runs, but nothing breaks.
getattr(threading, "_register_atexit", atexit.register)(_stop)


def figure(analysis: StudyAnalysis, name: str, fmts) -> dict[str, bytes] | None:
    """Figure `name` in each of `fmts`; None if the analysis has no such figure."""
    builders = figure_builders(analysis.result)
    if name not in builders:
        return None
    # Asked for every format at once (the ZIP): the drawing is not needed afterwards.
    keep = not set(fmts) >= set(plots.FORMATS)
    return analysis.figure_formats(name, builders[name], plots.figure_bytes, fmts, keep=keep)


def zip_bytes(analysis: StudyAnalysis) -> bytes:
    """The export ZIP: prepared, being prepared (then waited for) or built now."""
    body = analysis.lookup("zip")
    if body is None:
        _wait_for_preparation(analysis)
        body = analysis.lookup("zip")
    if body is None:
        body = _build_zip(analysis)
    return body


def prepare(analysis: StudyAnalysis) -> None:
    """Start preparing every download of `analysis` unless it is prepared or under way."""
    if not settings.ANALYSIS_PREPARE_DOWNLOADS or analysis.has("zip"):
        return
    analysis.result  # loaded here, in the request: the job reads no database  # noqa: B018
    key = analysis.key("zip")
    with _jobs_lock:
        cache.set(_latest_key(analysis), key, TIMEOUT)
        for done in [k for k, job in _jobs.items() if job.done()]:
            del _jobs[done]
        if key in _jobs or analysis.has("preparing"):  # under way here or in another worker
            return
        analysis.store("preparing", True, timeout=PREPARING_TIMEOUT)
        _jobs[key] = _executor.submit(_prepare, analysis)


def _current(analysis: StudyAnalysis) -> bool:
    if _exiting.is_set():
        return False
    latest = cache.get(_latest_key(analysis))
    return latest is None or latest == analysis.key("zip")  # None: evicted, nothing newer known


def _prepare(analysis: StudyAnalysis) -> None:
    """The page's SVGs first (a PI may be waiting for them), then the other formats, then
    the ZIP; checked between figures for a newer page view of the study."""
    try:
        builders = figure_builders(analysis.result)
        for fmts in (["svg"], list(plots.FORMATS)):
            for name in builders:
                if not _current(analysis):
                    return
                # Renewed at each figure: a long job on a busy server keeps its mark.
                analysis.store("preparing", True, timeout=PREPARING_TIMEOUT)
                figure(analysis, name, fmts)
        if _current(analysis):
            _build_zip(analysis)
    except Exception:
        log.exception("preparing the analysis downloads of study %s failed", analysis.study.pk)
    finally:
        analysis.forget("preparing")


def _build_zip(analysis: StudyAnalysis) -> bytes:
    result = analysis.result
    drawn = {name: figure(analysis, name, plots.FORMATS) for name in figure_builders(result)}
    body = analysis_zip(result, figure=lambda name, fmt: drawn[name][fmt])
    analysis.store("zip", body)
    return body


def _wait_for_preparation(analysis: StudyAnalysis) -> None:
    """Wait (at most WAIT seconds) for a job preparing this ZIP, here or in another worker."""
    with _jobs_lock:
        job = _jobs.get(analysis.key("zip"))
    if job is not None:
        wait([job], timeout=WAIT)
        return
    deadline = time.monotonic() + WAIT
    while analysis.has("preparing") and not analysis.has("zip"):
        if time.monotonic() > deadline:
            return
        time.sleep(0.25)


def settle(timeout: float = WAIT) -> None:
    """Wait for every job of this process (tests, benchmarks, a clean shutdown)."""
    with _jobs_lock:
        jobs = list(_jobs.values())
    wait(jobs, timeout=timeout)
