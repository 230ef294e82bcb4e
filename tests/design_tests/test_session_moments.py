"""When a reader's second session opens, said one way everywhere (issue 23 walk-through): the
home page, the reading page, the finish page, the API and the PI dashboard give the same date
in the same words with the time zone, and the home page invites to nothing that cannot be
answered yet."""

from __future__ import annotations

import datetime as dt
from datetime import timedelta
from html import unescape

import pytest
from django.urls import reverse
from django.utils import timezone

from annotation.dashboard import session_rows
from annotation.models import ReaderCompletion
from annotation.services import answer_submit, reader_finish
from annotation.sessions import moment_words, reading_of, session_opens_words
from readerstudy.models import ReaderAssignment, Role
from readerstudy.services.studies import membership_add
from tests.design_tests.conftest import add_readers, crossover
from tests.factories import UserFactory

FINISHED = dt.datetime(2026, 11, 5, 3, 29, tzinfo=dt.UTC)


def _finish_session_one(study, reader, at=FINISHED):
    for item in study.items.all():
        answer_submit(reader=reader, item=item, choice="A")
    reader_finish(reader=reader, study=study)
    ReaderCompletion.objects.filter(study=study, reader=reader, session=1).update(finished_at=at)


@pytest.fixture
def washout(design_study, set_design):
    """A crossover with a 28-day washout; reader r0 reads unaided first."""
    readers = add_readers(design_study, 2)
    set_design(design_study, crossover(washout_days=28))
    ReaderAssignment.objects.filter(study=design_study, reader=readers[0]).update(
        first_arm="unaided"
    )
    return design_study, readers[0]


def test_a_moment_is_said_with_the_day_unpadded_and_the_time_zone():
    assert moment_words(FINISHED + timedelta(days=28)) == "Thursday 3 December 2026 at 03:29 UTC"


def test_home_page_in_the_washout_says_when_session_two_opens_and_offers_no_start(washout, client):
    study, reader = washout
    _finish_session_one(study, reader, at=timezone.now())
    opens = reading_of(study, reader).opens_at
    client.force_login(reader)
    html = unescape(client.get(reverse("home")).content.decode())
    assert f"Your second session (aided) opens on {moment_words(opens)}" in html
    assert "Session 2 of 2 (aided)" in html
    start = reverse("reader-start", args=[study.slug])
    assert start not in html and ">Start<" not in html
    # The API's "my studies" says the same, with the moment as data.
    [row] = client.get("/api/v1/studies/").json()["results"]
    assert row["progress"]["opens_at"] == opens.isoformat().replace("+00:00", "Z")
    assert row["progress"]["washout"].startswith(
        f"Your second session (aided) opens on {moment_words(opens)}"
    )
    # Once the washout has passed, the home page offers session 2.
    ReaderCompletion.objects.filter(reader=reader, session=1).update(
        finished_at=timezone.now() - timedelta(days=29)
    )
    html = unescape(client.get(reverse("home")).content.decode())
    assert start in html and "opens on" not in html


def test_every_page_and_the_api_say_the_opening_moment_alike(washout, client):
    study, reader = washout
    _finish_session_one(study, reader, at=timezone.now())
    words = moment_words(reading_of(study, reader).opens_at)
    client.force_login(reader)
    pages = {
        "home": reverse("home"),
        "instructions": reverse("reader-instructions", args=[study.slug]),
        "case": reverse("reader-case", args=[study.slug, 1]),
        "finish": reverse("reader-done", args=[study.slug]),
    }
    for name, url in pages.items():
        html = unescape(client.get(url).content.decode())
        assert f"Your second session (aided) opens on {words}" in html, name
    detail = client.get(f"/api/v1/studies/{study.slug}/cases/1/").json()["detail"]
    assert f"opens on {words}" in detail


def test_dashboard_opens_column_says_the_rule_in_words_then_the_date(
    design_study, set_design, client
):
    """Before session 1 is finished: the rule in plain words (not "after session 1 + 7 d");
    then the date, said as the reader is told it."""
    study = design_study
    readers = add_readers(study, 2)
    set_design(study, crossover(washout_days=7))
    study.refresh_from_db()
    second = [r.opens for r in session_rows(study) if r.session == 2]
    assert second == ["7 days after session 1 is finished"] * 2
    assert session_opens_words(study, None) == "7 days after session 1 is finished"
    study.washout_days = 1
    assert session_opens_words(study, None) == "1 day after session 1 is finished"
    study.washout_days = 0
    assert session_opens_words(study, None) == "when session 1 is finished"
    study.washout_days = 7
    _finish_session_one(study, readers[0])
    rows = {(r.username, r.session): r.opens for r in session_rows(study)}
    assert rows[(readers[0].username, 2)] == moment_words(FINISHED + timedelta(days=7))
    assert rows[(readers[0].username, 1)] == "open"
    pi = UserFactory(username="pi0")
    membership_add(study=study, user=pi, role=Role.PI)
    client.force_login(pi)
    html = unescape(client.get(reverse("pi-dashboard", args=[study.slug])).content.decode())
    assert "7 days after session 1 is finished" in html
    assert moment_words(FINISHED + timedelta(days=7)) in html
    assert "+ 7 d" not in html
