"""The downloads drawn in the background while a PI reads the analysis page (issue 13,
"fast"): the ZIP is ready when asked for, nothing is drawn twice, a newer data version
replaces an older job, and a failed job loses nothing."""

import contextlib
import io
import threading
import zipfile
from concurrent.futures import wait
from unittest import mock

import pytest
from django.urls import reverse

from analysis import downloads
from analysis.cache import StudyAnalysis
from analysis.pipeline import AnalysisSettings
from analysis.stats import plots
from annotation.services import answer_submit

pytestmark = pytest.mark.django_db


@pytest.fixture(autouse=True)
def _prepare_in_background(settings):
    settings.ANALYSIS_PREPARE_DOWNLOADS = True
    yield
    downloads.settle()


@pytest.fixture
def answered(study, reader, other_reader, pi):
    for n, item in enumerate(study.items.order_by("position")):
        answer_submit(reader=reader, item=item, choice=item.question.correct, time_ms=5000 + n)
        answer_submit(reader=other_reader, item=item, choice="A", time_ms=9000)
    return study


class Renders:
    """Counts figure renderings by (figure title, format); can hold the background thread
    at its first rendering until released."""

    def __init__(self, hold: bool = False):
        self.calls: list[tuple[str, str, str]] = []
        self.release = threading.Event()
        if not hold:
            self.release.set()
        self._real = plots.figure_bytes

    def __call__(self, fig, fmt):
        thread = threading.current_thread().name
        self.calls.append((fig.get_suptitle() or fig.axes[0].get_title(), fmt, thread))
        if thread.startswith("analysis-downloads"):
            assert self.release.wait(10), "the test never released the background thread"
        return self._real(fig, fmt)

    def by_format(self) -> dict[tuple[str, str], int]:
        counts: dict[tuple[str, str], int] = {}
        for title, fmt, _ in self.calls:
            counts[(title, fmt)] = counts.get((title, fmt), 0) + 1
        return counts


@contextlib.contextmanager
def another_worker():
    """Requests served by another gunicorn worker: a process that shares the cache and none
    of this one's in-memory state. Yields its jobs (run here on this process's thread)."""
    local = {k: {} for k, v in vars(downloads).items() if k.startswith("_") and type(v) is dict}
    with mock.patch.multiple(downloads, **local):
        yield local["_jobs"]


def page(client, study):
    response = client.get(reverse("analysis", args=[study.slug]))
    assert response.status_code == 200
    return response


def download_zip(client, study) -> zipfile.ZipFile:
    response = client.get(reverse("analysis-zip", args=[study.slug]))
    assert response.status_code == 200
    return zipfile.ZipFile(io.BytesIO(response.content))


def test_the_zip_is_ready_after_the_page_and_the_request_draws_nothing(client, answered, pi):
    client.force_login(pi)
    page(client, answered)
    downloads.settle()
    spy = Renders()
    with mock.patch.object(plots, "figure_bytes", spy):
        archive = download_zip(client, answered)
    assert spy.calls == []  # served as prepared
    names = set(archive.namelist())
    for figure in ("accuracy_by_task", "kappa_answer", "reading_time"):
        assert {f"{figure}.png", f"{figure}.svg", f"{figure}.pdf"} <= names
    assert {"report.xlsx", "policy.json", "accuracy.csv"} <= names
    assert archive.read("accuracy_by_task.png").startswith(b"\x89PNG")
    assert archive.read("kappa_answer.pdf").startswith(b"%PDF")


def test_a_zip_asked_for_while_it_is_prepared_waits_and_nothing_is_drawn_twice(
    client, answered, pi
):
    client.force_login(pi)
    spy = Renders(hold=True)
    with mock.patch.object(plots, "figure_bytes", spy):
        page(client, answered)  # the job starts and stops at its first drawing
        threading.Timer(0.5, spy.release.set).start()
        archive = download_zip(client, answered)
        downloads.settle()
    assert "kappa_answer.pdf" in archive.namelist()
    assert spy.calls, "nothing was drawn at all"
    assert all(n == 1 for n in spy.by_format().values()), spy.by_format()


