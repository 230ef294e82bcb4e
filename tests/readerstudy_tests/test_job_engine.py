"""The job table's use of the task engine: an engine outside this database (RQ on Redis) is
handed a job's task only once the job's row is committed, so a worker never picks up a task
whose job it cannot see; the database engine's task record commits with the job's row."""

import pytest
from django_tasks import task, task_backends

from readerstudy.jobs import job_enqueue, job_run
from readerstudy.models import BackgroundJob, JobKind
from tests.analysis_tests.test_analysis_downloads import DB_TASKS

pytestmark = pytest.mark.django_db

OUTSIDE = {"default": {"BACKEND": "django_tasks.backends.dummy.DummyBackend"}}


@task()
def noop(job_id: int) -> None:
    job_run(job_id, lambda run: {"ok": True})


def enqueue():
    return job_enqueue(key="noop:1", kind=JobKind.ANALYSIS, task=noop, label="noop")


def test_an_engine_outside_the_database_gets_the_task_after_the_commit(
    settings, django_capture_on_commit_callbacks
):
    settings.TASKS = OUTSIDE
    engine = task_backends["default"]
    with django_capture_on_commit_callbacks(execute=True) as callbacks:
        job = enqueue()
        assert engine.results == []  # the row is not committed yet
    assert len(callbacks) == 2  # the job's task and the sweep that watches it
    handed = [result.task.name for result in engine.results]
    assert handed == ["noop", "jobs_sweep_task"]
    assert BackgroundJob.objects.get(pk=job.pk).task_id == engine.results[0].id


def test_the_database_engine_gets_the_task_in_the_same_transaction(
    settings, django_capture_on_commit_callbacks
):
    from django_tasks_db.models import DBTaskResult

    settings.TASKS = DB_TASKS
    with django_capture_on_commit_callbacks(execute=False) as callbacks:
        job = enqueue()
    assert callbacks == []
    job.refresh_from_db()
    assert DBTaskResult.objects.get(id=job.task_id).task_path.endswith("noop")
