"""The analysis and its downloads computed by a task in a worker (issue 27): the page never
computes (tables of an older version "as of HH:MM" meanwhile), the ZIP is ready when asked
for, nothing is drawn twice, asking twice starts one job, a failure is shown in words, a
killed worker's job is run again, and a change of answers is analysed before anyone asks.

Through a real database worker (django-tasks-db's worker loop, in process) and through RQ on
Redis (DB 6); elsewhere the immediate backend."""

import datetime as dt
import io
import re
import time
import zipfile
from unittest import mock

import pytest
from django.urls import reverse
from django.utils import timezone

from analysis import downloads, plots, preparation
from analysis.cache import StudyAnalysis
from analysis.pipeline import AnalysisSettings
from annotation.services import answer_submit
from readerstudy.jobs import run_queue_until_empty
from readerstudy.models import BackgroundJob, JobStatus

pytestmark = pytest.mark.django_db

DB_TASKS = {"default": {"BACKEND": "django_tasks_db.DatabaseBackend"}}
RQ_URL = "redis://127.0.0.1:6379/6"


# The jobs' tests: what is prepared, when and how often, not what a figure's file holds (the
# first two tests render them and open the PNG and the PDF).
UNRENDERED = pytest.mark.usefixtures("figures_unrendered")


@pytest.fixture(autouse=True)
def _prepare_downloads(settings):
    settings.ANALYSIS_PREPARE_DOWNLOADS = True


def run_db_worker() -> None:
    """django-tasks-db's own worker loop, until no task is ready (`db_worker --batch`).

    In process, inside the test's transaction: the loop's `close_old_connections()` (connection
    hygiene for a long-lived worker) would close the test's own connection on PostgreSQL, whose
    autocommit is off in a transaction (SQLite's in-memory test database ignores the close)."""
    from django_tasks_db.management.commands import db_worker

    with mock.patch.object(db_worker, "close_old_connections", lambda: None):
        run_queue_until_empty(worker_id="test-worker")


class Renders:
    """Counts figure renderings by (figure title, format)."""

    def __init__(self):
        self.calls: list[tuple[str, str]] = []
        self._real = plots.figure_bytes

    def __call__(self, fig, fmt):
        self.calls.append((fig.get_suptitle() or fig.axes[0].get_title(), fmt))
        return self._real(fig, fmt)

    def by_format(self) -> dict[tuple[str, str], int]:
        counts: dict[tuple[str, str], int] = {}
        for call in self.calls:
            counts[call] = counts.get(call, 0) + 1
        return counts


def page(client, study, **params):
    response = client.get(reverse("analysis", args=[study.slug]), params)
    assert response.status_code == 200
    return response


def download_zip(client, study) -> zipfile.ZipFile:
    response = client.get(reverse("analysis-zip", args=[study.slug]))
    assert response.status_code == 200, response.status_code
    return zipfile.ZipFile(io.BytesIO(response.content))


def test_the_page_computes_nothing_and_the_worker_prepares_everything_once(
    client, answered, pi, db_backend
):
    client.force_login(pi)
    spy = Renders()
    with mock.patch.object(plots, "figure_bytes", spy):
        first = page(client, answered)
        assert b"A worker is computing the analysis" in first.content
        assert spy.calls == []  # the request drew nothing
        page(client, answered)  # asked twice: one job
        assert BackgroundJob.objects.filter(study=answered).count() == 1
        run_db_worker()
        assert BackgroundJob.objects.get(study=answered).status == JobStatus.DONE
        ready = page(client, answered)
        archive = download_zip(client, answered)
    assert b"job-status" not in ready.content
    # All drawn: the page links the pictures (pinned to the version), no placeholders.
    assert b"analysis/figure/accuracy_by_task.svg?v=" in ready.content
    assert b"figure-slot" not in ready.content
    assert all(n == 1 for n in spy.by_format().values()), spy.by_format()
    names = set(archive.namelist())
    for figure in ("accuracy_by_task", "kappa_answer", "reading_time"):
        assert {f"{figure}.png", f"{figure}.svg", f"{figure}.pdf"} <= names
    assert {"report.xlsx", "policy.json", "accuracy.csv"} <= names
    assert archive.read("accuracy_by_task.png").startswith(b"\x89PNG")
    assert archive.read("kappa_answer.pdf").startswith(b"%PDF")


