"""A task worker SIGKILLed in the middle of a task (issue 27): real `manage.py db_worker`
processes on a file SQLite database and a shared file cache. The first worker is killed while
it prepares a study's analysis; nothing half-written is served (no ZIP, the job still says it
is running); a new worker's periodic sweep (readerstudy.jobs.jobs_sweep, every
TASK_SWEEP_SECONDS) finds the job silent for TASK_STALE_SECONDS and runs it again, without
anyone asking; the PI's dashboard shows it done on its second attempt and the ZIP is whole.

django-tasks-db alone leaves the killed task "RUNNING" for ever and never runs it again; the
sweep also marks that record failed."""

from __future__ import annotations

import os
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]

SETUP = """
import django; django.setup()
from analysis import preparation
from analysis.cache import StudyAnalysis
from analysis.pipeline import AnalysisSettings
from annotation.services import answer_submit
from readerstudy.models import Role
from tests.factories import MembershipFactory, UserFactory, build_study

study = build_study(8, slug="killed")
pi = UserFactory(username="pi")
MembershipFactory(study=study, user=pi, role=Role.PI)
for name, right in (("r1", True), ("r2", False)):
    reader = UserFactory(username=name)
    MembershipFactory(study=study, user=reader, role=Role.READER)
    for item in study.items.order_by("position"):
        choice = item.question.correct if right else "A"
        answer_submit(reader=reader, item=item, choice=choice, time_ms=5000)
job = preparation.prepare(StudyAnalysis(study, AnalysisSettings()), requested_by=pi)
print(job.pk)
"""

CHECK = """
import io, sys, zipfile
import django; django.setup()
from django.test import Client
from django_tasks_db.models import DBTaskResult
from analysis.cache import StudyAnalysis
from analysis.pipeline import AnalysisSettings
from readerstudy.models import BackgroundJob, ReaderStudy
study = ReaderStudy.objects.get(slug="killed")
analysis = StudyAnalysis(study, AnalysisSettings())
job = BackgroundJob.objects.get(study=study)
print("job", job.status, job.attempt)
print("zip", analysis.has("zip"))
print("records", sorted(DBTaskResult.objects.filter(task_path__endswith="analysis_prepare")
      .values_list("status", flat=True)))
if sys.argv[-1] == "final":
    client = Client(HTTP_HOST="127.0.0.1")
    client.force_login(study.memberships.get(role="pi").user)
    html = client.get(f"/s/{study.slug}/dashboard/").content.decode()
    row = html[html.index("Background work"):]
    row = row[: row.index("</table>")]
    print("dashboard", "Analysis and downloads" in row, "Done</td><td>2</td>" in row)
    body = client.get(f"/s/{study.slug}/analysis/export.zip").content
    print("zip_ok", "report.xlsx" in zipfile.ZipFile(io.BytesIO(body)).namelist())
"""


def job_status(db: Path, job_id: int) -> str:
    with sqlite3.connect(db, timeout=30) as conn:
        row = conn.execute(
            "SELECT status FROM readerstudy_backgroundjob WHERE id = ?", (job_id,)
        ).fetchone()
    return row[0]


def wait_for(predicate, seconds: float, what: str) -> None:
    deadline = time.monotonic() + seconds
    while not predicate():
        if time.monotonic() > deadline:
            pytest.fail(f"gave up waiting for {what}")
        time.sleep(0.1)


@pytest.fixture
def migrated_file(django_db_setup, django_db_blocker, tmp_path) -> Path | None:
    """A file SQLite database with the tables `manage.py migrate` makes: a copy of the
    session's in-memory test database, which pytest-django migrated (its tests' rows are rolled
    back or flushed). Saves a migration in a subprocess, 5 s of CPU. None where there is no
    such database: another engine, or no test of the session asked for one (this file alone).
    """
    from django.db import connection

    if connection.vendor != "sqlite" or not connection.creation.is_in_memory_db(
        connection.settings_dict["NAME"]
    ):
        return None
    target = tmp_path / "db.sqlite3"
    copy = sqlite3.connect(target)
    try:
        with django_db_blocker.unblock():
            connection.ensure_connection()
            connection.connection.backup(copy)
    finally:
        copy.close()
    return target


def test_a_sigkilled_worker_task_is_run_again_by_the_next_worker(tmp_path, migrated_file):
    db = tmp_path / "db.sqlite3"
    env = {
        **os.environ,
        "DJANGO_SETTINGS_MODULE": "readerstudy.config.settings",
        "ENV_FILE": os.devnull,
        "DEBUG": "1",
        "DATABASE_URL": f"sqlite:///{db}",
        "TASKS_URL": "db://",
        "CACHE_URL": f"file://{tmp_path / 'cache'}",
        "MEDIA_ROOT": str(tmp_path / "media"),
        "ANALYSIS_PREPARE_DOWNLOADS": "1",
        "TASK_STALE_SECONDS": "5",
        "TASK_SWEEP_SECONDS": "1",
        "PYTHONPATH": str(ROOT),
    }

    def python(*args, **kwargs):
        return subprocess.run(
            [sys.executable, *args], env=env, cwd=ROOT, capture_output=True, text=True, **kwargs
        )

    def worker():
        command = ["manage.py", "db_worker", "--no-reload", "--interval", "0.2", "-v0"]
        return subprocess.Popen([sys.executable, *command], env=env, cwd=ROOT)

    if migrated_file is None:
        migrate = python("manage.py", "migrate", "-v0")
        assert migrate.returncode == 0, migrate.stderr
    setup = python("-c", SETUP)
    assert setup.returncode == 0, setup.stderr
    job_id = int(setup.stdout.split()[-1])

    first = worker()
    try:
        wait_for(lambda: job_status(db, job_id) == "running", 120, "the first worker to start")
        time.sleep(0.5)  # well inside the preparation (tables, then figures, then the ZIP)
    finally:
        first.send_signal(signal.SIGKILL)
        first.wait()
    killed = python("-c", CHECK)
    assert killed.returncode == 0, killed.stderr
    # Killed mid-task: the job says running (nobody told it), and no ZIP is served half-made.
    assert "job running 1" in killed.stdout, killed.stdout
    assert "zip False" in killed.stdout
    assert "records ['RUNNING']" in killed.stdout  # django-tasks-db leaves it so

    second = worker()
    try:
        wait_for(lambda: job_status(db, job_id) == "done", 180, "the job to be run again")
    finally:
        second.send_signal(signal.SIGTERM)
        second.wait(timeout=60)
    final = python("-c", CHECK, "final")
    assert final.returncode == 0, final.stderr
    assert "job done 2" in final.stdout, final.stdout
    assert "zip True" in final.stdout
    # The killed run's record is ended (failed), the second run's succeeded.
    assert "records ['FAILED', 'SUCCESSFUL']" in final.stdout
    assert "dashboard True True" in final.stdout  # the PI sees it: done, 2 attempts
    assert "zip_ok True" in final.stdout