def test_an_older_data_version_stops_being_prepared(client, answered, pi, reader):
    client.force_login(pi)
    spy = Renders(hold=True)
    with mock.patch.object(plots, "figure_bytes", spy):
        page(client, answered)
        old = StudyAnalysis(answered, AnalysisSettings())
        answer_submit(reader=reader, item=answered.items.first(), choice="D")
        page(client, answered)  # a newer version: the first job gives up at its next figure
        spy.release.set()
        downloads.settle()
    new = StudyAnalysis(answered, AnalysisSettings())
    assert new.version != old.version
    assert new.has("zip") and not old.has("zip")
    old_svgs = [c for c in spy.calls if c[1] == "svg"]
    figures = len(set(c[0] for c in spy.calls))
    assert len(old_svgs) <= figures + 1  # the old job drew at most the figure it was on


def test_a_failed_preparation_is_logged_and_the_zip_is_still_served(client, answered, pi, caplog):
    client.force_login(pi)
    real = downloads.analysis_zip
    failures = iter([RuntimeError("disk full")])

    def flaky(*args, **kwargs):
        error = next(failures, None)
        if error:
            raise error
        return real(*args, **kwargs)

    with mock.patch.object(downloads, "analysis_zip", flaky):
        page(client, answered)
        downloads.settle()
        archive = download_zip(client, answered)
    assert "preparing the analysis downloads" in caplog.text
    assert "report.xlsx" in archive.namelist()


def test_nothing_is_prepared_when_switched_off(client, answered, pi, settings):
    settings.ANALYSIS_PREPARE_DOWNLOADS = False
    client.force_login(pi)
    page(client, answered)
    downloads.settle()
    assert not StudyAnalysis(answered, AnalysisSettings()).has("zip")


def test_another_worker_waits_for_the_mark_instead_of_drawing(answered, monkeypatch):
    """Another process is preparing (its mark is in the shared cache): wait for its ZIP."""
    analysis = StudyAnalysis(answered, AnalysisSettings())
    analysis.store("preparing", True)
    monkeypatch.setattr(downloads, "WAIT", 5.0)

    def other_worker_finishes():
        analysis.store("zip", b"prepared elsewhere")
        analysis.forget("preparing")

    threading.Timer(0.5, other_worker_finishes).start()
    spy = Renders()
    with mock.patch.object(plots, "figure_bytes", spy):
        assert downloads.zip_bytes(analysis) == b"prepared elsewhere"
    assert spy.calls == []


def test_switching_policy_prepares_what_the_pi_now_looks_at(client, answered, pi):
    client.force_login(pi)
    spy = Renders(hold=True)
    with mock.patch.object(plots, "figure_bytes", spy):
        page(client, answered)
        response = client.get(reverse("analysis", args=[answered.slug]), {"missing": "exclude"})
        assert response.status_code == 200
        spy.release.set()
        downloads.settle()
    first = StudyAnalysis(answered, AnalysisSettings())
    now = StudyAnalysis(answered, AnalysisSettings(missing="exclude"))
    assert now.has("zip") and not first.has("zip")


EXIT_WHILE_PREPARING = r"""
import os, pickle, sys, time
import django
django.setup()
from django.conf import settings
from analysis import downloads
from analysis.cache import StudyAnalysis
from analysis.pipeline import AnalysisSettings
from analysis.stats import plots
from readerstudy.models import ReaderStudy

settings.ANALYSIS_PREPARE_DOWNLOADS = True
real = plots.figure_bytes
log = open(sys.argv[2], "a", buffering=1)

def slow(fig, fmt):
    log.write("render\n")
    time.sleep(0.3)
    return real(fig, fmt)

plots.figure_bytes = slow
analysis = StudyAnalysis(ReaderStudy(pk=1), AnalysisSettings(), version="v1")
with open(sys.argv[1], "rb") as f:
    analysis._result = pickle.load(f)
downloads.prepare(analysis)
time.sleep(0.5)
log.write("exit\n")
"""


