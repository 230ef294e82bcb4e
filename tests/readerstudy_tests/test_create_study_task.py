"""Study creation from the browser runs in a task worker (issue 27): the upload is stored,
the page shows progress with counts, the worker imports, samples and derives all or nothing,
a failure is shown in words, a killed worker's job is run again, the uploaded copy is
removed, and the PI dashboard lists the study's jobs. Through the database worker; the
form's own behaviour with the immediate backend is in test_create_study_upload.py."""

from __future__ import annotations

import time
from unittest import mock

import pytest

# ruff: noqa: F811  (the fixtures below are imported from the upload tests)
from django.urls import reverse

from readerstudy.models import BackgroundJob, Dataset, JobStatus, ReaderStudy
from tests.analysis_tests.test_analysis_downloads import run_db_worker
from tests.factories import UserFactory
from tests.readerstudy_tests.test_create_study_upload import (  # noqa: F401
    bank,
    creator,
    images_root,
    post,
)
from tests.readerstudy_tests.test_import_questions import row

pytestmark = pytest.mark.django_db


@pytest.fixture(autouse=True)
def _database_worker(settings):
    settings.TASKS = {"default": {"BACKEND": "django_tasks_db.DatabaseBackend"}}


ROWS = [row("q1", "c1"), row("q2", "c2"), row("q3", "c3")]


def uploads(settings) -> list:
    folder = settings.MEDIA_ROOT / "uploads"
    return list(folder.rglob("*.*")) if folder.exists() else []


def test_the_worker_creates_the_study_while_the_page_shows_progress(
    client, creator, images_root, settings
):
    response = post(client, bank(ROWS))
    job = BackgroundJob.objects.get()
    assert response.status_code == 302
    assert response.url == reverse("create-study-progress", args=[job.pk])
    assert not ReaderStudy.objects.exists() and len(uploads(settings)) == 1  # stored first
    waiting = client.get(response.url)
    assert "Waiting for a worker" in waiting.content.decode()
    assert 'hx-trigger="every 1s"' in waiting.content.decode()
    reports = []  # the worker's progress reports, as the page polls them
    from readerstudy import jobs

    original = jobs.Run.progress

    def spy(self, done=0, total=0, stage="", *, force=False):
        reports.append((done, total, stage))
        return original(self, done, total, stage, force=force)

    with mock.patch.object(jobs.Run, "progress", spy):
        run_db_worker()
    assert (3, 3, "Checking questions and their images") in reports
    assert any(stage == "deriving the display images" for *_, stage in reports)
    study = ReaderStudy.objects.get(slug="uploaded")
    assert study.items.count() == 3 and not uploads(settings)
    done = client.get(response.url, HTTP_HX_REQUEST="true")
    assert done.status_code == 204
    assert done["HX-Redirect"] == reverse("pi-dashboard", args=[study.slug])
    dashboard = client.get(done["HX-Redirect"]).content.decode()
    assert "Imported 3 new questions" in dashboard
    assert "Question bank import" in dashboard and "done" in dashboard.lower()
    assert BackgroundJob.objects.get().study == study


def test_a_failure_is_shown_in_words_and_nothing_is_written(client, creator, images_root, settings):
    rows = [row("q1", "c1"), row("q2", "c2", correct="E"), row("q3", "c3")]
    response = post(client, bank(rows))
    run_db_worker()
    page = client.get(response.url, HTTP_HX_REQUEST="true").content.decode()
    assert "Nothing was imported or created." in page
    assert "row 3 (question &#x27;q2&#x27;), column &#x27;correct&#x27;" in page
    assert 'hx-trigger="every 1s"' not in page  # no more polling
    assert not Dataset.objects.exists() and not ReaderStudy.objects.exists()
    assert not uploads(settings)


def test_an_unexpected_error_is_not_shown_raw(client, creator, images_root):
    response = post(client, bank(ROWS))
    with mock.patch(
        "readerstudy.design.tasks.question_bank_study_create",
        side_effect=KeyError("/srv/secret"),
    ):
        run_db_worker()
    page = client.get(response.url).content.decode()
    assert "an unexpected error" in page and "/srv/secret" not in page


def test_a_killed_workers_import_is_run_again_cleanly(client, creator, images_root, settings):
    class Killed(BaseException):
        pass

    response = post(client, bank(ROWS))
    with mock.patch("readerstudy.services.studies.derive_images", side_effect=Killed()):
        run_db_worker()  # dies after the import, inside the transaction: nothing written
    assert not ReaderStudy.objects.exists() and not Dataset.objects.exists()
    job = BackgroundJob.objects.get()
    assert job.status == JobStatus.RUNNING and uploads(settings)  # the file is kept
    later = time.time() + settings.TASK_STALE_SECONDS + 1
    with mock.patch("readerstudy.jobs.progress.time.time", return_value=later):
        client.get(response.url)  # the page notices the silence: enqueued again
    run_db_worker()
    job.refresh_from_db()
    assert job.status == JobStatus.DONE and job.attempt == 2
    assert ReaderStudy.objects.get(slug="uploaded").items.count() == 3


def test_only_the_user_who_started_it_sees_the_progress(client, creator, images_root):
    response = post(client, bank(ROWS))
    client.force_login(UserFactory(username="someone-else"))
    assert client.get(response.url).status_code == 404


def test_the_progress_page_shows_counts_and_an_estimate(client, creator, images_root):
    """Half done after 10 s: about 10 s left."""
    from django.utils import timezone

    from readerstudy.jobs import Run

    response = post(client, bank(ROWS))
    job = BackgroundJob.objects.get()
    BackgroundJob.objects.filter(pk=job.pk).update(
        status=JobStatus.RUNNING, started_at=timezone.now()
    )
    run = Run(job)
    run.started = time.time() - 10
    run.progress(20, 40, "checking questions and their images", force=True)
    page = client.get(response.url, HTTP_HX_REQUEST="true").content.decode()
    assert "Checking questions and their images" in page
    assert "20 of 40" in page and "about 10 s left" in page
    assert '<progress value="20" max="40">' in page
