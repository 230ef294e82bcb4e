"""Pacing (issue 26, item 5): the reader's time left at their own pace, the instructions'
expected duration and the PI dashboard's pace and expected finish, all computed server-side
(annotation.pacing); the page's script only shows the words."""

import pytest
from django.urls import reverse

from annotation.pacing import Pace, approximately, pace_of
from readerstudy.models import Role
from tests.factories import MembershipFactory, UserFactory, build_study


def test_an_estimate_reads_as_one():
    assert approximately(20_000) == "under a minute"
    assert approximately(14 * 60_000) == "about 14 min"
    assert approximately(60 * 60_000) == "about 1 h"
    assert approximately(100 * 60_000) == "about 1 h 40 min"


def test_the_pace_is_the_median_so_one_case_left_open_does_not_move_it():
    pace = pace_of([60_000, 120_000, 1_800_000], left=7)
    assert pace.per_case_ms == 120_000
    assert pace.left_ms == 7 * 120_000
    assert pace.text == "about 14 min left at your pace"


def test_no_estimate_before_a_few_cases_and_none_needed_at_the_end():
    assert pace_of([30_000, 30_000], left=5).left_ms is None
    assert pace_of([30_000, 30_000], left=5).text == "time left: after a few cases"
    assert Pace(answered=10, left=0, per_case_ms=30_000).text == ""


@pytest.fixture
def ten(db):
    study = build_study(10)
    user = UserFactory(username="resident")
    MembershipFactory(study=study, user=user, role=Role.READER)
    return study, user


def post(client, study, number, time_ms):
    return client.post(
        reverse("reader-answer", args=[study.slug, number]),
        {"choice": "A", "time_ms": time_ms},
        HTTP_ACCEPT="application/json",
    )


def test_the_top_bar_shows_the_time_left_at_the_readers_own_pace(client, ten):
    study, user = ten
    client.force_login(user)
    html = client.get(reverse("reader-case", args=[study.slug, 1])).content.decode()
    assert "time left: after a few cases" in html
    post(client, study, 1, 60_000)
    post(client, study, 2, 180_000)
    receipt = post(client, study, 3, 120_000).json()
    # 7 cases left at a median of 2 min: the receipt carries the words the page shows.
    assert receipt["pace"] == {
        "left_ms": 7 * 120_000,
        "per_case_ms": 120_000.0,
        "text": "about 14 min left at your pace",
    }
    html = client.get(reverse("reader-case", args=[study.slug, 4])).content.decode()
    assert "about 14 min left at your pace" in html


def test_instructions_state_the_expected_duration(client, ten, settings):
    study, user = ten
    settings.READER_EXPECTED_CASE_MS = 45_000
    client.force_login(user)
    url = reverse("reader-instructions", args=[study.slug])
    html = client.get(url).content.decode()
    # Before anyone has answered: the policy's expected time per case.
    assert "10 cases: expect about 8 min of reading (about 45 s a case)." in html
    assert "after 60 min of reading without a pause you are reminded" in html
    for number, ms in [(1, 60_000), (2, 60_000), (3, 90_000)]:
        post(client, study, number, ms)
    # Then the readers' own median.
    html = client.get(url).content.decode()
    assert "10 cases: expect about 10 min of reading (about 60 s a case)." in html


def test_the_dashboard_shows_each_readers_pace_and_expected_finish(client, ten):
    study, user = ten
    slow = UserFactory(username="slow")
    MembershipFactory(study=study, user=slow, role=Role.READER)
    pi = UserFactory(username="boss")
    MembershipFactory(study=study, user=pi, role=Role.PI)
    client.force_login(user)
    for number in (1, 2, 3):
        post(client, study, number, 30_000)
    client.force_login(slow)
    post(client, study, 1, 90_000)
    client.force_login(pi)
    html = client.get(reverse("pi-dashboard", args=[study.slug])).content.decode()
    row = html[html.index("<td>resident</td>") :].split("</tr>")[0]
    assert "30 s" in row and "3 min 30 s of reading" in row  # 7 left x 30 s
    row = html[html.index("<td>slow</td>") :].split("</tr>")[0]
    assert "after 3 cases" in row