def test_a_process_exiting_stops_its_job_at_the_next_figure(answered, tmp_path):
    """A gunicorn worker restarting (deploy, max-requests) exits once the figure being
    drawn is done, instead of drawing every download first, and leaves no "preparing" mark
    for the other workers to wait on."""
    import os
    import pickle
    import subprocess
    import sys

    from django.test import override_settings

    from readerstudy.models import ReaderStudy

    results = tmp_path / "result.pickle"
    results.write_bytes(pickle.dumps(StudyAnalysis(answered, AnalysisSettings()).result))
    log = tmp_path / "log"
    env = {**os.environ, "CACHE_URL": f"file://{tmp_path}/cache"}
    subprocess.run(
        [sys.executable, "-c", EXIT_WHILE_PREPARING, str(results), str(log)],
        env=env,
        check=True,
        timeout=300,
    )
    after_exit = log.read_text().split("exit\n", 1)[1].splitlines()
    # At most the other formats of the figure it was on.
    assert len(after_exit) <= 2, f"{len(after_exit)} renderings after the process exited"
    file_cache = {"BACKEND": "django.core.cache.backends.filebased.FileBasedCache"}
    with override_settings(CACHES={"default": {**file_cache, "LOCATION": f"{tmp_path}/cache"}}):
        seen_by_another_worker = StudyAnalysis(ReaderStudy(pk=1), AnalysisSettings(), "v1")
        assert not seen_by_another_worker.has("preparing")


def test_a_policy_switch_served_by_another_worker_drops_the_older_job(client, answered, pi):
    client.force_login(pi)
    spy = Renders(hold=True)
    with mock.patch.object(plots, "figure_bytes", spy):
        page(client, answered)  # this worker's job starts and stops at its first drawing
        with another_worker() as its_jobs:
            response = client.get(reverse("analysis", args=[answered.slug]), {"missing": "exclude"})
            assert response.status_code == 200
        spy.release.set()
        downloads.settle()
        wait(list(its_jobs.values()), timeout=downloads.WAIT)
    first = StudyAnalysis(answered, AnalysisSettings())
    now = StudyAnalysis(answered, AnalysisSettings(missing="exclude"))
    assert not first.has("zip"), "the older job was not dropped"
    assert now.has("zip")


def test_a_page_opened_in_another_worker_does_not_prepare_the_same_downloads_again(
    client, answered, pi
):
    client.force_login(pi)
    spy = Renders(hold=True)
    zips = mock.Mock(wraps=downloads.analysis_zip)
    with (
        mock.patch.object(plots, "figure_bytes", spy),
        mock.patch.object(downloads, "analysis_zip", zips),
    ):
        page(client, answered)  # this worker's job starts and stops at its first drawing
        with another_worker() as its_jobs:
            page(client, answered)  # a reload, served by another worker
        spy.release.set()
        downloads.settle()
        wait(list(its_jobs.values()), timeout=downloads.WAIT)
    assert StudyAnalysis(answered, AnalysisSettings()).has("zip")
    assert zips.call_count == 1, "the second worker prepared the same downloads again"


def test_a_figure_saved_while_another_is_saved_keeps_its_text(answered):
    """The job saves one figure while a request saves another (each under its own figure
    lock): the one that started second must still come out with real SVG text, even though
    the first finishes while it is being written."""
    from matplotlib.figure import Figure

    from analysis.exports import figure_builders

    builders = figure_builders(StudyAnalysis(answered, AnalysisSettings()).result)
    first, second = builders["accuracy_by_task"](), builders["reading_time"]()
    first_inside, second_inside, first_done = (threading.Event() for _ in range(3))
    real = Figure.savefig

    def savefig(fig, *args, **kwargs):
        if fig is first:  # the request: started first, finishes while the job writes
            first_inside.set()
            second_inside.wait(2)
        else:  # the job
            second_inside.set()
            first_done.wait(2)
        return real(fig, *args, **kwargs)

    out = {}

    def job():
        first_inside.wait(5)
        out["second"] = plots.figure_bytes(second, "svg")

    with mock.patch.object(Figure, "savefig", savefig):
        thread = threading.Thread(target=job)
        thread.start()
        out["first"] = plots.figure_bytes(first, "svg")
        first_done.set()
        thread.join(10)
    assert b"<text" in out["first"]
    assert b"<text" in out["second"], "the second figure's text came out as glyph paths"


def test_the_background_job_reads_no_database(client, answered, pi):
    """The job works from the analysis the request loaded: no connection of its own."""
    from django.db.backends import utils

    threads = []
    real = utils.CursorWrapper.execute

    def spy(self, *args, **kwargs):
        threads.append(threading.current_thread().name)
        return real(self, *args, **kwargs)

    client.force_login(pi)
    with mock.patch.object(utils.CursorWrapper, "execute", spy):
        page(client, answered)
        downloads.settle()
    assert StudyAnalysis(answered, AnalysisSettings()).has("zip")
    assert threads and not [t for t in threads if t.startswith("analysis-downloads")]
