"""The review page's evidence panel (served by analysis, loaded by annotation's page through
SITE_LINKS), the queue's decision column, and ties shown as ties."""

import re

import pytest
from django.urls import reverse

from analysis.triage import question_evidence, triage_queue
from annotation.reviews import review_submit
from annotation.services import answer_submit, reader_finish
from readerstudy.models import Role
from tests.analysis_tests.conftest import models_answer, readers
from tests.factories import MembershipFactory, UserFactory, build_study

pytestmark = pytest.mark.django_db


def evidence_url(study, item):
    return reverse("expert-evidence", args=[study.slug, item.id])


def test_review_page_loads_the_panel_from_the_analysis_layer(client, mis_keyed):
    study, target, expert = mis_keyed
    client.force_login(expert)
    html = client.get(reverse("expert-review", args=[study.slug, target.id])).content.decode()
    assert f'hx-get="{evidence_url(study, target)}"' in html
    assert f'href="{evidence_url(study, target)}"' in html  # without JavaScript: a link


def test_panel_shows_shares_key_vs_most_chosen_rank_and_who_chose_what(client, mis_keyed):
    study, target, expert = mis_keyed
    client.force_login(expert)
    html = client.get(evidence_url(study, target), HTTP_HX_REQUEST="true").content.decode()
    assert "<html" not in html  # the partial only, for htmx to swap in
    assert "rank 1 of 6 in the queue" in html
    rows = html.split("<tbody>")[1].split("</tbody>")[0].split("</tr>")
    assert "<strong>A</strong> key" in rows[0] and "0 of 6" in rows[0]
    assert "<strong>B</strong> · most chosen" in rows[1] and "6 of 6" in rows[1]
    assert "100 %" in rows[1]
    assert "Reader 1, Reader 2, Reader 3, m1, m2, m3" in rows[1]
    assert "Wrong <strong>B</strong>: 6 of 6" in html
    assert "6 of 6 raters chose B, 0 the key A" in html
    response = client.get(evidence_url(study, target))
    assert "HX-Request" in response["Vary"]
    full = response.content.decode()
    assert "<html" in full and reverse("expert-review", args=[study.slug, target.id]) in full


def test_a_pi_sees_the_panel_too(client, mis_keyed):
    study, target, _ = mis_keyed
    pi = UserFactory(username="pi")
    MembershipFactory(study=study, user=pi, role=Role.PI)
    client.force_login(pi)
    assert "rank 1 of 6" in client.get(evidence_url(study, target)).content.decode()


def test_readers_other_studies_experts_and_outsiders_never_reach_the_panel(client, mis_keyed):
    study, target, _ = mis_keyed
    reader = study.memberships.filter(role=Role.READER).first().user
    other_study = build_study(1)
    other_expert = UserFactory(username="other_expert")
    MembershipFactory(study=other_study, user=other_expert, role=Role.EXPERT)
    outsider = UserFactory(username="outsider")
    for person in (reader, other_expert, outsider):
        client.force_login(person)
        response = client.get(evidence_url(study, target), HTTP_HX_REQUEST="true")
        assert response.status_code in (403, 404), person.username
        assert b"Reader 1" not in response.content
    # An expert of another study cannot reach this study's question through their own study.
    client.force_login(other_expert)
    assert client.get(evidence_url(other_study, target)).status_code == 404
    client.logout()
    response = client.get(evidence_url(study, target))
    assert response.status_code == 302 and "/accounts/login/" in response.url


def test_queue_shows_each_reviewed_questions_decision_and_flags(client, mis_keyed):
    study, target, expert = mis_keyed
    other = study.items.exclude(pk=target.pk).order_by("position").first()
    review_submit(
        expert=expert,
        item=target,
        flags=["image_mismatch"],
        ratings={"image_alignment": 1},
        difficulty="medium",
        decision="reject",
    )
    review_submit(
        expert=expert,
        item=other,
        flags=[],
        ratings={name: 4 for name in ("clinical_quality", "explanation_clarity")}
        | {"factual_correctness": 4, "image_alignment": 4},
        difficulty="easy",
        decision="accept",
    )
    client.force_login(expert)
    html = client.get(reverse("expert-queue", args=[study.slug])).content.decode()
    body = html.split("<tbody>")[1]
    rows = {
        item.question.source_id: next(r for r in body.split("</tr>") if item.question.text in r)
        for item in (target, other)
    }
    assert "Reject</span>" in rows[target.question.source_id]
    assert "Image does not match the question" in rows[target.question.source_id]
    assert "Accept</span>" in rows[other.question.source_id]
    assert "reviewed</span>" not in body


