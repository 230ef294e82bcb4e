"""Background jobs: the one way long work is started, run, watched and re-run.

The engine is Django's Tasks API (the `django-tasks` backport; TASKS_URL picks the database
or RQ on Redis). On top of it a `BackgroundJob` row per piece of work, keyed by what the work
computes, gives what the engine alone does not:

- idempotence: `job_enqueue` with the key of a queued, running or finished job returns that
  job instead of starting the work again;
- a killed worker's job runs again: a running job reports a heartbeat (with its progress) to
  the shared cache; one silent for TASK_STALE_SECONDS is enqueued again by the next request
  that looks at it (`job_refresh`) or by the periodic sweep, and `job_run` lets only one
  attempt at a time do the work;
- progress and errors people can read: counts, a stage, an estimate, the error in words;
- housekeeping: finished jobs pruned after TASK_RETENTION_DAYS.

Callers use the names below. The modules, from the bottom: `progress` (heartbeat and
progress in the cache), `engine` (django-tasks: handing a task over, its records), `queue`
(the job table as a queue: one row per key, fairness, each person's limit), `retention`,
`sweep` (the periodic housekeeping task), `services` (start, run, watch a job).
"""

from readerstudy.jobs.engine import run_queue_until_empty
from readerstudy.jobs.progress import Progress, Run, Superseded, job_progress
from readerstudy.jobs.queue import ACTIVE, JobRefused, check_rate
from readerstudy.jobs.services import job_enqueue, job_refresh, job_run, jobs_of_study
from readerstudy.jobs.sweep import jobs_sweep, jobs_sweep_task

__all__ = [
    "ACTIVE",
    "JobRefused",
    "Progress",
    "Run",
    "Superseded",
    "check_rate",
    "job_enqueue",
    "job_progress",
    "job_refresh",
    "job_run",
    "jobs_of_study",
    "jobs_sweep",
    "jobs_sweep_task",
    "run_queue_until_empty",
]
