"""Analysis jobs are bounded (issue 38): every distinct `ni_margin` was a new policy and a full
analysis job, so 10 page views in 1.3 s queued 10 jobs (79 s of work on the demo, minutes each
at scale) and starved every study on the shared queue. Now a margin is a multiple of 0.005, a
study has at most LIVE_POLICIES policies queued or running, a person at most TASK_USER_LIMIT
new jobs per TASK_USER_WINDOW, and the queue runs a study's first job before another study's
third. Through django-tasks-db's own worker, in process."""

from __future__ import annotations

import datetime as dt
from unittest import mock

import pytest
from django.contrib.messages import get_messages
from django.urls import reverse
from django.utils import timezone

from analysis.preparation import LIVE_POLICIES, analysis_refresh
from annotation.services import answer_submit
from readerstudy.design.rules import Design
from readerstudy.design.tasks import _uploads, study_create_start
from readerstudy.jobs import JobRefused
from readerstudy.models import BackgroundJob, JobKind, JobStatus
from tests.factories import MembershipFactory, UserFactory, build_study

# Their ZIPs are read for tables, README and methods: the figures are built, not saved
# (the figure tests save them).
pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("figures_unrendered")]
MARGINS = [f"{0.01 + 0.005 * i:.3f}" for i in range(10)]


def _jobs(study) -> list[BackgroundJob]:
    return list(BackgroundJob.objects.filter(study=study, kind=JobKind.ANALYSIS))


def _page(client, study, margin):
    return client.get(reverse("analysis", args=[study.slug]), {"ni_margin": margin})


def run_one_task() -> None:
    """The database engine's worker, for one task: what it claims first is what runs."""
    from django_tasks_db.management.commands import db_worker
    from django_tasks_db.management.commands.db_worker import Worker

    worker = Worker(
        queue_names=["default"],
        interval=0,
        batch=True,
        backend_name="default",
        startup_delay=False,
        max_tasks=1,
        worker_id="one",
        excluded_queue_names=[],
    )
    with mock.patch.object(db_worker, "close_old_connections", lambda: None):
        worker.run()


def test_ten_views_with_ten_margins_queue_at_most_three_jobs(client, answered, pi, db_backend):
    client.force_login(pi)
    pages = [_page(client, answered, margin) for margin in MARGINS]
    assert all(page.status_code == 200 for page in pages)
    assert len(_jobs(answered)) == LIVE_POLICIES == 3
    said = [str(m) for m in get_messages(pages[-1].wsgi_request)]
    assert any("the most at once (3)" in m and "Ask again" in m for m in said)
    last = pages[-1].content.decode()  # no claim that a worker computes it
    assert "Not queued yet" in last and "A worker is computing" not in last
    # The API alike: 429 in words, with when to ask again.
    response = client.get(f"/api/v1/studies/{answered.slug}/analysis/", {"ni_margin": "0.3"})
    assert response.status_code == 429 and response["Retry-After"] == "60"
    assert "under other settings are being computed" in response.json()["detail"]
    # A download under a fourth policy too (the error page, not a job).
    zipped = client.get(reverse("analysis-zip", args=[answered.slug]), {"ni_margin": "0.3"})
    assert zipped.status_code == 429 and "Not now" in zipped.content.decode()
    assert len(_jobs(answered)) == 3
    # Once they are done, the next settings are computed.
    for _ in range(3):
        run_one_task()
    assert _page(client, answered, "0.3").status_code == 200
    assert len(_jobs(answered)) == 4


def test_a_margin_off_the_steps_is_refused_and_queues_nothing(client, answered, pi, db_backend):
    client.force_login(pi)
    response = client.get(f"/api/v1/studies/{answered.slug}/analysis/", {"ni_margin": "0.0371"})
    assert response.status_code == 400 and "ni_margin" in response.json()["errors"]
    assert "in steps of 0.005" in response.json()["errors"]["ni_margin"][0]
    assert _jobs(answered) == []


def test_a_flood_from_one_pi_leaves_another_studys_analysis_on_time(
    client, answered, pi, db_backend
):
    other = build_study(3, dataset=answered.dataset, slug="other-study")
    other_pi = UserFactory(username="other_pi")
    MembershipFactory(study=other, user=other_pi, role="pi")
    reader = UserFactory(username="other_reader_b")
    MembershipFactory(study=other, user=reader, role="reader")
    for item in other.items.all():
        answer_submit(reader=reader, item=item, choice="A")
    client.force_login(pi)
    for margin in MARGINS:  # the flood: 3 jobs queued, the rest refused
        _page(client, answered, margin)
    client.force_login(other_pi)
    _page(client, other, "0.05")
    (theirs,) = _jobs(other)
    run_one_task()  # the flood's first job (it came first)
    run_one_task()  # the other study's, before the flood's second and third
    theirs.refresh_from_db()
    assert theirs.status == JobStatus.DONE
    assert sorted(j.status for j in _jobs(answered)) == [
        JobStatus.DONE,
        JobStatus.QUEUED,
        JobStatus.QUEUED,
    ]


def test_one_person_may_queue_only_so_much_work(client, answered, pi, db_backend, settings):
    settings.TASK_USER_LIMIT = 2
    studies = [answered] + [build_study(2, slug=f"more-{i}") for i in range(2)]
    for study in studies[1:]:
        MembershipFactory(study=study, user=pi, role="pi")
    client.force_login(pi)
    for study in studies[:2]:
        assert client.get(f"/api/v1/studies/{study.slug}/analysis/").status_code == 202
    refused = client.get(f"/api/v1/studies/{studies[2].slug}/analysis/")
    assert refused.status_code == 429
    said = refused.json()["detail"]
    assert "2 pieces of background work" in said and "in the last 10 minutes" in said
    assert 0 < int(refused["Retry-After"]) <= 600
    assert _jobs(studies[2]) == []
    BackgroundJob.objects.update(created_at=timezone.now() - dt.timedelta(minutes=11))
    assert client.get(f"/api/v1/studies/{studies[2].slug}/analysis/").status_code == 202


def test_a_refused_study_creation_keeps_no_upload(pi, settings, db_backend):
    from django.core.files.uploadedfile import SimpleUploadedFile

    settings.TASK_USER_LIMIT = 1
    BackgroundJob.objects.create(key="earlier", kind=JobKind.ANALYSIS, requested_by=pi)
    upload = SimpleUploadedFile("bank.csv", b"id,question\n")
    with pytest.raises(JobRefused, match="Ask again in"):
        study_create_start(
            user=pi, options={"slug": "x"}, design=Design(), upload=upload, dataset_name="d"
        )
    assert not _uploads().exists() or not any(_uploads().rglob("*"))


def test_the_refresh_after_answers_skips_what_it_may_not_queue(answered, db_backend):
    """The debounced re-analysis keeps the viewed policies fresh within the same bound."""
    from analysis import preparation
    from analysis.pipeline import AnalysisSettings

    for margin in (0.01, 0.02, 0.03, 0.04):
        preparation.remember_policy(answered, AnalysisSettings(ni_margin=margin))
    analysis_refresh.call(study_id=answered.pk)
    assert len(_jobs(answered)) == LIVE_POLICIES