def test_a_figure_shows_as_drawing_until_the_worker_has_drawn_it(client, answered, pi, db_backend):
    client.force_login(pi)
    page(client, answered)
    run_db_worker()
    analysis = StudyAnalysis(answered, AnalysisSettings())
    for fmt in plots.FORMATS:  # as if the worker were still drawing this figure
        analysis.forget(f"figure:accuracy_by_task:{fmt}")
    analysis.forget("zip")
    prepare = preparation.prepare(analysis)  # drawing again
    assert prepare.status == JobStatus.QUEUED
    shown = page(client, answered).content
    assert b"analysis/figure-slot/accuracy_by_task/" in shown  # tables now, figure later
    slot = reverse("analysis-figure-slot", args=[answered.slug, "accuracy_by_task"])
    pending = client.get(slot, {"v": analysis.version})
    assert b"Drawing this figure" in pending.content
    assert b"<img" not in pending.content
    run_db_worker()
    drawn = client.get(slot, {"v": analysis.version})
    assert b"<img" in drawn.content and b"Drawing" not in drawn.content
    unknown = reverse("analysis-figure-slot", args=[answered.slug, "no_such_figure"])
    assert client.get(unknown, {"v": analysis.version}).status_code == 404


@UNRENDERED
def test_the_zip_asked_for_early_shows_progress_and_then_downloads(
    client, answered, pi, db_backend
):
    client.force_login(pi)
    waiting = client.get(reverse("analysis-zip", args=[answered.slug]))
    assert waiting.status_code == 202
    assert b"Preparing the analysis ZIP" in waiting.content
    assert b"Waiting for a worker" in waiting.content
    status = reverse("analysis-status", args=[answered.slug])
    assert b"<progress" in client.get(status, {"want": "zip"}).content
    run_db_worker()
    done = client.get(status, {"want": "zip"})
    assert done.status_code == 204
    assert done["HX-Redirect"].startswith(reverse("analysis-zip", args=[answered.slug]))
    assert "report.xlsx" in download_zip(client, answered).namelist()


@UNRENDERED
def test_while_newer_answers_are_analysed_the_page_shows_the_older_analysis_as_of(
    client, answered, pi, reader, db_backend
):
    client.force_login(pi)
    page(client, answered)
    run_db_worker()
    answer_submit(reader=reader, item=answered.items.first(), choice="D")
    response = page(client, answered)
    assert b"Showing the analysis as of" in response.content
    assert b"Accuracy" in response.content  # the older tables, at once
    run_db_worker()
    status = client.get(reverse("analysis-status", args=[answered.slug]))
    assert status["HX-Refresh"] == "true"
    assert b"Showing the analysis as of" not in page(client, answered).content


@UNRENDERED
def test_an_older_data_version_is_not_prepared_after_the_data_changed(
    client, answered, pi, reader, db_backend
):
    """A job queued before an answer changed computes what is current when it runs."""
    client.force_login(pi)
    page(client, answered)
    old = StudyAnalysis(answered, AnalysisSettings())
    answer_submit(reader=reader, item=answered.items.first(), choice="D")
    run_db_worker()
    new = StudyAnalysis(answered, AnalysisSettings())
    assert new.version != old.version
    assert new.has("zip") and not old.has("zip")


@UNRENDERED
def test_switching_policy_prepares_what_the_pi_now_looks_at(client, answered, pi, db_backend):
    client.force_login(pi)
    page(client, answered, missing="exclude")
    run_db_worker()
    assert StudyAnalysis(answered, AnalysisSettings(missing="exclude")).has("zip")
    assert not StudyAnalysis(answered, AnalysisSettings()).has("zip")


@UNRENDERED
def test_a_failed_job_shows_its_error_in_words_and_runs_again_when_asked(
    client, answered, pi, db_backend
):
    client.force_login(pi)
    with mock.patch.object(downloads, "analysis_zip", side_effect=RuntimeError("disk full")):
        page(client, answered)
        run_db_worker()
    job = BackgroundJob.objects.get(study=answered)
    assert job.status == JobStatus.FAILED and job.error == "disk full"
    shown = page(client, answered)  # asked again: a failed job is run again
    run_db_worker()
    job.refresh_from_db()
    assert job.status == JobStatus.DONE and job.attempt == 2
    assert "report.xlsx" in download_zip(client, answered).namelist()
    assert shown.status_code == 200


@UNRENDERED
def test_the_failure_is_shown_on_the_page(client, answered, pi, settings):
    """Immediate backend: the page shows the job's error instead of a progress bar."""
    client.force_login(pi)
    with mock.patch.object(downloads.StudyAnalysis, "result", new_callable=mock.PropertyMock) as r:
        r.side_effect = ValueError("the responses table has no rows for this policy")
        response = page(client, answered)
    assert b"could not be computed: the responses table has no rows" in response.content
    assert b'hx-trigger="every 2s"' not in response.content  # no polling of a failed job


