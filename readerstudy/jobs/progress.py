"""A running job's progress and heartbeat, in the shared cache.

Progress goes to the cache, not the database: an import writes it from inside its own
transaction, which no other process can see until the end (and which SQLite would make any
second writer wait for). The heartbeat tells a live worker from a killed one: a running job
silent for TASK_STALE_SECONDS is stale, and is run again.
"""

from __future__ import annotations

import time
from dataclasses import dataclass

from django.conf import settings
from django.core.cache import cache

from readerstudy.models import BackgroundJob, JobStatus


class Superseded(Exception):
    """This attempt's job was taken over by a newer attempt (it was thought dead)."""


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


def is_stale(job: BackgroundJob) -> bool:
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
