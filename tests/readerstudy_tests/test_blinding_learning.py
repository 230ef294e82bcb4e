"""Blinding by person on what readers get back (issue 36): results (the debrief), its case
viewer, CSV and API, practice sets and their feedback, progress, "practise my misses".

Study A shows its readers their results once their own reading is final, with the AI's
answers. B holds A's questions (the same X-rays) and P is a practice set of other questions on
those X-rays. The crawl asks every page and endpoint of every study of each person, and the
pages that belong to no study (home, progress), as a reader partway through A, a reader who
finished A, and a reader who finished A but reads B blind: only the second receives the keys
and explanations of A's X-rays.
"""

from __future__ import annotations

import pytest
from django.urls import reverse
from rest_framework.test import APIClient

from annotation.practice import practice_set_create
from annotation.services import answer_submit, reader_finish
from readerstudy.blinding import membership_conflict
from readerstudy.models import Membership, Question, ReaderStudy, Role
from readerstudy.predictions.services import predictions_import
from readerstudy.services.studies import StudyError, membership_add, study_reading_close
from readerstudy.vocabulary import ResultsVisibility
from tests.factories import (
    MembershipFactory,
    QuestionFactory,
    UserFactory,
    build_study,
    imported_as,
    touch_display_files,
)
from tests.readerstudy_tests.test_authorization_matrix import endpoints
from tests.readerstudy_tests.test_blinding_by_person import _body, _copy_study

pytestmark = pytest.mark.django_db
SENTINELS = ["A-KEY-EXPLANATION", "P-KEY-EXPLANATION", "A-AI-NAME"]
# What shows a key on a page: the feedback panel, the results' key marks.
KEY_MARKS = ["data-feedback-panel", 'class="key-letter"', '"key":']


@pytest.fixture
def world(db):
    a = build_study(4, slug="study-a", title="Reading study A")
    for question in Question.objects.filter(dataset=a.dataset):
        imported_as(question, explanation="A-KEY-EXPLANATION")  # its version 1 too
    a.results_visibility = ResultsVisibility.OWN_FINAL
    a.results_show_ai = True
    a.save()
    rows = "\n".join(f"{i.question.source_id},B" for i in a.items.all())
    predictions_import(
        dataset=a.dataset,
        model_name="A-AI-NAME",
        content=f"question_id,prediction\n{rows}\n".encode(),
    )
    b = _copy_study(a, "study-b", "Blind study B")
    pi = UserFactory(username="pi_a")
    for study in (a, b):
        MembershipFactory(study=study, user=pi, role=Role.PI)
    for position, item in enumerate(a.items.order_by("position")):
        QuestionFactory(
            dataset=a.dataset,
            case=item.question.case,
            text=f"Practice question {position}?",
            explanation="P-KEY-EXPLANATION",
            source_id=f"p{position}",
        )
    touch_display_files()
    practice = practice_set_create(
        slug="practice-p",
        title="Practice set P",
        dataset=a.dataset,
        n=4,
        creator=pi,
        tasks=[],
    ).study
    return {"a": a, "b": b, "p": practice, "pi": pi}


@pytest.fixture
def people(world):
    a, b = world["a"], world["b"]
    items = list(a.items.order_by("position"))
    partway = UserFactory(username="partway")
    membership_add(study=a, user=partway, role=Role.READER)
    answer_submit(reader=partway, item=items[0], choice="A")
    finished = UserFactory(username="finished")
    membership_add(study=a, user=finished, role=Role.READER)
    for item in items:
        answer_submit(reader=finished, item=item, choice="A", time_ms=9000)
    reader_finish(reader=finished, study=a)
    blind = UserFactory(username="blind_elsewhere")
    membership_add(study=a, user=blind, role=Role.READER)
    # Reads A's X-rays blind in B too (made a reader of B while still reading A: once A's
    # results are open to them, B would refuse them, test_practice_answers_and_...).
    membership_add(study=b, user=blind, role=Role.READER)
    for item in items:
        answer_submit(reader=blind, item=item, choice="C", time_ms=9000)
    reader_finish(reader=blind, study=a)
    return {"partway": partway, "finished": finished, "blind_elsewhere": blind}


def _crawl(user, world) -> dict:
    """Every endpoint of each of the person's studies, and home and progress, as `user`."""
    client = APIClient()
    client.force_login(user)
    out = {}
    studies = ReaderStudy.objects.filter(memberships__user=user).distinct()
    for study in studies:
        item = study.items.order_by("position").first()
        for endpoint in endpoints(study, item):
            if endpoint.method != "get":
                continue
            response = client.get(endpoint.url)
            out[(study.slug, endpoint.name)] = (response.status_code, _body(response))
    for name in ("home", "my-progress"):
        response = client.get(reverse(name))
        out[("-", name)] = (response.status_code, _body(response))
    return out


def _leaks(seen: dict, marks=SENTINELS) -> list:
    return [(where, m) for where, (_, body) in seen.items() for m in marks if m in body]