class Killed(BaseException):
    """Stands for SIGKILL: nothing in the job's own code sees it."""


@UNRENDERED
def test_a_killed_workers_job_is_run_again_cleanly(client, answered, pi, db_backend, settings):
    client.force_login(pi)
    real = downloads.build_zip
    with mock.patch.object(downloads, "build_zip", side_effect=Killed()):
        page(client, answered)
        run_db_worker()  # the worker "dies" while writing the ZIP
    job = BackgroundJob.objects.get(study=answered)
    assert job.status == JobStatus.RUNNING  # nobody told the job it ended
    status = reverse("analysis-status", args=[answered.slug])
    client.get(status, {"want": "zip"})  # still fresh: not run twice at once
    run_db_worker()
    assert BackgroundJob.objects.get(pk=job.pk).attempt == 1
    later = time.time() + settings.TASK_STALE_SECONDS + 1
    with mock.patch("readerstudy.jobs.progress.time.time", return_value=later):
        client.get(status, {"want": "zip"})  # silent too long: enqueued again
    with mock.patch.object(downloads, "build_zip", wraps=real) as zips:
        run_db_worker()
    job.refresh_from_db()
    assert job.status == JobStatus.DONE and job.attempt == 2
    assert zips.call_count == 1
    assert "report.xlsx" in download_zip(client, answered).namelist()


@UNRENDERED
def test_answers_changing_schedule_one_debounced_reanalysis(
    client, answered, pi, reader, db_backend, settings, django_capture_on_commit_callbacks
):
    """The first change schedules the re-analysis ANALYSIS_REFRESH_DELAY later; the ones in
    that spell ride along; when it has run, the page is ready without computing."""
    from django_tasks_db.models import DBTaskResult

    client.force_login(pi)
    page(client, answered, missing="exclude")  # a PI looks at this policy
    run_db_worker()
    items = list(answered.items.order_by("position"))
    before = timezone.now()
    with django_capture_on_commit_callbacks(execute=True):
        answer_submit(reader=reader, item=items[0], choice="D")
        answer_submit(reader=reader, item=items[1], choice="D")
    scheduled = DBTaskResult.objects.filter(task_path__endswith="analysis_refresh")
    assert scheduled.count() == 1
    delay = dt.timedelta(seconds=settings.ANALYSIS_REFRESH_DELAY)
    assert scheduled.get().run_after >= before + delay
    run_db_worker()  # not yet due
    assert scheduled.get().status == "READY"
    scheduled.update(run_after=timezone.now())
    run_db_worker()  # the refresh, then the analyses it enqueued
    for policy in (AnalysisSettings(), AnalysisSettings(missing="exclude")):
        assert preparation.ready(StudyAnalysis(answered, policy)), policy
    spy = Renders()
    with mock.patch.object(plots, "figure_bytes", spy):
        response = page(client, answered, missing="exclude")
    assert b"job-status" not in response.content and spy.calls == []


@UNRENDERED
def test_the_same_work_through_rq_on_redis(
    client, answered, pi, settings, django_capture_on_commit_callbacks
):
    redis = pytest.importorskip("redis")
    connection = redis.Redis.from_url(RQ_URL)
    try:
        connection.ping()
    except redis.ConnectionError:
        pytest.skip("no Redis on 127.0.0.1:6379")
    connection.flushdb()
    settings.RQ_QUEUES = {"default": {"URL": RQ_URL}}
    settings.TASKS = {"default": {"BACKEND": "django_tasks_rq.RQBackend"}}
    import django_rq
    from django_tasks_rq import Job
    from rq import SimpleWorker

    client.force_login(pi)
    try:
        with django_capture_on_commit_callbacks(execute=True):
            first = page(client, answered)
        assert b"A worker is computing the analysis" in first.content
        queue = django_rq.get_queue("default")
        assert queue.count == 1
        SimpleWorker([queue], connection=queue.connection, job_class=Job).work(burst=True)
        job = BackgroundJob.objects.get(study=answered)
        assert job.status == JobStatus.DONE, job.error
        assert "report.xlsx" in download_zip(client, answered).namelist()
    finally:
        connection.flushdb()