@pytest.fixture
def tied(db):
    """Two questions keyed A: on the first, three raters chose A and three C (a tie with the
    key); on the second three chose B and three C, nobody the key (two wrong options tied)."""
    study = build_study(8)
    items = [i for i in study.items.select_related("question").order_by("position")]
    keyed_a = [i for i in items if i.question.correct == "A"]
    with_key, wrong_pair = keyed_a[0], keyed_a[1]
    people = readers(study, 3)
    picks = {with_key.id: ["A", "C", "C"], wrong_pair.id: ["B", "B", "B"]}
    for item in items:
        for n, person in enumerate(people):
            choice = picks.get(item.id, [item.question.correct] * 3)[n]
            answer_submit(reader=person, item=item, choice=choice)
    by_source = {i.question.source_id: i.question.correct for i in items}
    for name, letter in (("m1", "A"), ("m2", "C"), ("m3", "A")):
        letters = {with_key.question.source_id: letter, wrong_pair.question.source_id: "C"}
        models_answer(study, {**by_source, **letters}, names=(name,))
    expert = UserFactory(username="expert")
    MembershipFactory(study=study, user=expert, role=Role.EXPERT)
    return study, with_key, wrong_pair, expert


def test_ties_are_shown_as_ties_in_queue_and_panel(client, tied):
    study, with_key, wrong_pair, expert = tied
    row = question_evidence(study, expert, with_key.id)
    assert dict(row.counts) == {"A": 3, "B": 0, "C": 3, "D": 0}
    assert row.most_chosen == ("A", "C") and row.tie and row.wrong_tied == ("C",)
    pair = question_evidence(study, expert, wrong_pair.id)
    assert dict(pair.counts) == {"A": 0, "B": 3, "C": 3, "D": 0}
    assert pair.wrong_tied == ("B", "C") and pair.most_chosen == ("B", "C")
    assert pair.reasons[0] == "3 of 6 raters each chose B, C (tie), 0 the key A"

    client.force_login(expert)
    queue = client.get(reverse("expert-queue", args=[study.slug])).content.decode()
    body = queue.split("<tbody>")[1]
    key_row = next(r for r in body.split("</tr>") if with_key.question.text in r)
    pair_row = next(r for r in body.split("</tr>") if wrong_pair.question.text in r)
    assert "Most chosen: tie: A (key), C" in key_row
    assert "Wrong <strong>B, C</strong> (tie): 3 of 6 each" in pair_row
    assert "Most chosen: tie: B, C" in pair_row
    panel = client.get(evidence_url(study, wrong_pair), HTTP_HX_REQUEST="true").content
    panel = panel.decode()
    assert "Most chosen: tie: B, C" in panel
    assert panel.count(" · tie") == 2 and "most chosen</td>" not in panel
    assert next(r.item for r in triage_queue(study, expert)) == wrong_pair


def test_a_reader_who_is_also_an_expert_never_sees_who_chose_what(client, mis_keyed):
    """Blinding: someone who reads in the study sees the counts, never whose answers (nor a
    model's by name), on the panel and on the queue."""
    study, target, _ = mis_keyed
    both = study.memberships.filter(role=Role.READER).first().user
    reader_finish(reader=both, study=study)  # final and locked: the expert pages open
    MembershipFactory(study=study, user=both, role=Role.EXPERT)
    client.force_login(both)
    for response in (
        client.get(evidence_url(study, target), HTTP_HX_REQUEST="true"),
        client.get(evidence_url(study, target)),
        client.get(reverse("expert-queue", args=[study.slug])),
    ):
        html = response.content.decode()
        assert response.status_code == 200
        assert "6 of 6" in html  # the evidence itself
        for name in ("Reader 1", "Reader 2", "m1", "m2"):
            # as a word: the page's random CSRF token may hold "m1"
            assert not re.search(rf"\b{re.escape(name)}\b", html), name
        assert "Who chose what" not in html and "Who (readers" not in html


def test_an_item_of_another_study_or_none_at_all_is_404(client, mis_keyed):
    study, _, expert = mis_keyed
    other_study = build_study(2)
    foreign = other_study.items.first()
    client.force_login(expert)
    for item_id in (foreign.id, 999_999, 0):
        url = reverse("expert-evidence", args=[study.slug, item_id])
        response = client.get(url, HTTP_HX_REQUEST="true")
        assert response.status_code == 404, item_id
        assert foreign.question.text not in response.content.decode()
    assert client.get(f"/s/{study.slug}/expert/-1/evidence/").status_code == 404
    assert client.get(f"/s/{study.slug}/expert/abc/evidence/").status_code == 404