@pytest.mark.parametrize("name", ["partway", "blind_elsewhere"])
def test_the_crawl_finds_no_key_for_a_reader_partway_or_reading_the_xrays_blind(
    world, people, name
):
    seen = _crawl(people[name], world)
    assert len(seen) >= 30
    assert _leaks(seen) == []
    assert _leaks({k: v for k, v in seen.items() if k[0] != "-"}, KEY_MARKS) == []
    assert all(status < 500 for status, _ in seen.values())
    status, body = seen[("study-a", "reader results")]
    assert status == 403
    if name == "partway":
        assert "once your reading is final" in body
    else:
        assert "blind in another study" in body and "Blind study B" in body
    assert seen[("study-a", "api results")][0] == 403
    assert seen[("study-a", "reader results csv")][0] == 403
    assert seen[("study-a", "reader results case")][0] == 403


def test_the_same_crawl_reaches_the_keys_for_the_reader_who_finished(world, people):
    """The positive control: the refusals above are all that stood between them and A's keys."""
    seen = _crawl(people["finished"], world)
    status, body = seen[("study-a", "reader results")]
    assert status == 200
    assert "A-KEY-EXPLANATION" in body and "A-AI-NAME" in body
    assert seen[("study-a", "api results")][0] == 200
    assert "A-KEY-EXPLANATION" in seen[("study-a", "reader results case")][1]
    assert "A-KEY-EXPLANATION" in seen[("study-a", "reader results csv")][1]
    # Once the other study is over for the reader reading it blind, their results open too.
    blind = people["blind_elsewhere"]
    reader_finish(reader=blind, study=world["b"])
    assert _crawl(blind, world)[("study-a", "reader results")][0] == 200


def test_the_ai_is_left_out_unless_the_pi_allows_it(world, people):
    a = world["a"]
    a.results_show_ai = False
    a.save()
    client = APIClient()
    client.force_login(people["finished"])
    for url in (reverse("reader-results", args=[a.slug]), f"/api/v1/studies/{a.slug}/results/"):
        body = _body(client.get(url))
        assert "A-KEY-EXPLANATION" in body and "A-AI-NAME" not in body


def test_a_practice_set_refuses_a_reader_of_its_xrays_blind_and_closes_to_one_made_behind(
    world, people
):
    p = world["p"]
    for name in ("partway", "blind_elsewhere"):
        with pytest.raises(
            StudyError, match=r"blind as a reader in another study; in this practice"
        ):
            membership_add(study=p, user=people[name], role=Role.READER)
    # A membership made behind the rules' back (a shell): the practice pages stay closed.
    MembershipFactory(study=p, user=people["partway"], role=Role.READER)
    seen = _crawl(people["partway"], world)
    assert seen[("practice-p", "reader case")][0] == 403
    assert "practice set shows the key" in seen[("practice-p", "reader case")][1]
    assert seen[("practice-p", "api case")][0] == 403
    assert _leaks(seen) == []


def test_practice_answers_and_an_open_debrief_are_seeing_the_answers(world, people):
    """Someone who practised on an X-ray, or whose debrief of it is open, cannot read it blind."""
    a, p = world["a"], world["p"]
    practiser = UserFactory(username="practiser")
    membership_add(study=p, user=practiser, role=Role.READER)
    conflict = membership_conflict(user=practiser, study=a, role=Role.READER)
    assert conflict and "in a practice set or a debrief" in conflict
    b2 = _copy_study(a, "study-b2", "Another copy")
    conflict = membership_conflict(user=people["finished"], study=b2, role=Role.READER)
    assert conflict and "sees the answers of 4 of this study's X-rays" in conflict
    # With results never shown, a finished reader sees no answers and may read a copy.
    a.results_visibility = ResultsVisibility.NEVER
    a.save()
    assert membership_conflict(user=people["finished"], study=b2, role=Role.READER) is None


def test_closed_results_wait_for_everyone_or_the_pi_closing_reading(world, people):
    a = world["a"]
    a.results_visibility = ResultsVisibility.CLOSED
    a.save()
    client = APIClient()
    client.force_login(people["finished"])
    response = client.get(reverse("reader-results", args=[a.slug]))
    assert response.status_code == 403 and "reading is closed" in _body(response)
    study_reading_close(study=a, actor=world["pi"])
    assert client.get(reverse("reader-results", args=[a.slug])).status_code == 200
    # Closing ended the partway reader's blind reading: no more answers, and results open.
    partway = people["partway"]
    client.force_login(partway)
    item = a.items.order_by("position").last()
    put = client.put(f"/api/v1/studies/{a.slug}/cases/4/answer/", {"choice": "B"}, format="json")
    assert put.status_code == 409 and "closed this study's reading" in put.json()["detail"]
    assert not partway.answers.filter(item=item).exists()
    start = client.get(reverse("reader-start", args=[a.slug]))
    assert start.url == reverse("reader-review", args=[a.slug])
    review = _body(client.get(start.url))
    assert "data-reading-closed" in review and "data-final-submit" not in review
    assert "Reading closed by a PI" in _body(client.get(reverse("home")))
    assert client.get(reverse("reader-results", args=[a.slug])).status_code == 200
    assert Membership.objects.filter(study=a, user=partway).exists()