@UNRENDERED
def test_answers_given_while_a_pi_waits_queue_one_analysis_not_one_per_answer(
    client, answered, pi, reader, db_backend
):
    """Found by benchmarks/scale: each page view or progress poll during reading queued one
    more full analysis per changed data version, a backlog still running after reading ended."""
    client.force_login(pi)
    items = list(answered.items.order_by("position"))
    status = reverse("analysis-status", args=[answered.slug])
    page(client, answered)
    for choice in "DCB":  # a reader keeps answering while the PI's page polls
        answer_submit(reader=reader, item=items[0], choice=choice)
        client.get(status)
        client.get(reverse("analysis-zip", args=[answered.slug]))
    assert BackgroundJob.objects.filter(study=answered, status=JobStatus.QUEUED).count() == 1
    run_db_worker()
    assert preparation.ready(StudyAnalysis(answered, AnalysisSettings()))  # the final data
    assert status_code(client, status) == 204


def status_code(client, url, **params) -> int:
    return client.get(url, params).status_code


@UNRENDERED
def test_a_zip_asked_for_while_readers_answer_is_served_once_one_as_new_is_ready(
    client, answered, pi, reader, db_backend
):
    """The data moves on with every answer; the ZIP of the data as of the PI's request (or
    newer) is served instead of chasing the current version for as long as readers answer."""
    client.force_login(pi)
    items = list(answered.items.order_by("position"))
    waiting = client.get(reverse("analysis-zip", args=[answered.slug]))
    assert waiting.status_code == 202
    poll = re.search(rb'hx-get="([^"]+want=zip[^"]*)"', waiting.content).group(1)
    poll = poll.decode().replace("&amp;", "&")
    run_db_worker()
    asked_version = StudyAnalysis(answered, AnalysisSettings()).version
    answer_submit(reader=reader, item=items[0], choice="D")  # before the page's next poll
    done = client.get(poll)
    assert done.status_code == 204
    assert f"v={asked_version}" in done["HX-Redirect"]
    archive = client.get(done["HX-Redirect"])
    assert archive.status_code == 200 and archive.content.startswith(b"PK")

    # Asked now, that ZIP is older than the request: the PI waits for the newer one.
    later = client.get(reverse("analysis-zip", args=[answered.slug]))
    assert later.status_code == 202
    poll = re.search(rb'hx-get="([^"]+want=zip[^"]*)"', later.content).group(1)
    poll = poll.decode().replace("&amp;", "&")
    assert b"<progress" in client.get(poll).content
    run_db_worker()
    done = client.get(poll)
    assert done.status_code == 204
    assert asked_version not in done["HX-Redirect"]
    assert client.get(done["HX-Redirect"]).content.startswith(b"PK")


@UNRENDERED
def test_a_job_whose_worker_died_before_it_started_is_not_waited_for(
    client, answered, pi, reader, db_backend
):
    """A worker took the task and was killed before the job said it was running: the job
    still says queued, but a newer analysis is queued instead of waiting for it forever."""
    from django_tasks_db.models import DBTaskResult

    client.force_login(pi)
    page(client, answered)
    DBTaskResult.objects.update(status="RUNNING", worker_ids=["killed"])  # taken, then SIGKILL
    answer_submit(reader=reader, item=answered.items.first(), choice="D")
    page(client, answered)
    run_db_worker()
    assert preparation.ready(StudyAnalysis(answered, AnalysisSettings()))


@UNRENDERED
def test_a_figure_waits_for_a_job_asked_for_an_older_version_instead_of_being_drawn_in_the_request(
    client, answered, pi, reader, db_backend
):
    """Found by benchmarks/scale: the job that will draw the current version was asked for an
    older one, so the figure's place drew it in the web request (a 100-reader κ heatmap ran
    past gunicorn's timeout and the web worker was killed)."""
    client.force_login(pi)
    page(client, answered)  # queued for this version
    answer_submit(reader=reader, item=answered.items.first(), choice="D")
    current = StudyAnalysis(answered, AnalysisSettings())
    slot = reverse("analysis-figure-slot", args=[answered.slug, "kappa_answer"])
    spy = Renders()
    with mock.patch.object(plots, "figure_bytes", spy):
        pending = client.get(slot, {"v": current.version})
        assert b"Drawing this figure" in pending.content
        assert spy.calls == []  # nothing drawn in the request
        run_db_worker()
        drawn = client.get(slot, {"v": current.version})
        assert b"<img" in drawn.content
        drawn_by_worker = len(spy.calls)
        image = re.search(rb'<img src="([^"]+)"', drawn.content).group(1).decode()
        assert client.get(image.replace("&amp;", "&")).status_code == 200
    assert len(spy.calls) == drawn_by_worker  # served from what the worker drew
