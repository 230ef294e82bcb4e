"""The analysis API, the per-table downloads and the figure downloads never compute the
analysis inside the request (issue 27): without a computed analysis they enqueue the task and
answer 202 with its progress; while a newer data version is computed they serve the newest
older one "as of" when it was computed. Through a real database worker (in process)."""

from contextlib import contextmanager
from unittest import mock

import pytest
from django.urls import reverse

from analysis.cache import StudyAnalysis
from annotation.services import answer_submit
from readerstudy.models import BackgroundJob, JobStatus
from tests.analysis_tests.test_analysis_downloads import run_db_worker

pytestmark = pytest.mark.django_db


@contextmanager
def computing_forbidden():
    """Inside: computing the analysis fails the test (the requests must not do it)."""
    with mock.patch.object(
        StudyAnalysis, "_analyse", side_effect=AssertionError("computed in the request")
    ):
        yield


def api(client, study, **params):
    return client.get(f"/api/v1/studies/{study.slug}/analysis/", params)


def table(client, study, name="accuracy", fmt="csv"):
    return client.get(reverse("analysis-table", args=[study.slug, name, fmt]))


def test_the_api_answers_202_with_progress_then_the_results(client, answered, pi, db_backend):
    client.force_login(pi)
    with computing_forbidden():
        waiting = api(client, answered)
        assert waiting.status_code == 202
        body = waiting.json()
        assert body["status"] == JobStatus.QUEUED
        assert body["poll"].endswith(f"/api/v1/studies/{answered.slug}/analysis/")
        assert waiting["Retry-After"] == "2"
        assert api(client, answered).status_code == 202  # asked twice: one job
    assert BackgroundJob.objects.filter(study=answered).count() == 1
    run_db_worker()
    with computing_forbidden():
        ready = api(client, answered)
    assert ready.status_code == 200
    data = ready.json()
    assert data["as_of"] is None and data["accuracy"]
    assert data["data_version"] == StudyAnalysis(answered, ready_policy()).version


def ready_policy():
    from analysis.pipeline import AnalysisSettings

    return AnalysisSettings()


def test_the_api_serves_the_older_analysis_as_of_while_newer_answers_are_analysed(
    client, answered, pi, reader, db_backend
):
    client.force_login(pi)
    api(client, answered)
    run_db_worker()
    before = api(client, answered).json()
    answer_submit(reader=reader, item=answered.items.order_by("position").first(), choice="D")
    with computing_forbidden():
        stale = api(client, answered)
    assert stale.status_code == 200
    data = stale.json()
    assert data["as_of"] is not None
    assert data["data_version"] == before["data_version"]
    assert data["accuracy"] == before["accuracy"]
    run_db_worker()
    fresh = api(client, answered).json()
    assert fresh["as_of"] is None and fresh["data_version"] != before["data_version"]
    assert fresh["accuracy"] != before["accuracy"]  # the changed answer counts now


def test_a_table_asked_for_first_shows_progress_then_downloads(client, answered, pi, db_backend):
    client.force_login(pi)
    with computing_forbidden():
        waiting = table(client, answered)
    assert waiting.status_code == 202
    assert b"Preparing the table accuracy" in waiting.content
    assert b"want=table:accuracy.csv" in waiting.content
    status = reverse("analysis-status", args=[answered.slug])
    assert b"<progress" in client.get(status, {"want": "table:accuracy.csv"}).content
    run_db_worker()
    done = client.get(status, {"want": "table:accuracy.csv"})
    assert done.status_code == 204
    assert done["HX-Redirect"].startswith(
        reverse("analysis-table", args=[answered.slug, "accuracy", "csv"])
    )
    with computing_forbidden():
        csv = table(client, answered)
    assert csv.status_code == 200 and "accuracy" in csv["Content-Disposition"]
    assert not csv.content.startswith(b"#")  # a plain table
    assert b"as_of" not in csv.content and "X-Analysis-As-Of" not in csv


def test_a_table_while_newer_answers_are_analysed_is_the_older_one_marked_as_of(
    client, answered, pi, reader, db_backend
):
    client.force_login(pi)
    table(client, answered)
    run_db_worker()
    ready = table(client, answered)
    before = ready.content
    answer_submit(reader=reader, item=answered.items.order_by("position").first(), choice="D")
    with computing_forbidden():
        stale = table(client, answered)
        xlsx = table(client, answered, fmt="xlsx")
    assert stale.status_code == 200 and stale["X-Analysis-As-Of"]
    # The older table as it was, a plain table; its name says which data version it is of.
    assert stale.content == before
    assert stale["Content-Disposition"] == ready["Content-Disposition"]
    assert xlsx.status_code == 200 and xlsx["X-Analysis-As-Of"] == stale["X-Analysis-As-Of"]
    assert table(client, answered, name="no_such_table").status_code == 404


def test_a_figure_download_before_the_analysis_shows_progress(client, answered, pi, db_backend):
    client.force_login(pi)
    url = reverse("analysis-figure", args=[answered.slug, "accuracy_by_task", "png"])
    with computing_forbidden():
        waiting = client.get(url, {"download": "1"})
    assert waiting.status_code == 202
    assert b"Preparing the figure accuracy_by_task" in waiting.content
    run_db_worker()
    png = client.get(url, {"download": "1"})
    assert png.status_code == 200 and png.content.startswith(b"\x89PNG")
