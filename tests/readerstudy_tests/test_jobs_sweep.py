"""Housekeeping of background jobs (readerstudy.jobs.jobs_sweep): a killed worker's job runs
again even when nobody looks at it, a job that kills its worker every time ends failed in
words, old finished jobs are pruned; a worker sweeps by itself while there is work. Through
django-tasks-db's worker loop in process (the real SIGKILL is in test_worker_killed.py)."""

import datetime as dt
import time
from unittest import mock

import pytest
from django.core.management import call_command
from django.utils import timezone
from django_tasks import task

from readerstudy.jobs import job_enqueue, job_run, jobs_sweep
from readerstudy.models import BackgroundJob, JobKind, JobStatus
from tests.analysis_tests.test_analysis_downloads import DB_TASKS, run_db_worker

pytestmark = pytest.mark.django_db

DIES = {"times": 0}  # how many more attempts "kill their worker"


class Killed(BaseException):
    """Stands for SIGKILL: nothing in the job's own code sees it."""


@task()
def fragile(job_id: int) -> None:
    def work(run):
        run.progress(0, 2, "working", force=True)
        if DIES["times"] > 0:
            DIES["times"] -= 1
            raise Killed()
        return {"ok": True}

    job_run(job_id, work)


@pytest.fixture
def db_backend(settings):
    settings.TASKS = DB_TASKS


def stale_later(settings):
    """The clock moved past TASK_STALE_SECONDS since the last heartbeat."""
    later = time.time() + settings.TASK_STALE_SECONDS + 1
    return mock.patch("readerstudy.jobs.progress.time.time", return_value=later)


def enqueue(key="fragile:1"):
    return job_enqueue(key=key, kind=JobKind.ANALYSIS, task=fragile, label="fragile")


def test_a_killed_workers_job_runs_again_when_the_sweep_finds_it_silent(db_backend, settings):
    from django_tasks_db.models import DBTaskResult

    DIES["times"] = 1
    job = enqueue()
    first_task = job.task_id
    run_db_worker()  # the worker "dies" in the job
    # A SIGKILLed worker cannot mark its task failed, as this in-process one just did.
    DBTaskResult.objects.filter(id=first_task).update(status="RUNNING", finished_at=None)
    job.refresh_from_db()
    assert job.status == JobStatus.RUNNING and job.attempt == 1
    assert jobs_sweep()["requeued"] == 0  # not silent long enough: maybe just slow
    with stale_later(settings):
        assert jobs_sweep()["requeued"] == 1
    # The engine's record of the killed run is ended, not left "running" for ever.
    assert DBTaskResult.objects.get(id=first_task).status == "FAILED"
    run_db_worker()
    job.refresh_from_db()
    assert (job.status, job.attempt, job.result) == (JobStatus.DONE, 2, {"ok": True})


def test_a_job_that_kills_its_worker_every_time_ends_failed_in_words(db_backend, settings):
    settings.TASK_MAX_ATTEMPTS = 2
    DIES["times"] = 5
    job = enqueue()
    for _ in range(2):
        run_db_worker()
        with stale_later(settings):
            jobs_sweep()
    job.refresh_from_db()
    assert job.status == JobStatus.FAILED and job.attempt == 2
    assert "its worker stopped 2 times without finishing it" in job.error
    assert "ask for it again" in job.error
    DIES["times"] = 0  # asked again (a page, the PI): it runs
    enqueue()
    run_db_worker()
    job.refresh_from_db()
    assert job.status == JobStatus.DONE and job.attempt == 3


def test_old_finished_jobs_are_pruned_and_the_rest_kept(settings):
    settings.TASK_RETENTION_DAYS = 30
    now = timezone.now()
    old = now - dt.timedelta(days=31)

    def make(key, status, finished_at):
        return BackgroundJob.objects.create(
            key=key, kind=JobKind.ANALYSIS, status=status, finished_at=finished_at
        )

    make("old-done", JobStatus.DONE, old)
    make("old-failed", JobStatus.FAILED, old)
    make("recent-done", JobStatus.DONE, now - dt.timedelta(days=29))
    make("queued", JobStatus.QUEUED, None)
    counts = jobs_sweep()
    assert counts["pruned"] == 2
    assert set(BackgroundJob.objects.values_list("key", flat=True)) == {"recent-done", "queued"}


def test_the_database_engines_old_task_records_are_pruned(db_backend, settings):
    from django_tasks_db.models import DBTaskResult

    enqueue()
    run_db_worker()
    record = DBTaskResult.objects.get(task_path__endswith="fragile")
    assert record.status == "SUCCESSFUL"
    assert jobs_sweep()["task_records"] == 0
    DBTaskResult.objects.filter(pk=record.pk).update(
        finished_at=timezone.now() - dt.timedelta(days=settings.TASK_RETENTION_DAYS + 1)
    )
    assert jobs_sweep()["task_records"] == 1
    assert not DBTaskResult.objects.filter(pk=record.pk).exists()


def test_enqueueing_work_schedules_a_sweep_that_repeats_while_work_remains(db_backend, settings):
    from django_tasks_db.models import DBTaskResult

    settings.TASK_SWEEP_SECONDS = 60
    before = timezone.now()
    DIES["times"] = 1
    enqueue()
    enqueue("fragile:2")  # one sweep at a time
    sweeps = DBTaskResult.objects.filter(task_path__endswith="jobs_sweep_task")
    assert sweeps.count() == 1
    assert sweeps.get().run_after >= before + dt.timedelta(seconds=60)
    run_db_worker()  # fragile:1 "dies" (left running), fragile:2 done; the sweep not due
    sweeps.update(run_after=timezone.now())
    run_db_worker()
    # A job is still running (its worker died), so the sweep scheduled its next round.
    assert sweeps.filter(status="SUCCESSFUL").count() == 1
    assert sweeps.filter(status="READY").count() == 1


def test_the_command_reports_what_it_did(settings, capsys):
    BackgroundJob.objects.create(
        key="old",
        kind=JobKind.ANALYSIS,
        status=JobStatus.DONE,
        finished_at=timezone.now() - dt.timedelta(days=settings.TASK_RETENTION_DAYS + 1),
    )
    call_command("jobs_sweep")
    assert "0 job(s) queued again, 0 marked failed, 1 finished job(s)" in capsys.readouterr().out
