"""The review form's proposed correction (without JavaScript), the study's Corrections page
and a proposal's page, and the API: what each role sees and may do."""

from __future__ import annotations

import pytest
from django.urls import reverse
from rest_framework.test import APIClient

from annotation.correction_models import Correction
from annotation.models import ExpertReview
from readerstudy.models import AuditEvent
from readerstudy.question_versions import QuestionVersion
from readerstudy.vocabulary import ProposalStatus
from tests.corrections_tests.conftest import RATINGS, propose, review

pytestmark = pytest.mark.django_db


def form(item, decision="revise", **fix) -> dict:
    q = item.question
    data = {
        "decision": decision,
        "difficulty": "medium",
        **{name: "none" for name in RATINGS},
        "fix-base": "1",
        "fix-correct": q.correct,
        "fix-text": q.text,
        "fix-option_a": q.option_a,
        "fix-option_b": q.option_b,
        "fix-option_c": q.option_c,
        "fix-option_d": q.option_d,
        "fix-explanation": q.explanation,
    }
    data.update({f"fix-{name}": value for name, value in fix.items()})
    return data


def test_revise_with_a_new_key_proposes_it_with_the_review(client, item, expert):
    client.force_login(expert)
    url = reverse("expert-review", args=[item.study.slug, item.id])
    response = client.post(url, form(item, correct="B", error_type="wrong_key", note="why"))
    assert response.status_code == 302
    proposal = Correction.objects.get(item=item)
    assert proposal.changes == {"correct": "B", "accepted": "B"} and proposal.note == "why"
    assert ExpertReview.objects.get(item=item).decision == "revise"
    page = client.get(url).content.decode()
    assert "Wrong key: Key: A → B" in page and "Open" in page


def test_revise_without_a_change_is_a_review_alone_and_a_half_correction_is_refused(
    client, item, expert
):
    client.force_login(expert)
    url = reverse("expert-review", args=[item.study.slug, item.id])
    assert client.post(url, form(item)).status_code == 302
    assert not Correction.objects.exists() and ExpertReview.objects.count() == 1
    page = client.post(url, form(item, correct="C")).content.decode()  # no error type
    assert "Choose the error type" in page
    assert not Correction.objects.exists()
    page = client.post(url, form(item, error_type="wrong_key")).content.decode()
    assert "proposes no change" in page
    # A correction offered with "Accept" is not proposed.
    client.post(url, form(item, decision="accept", correct="C", error_type="wrong_key"))
    assert not Correction.objects.exists()


def test_the_corrections_page_and_a_proposals_page_by_role(client, item, experts, pi):
    first, second, _ = experts
    proposal = propose(first, item, correct="B", note="Report says B")
    corrections = reverse("corrections", args=[item.study.slug])
    page = reverse("correction", args=[item.study.slug, proposal.pk])
    client.force_login(second)  # has not reviewed the question: told one is open, not what
    html = client.get(corrections).content.decode()
    assert "1 open proposal by colleagues" in html and "Report says B" not in html
    assert client.get(page).status_code == 404
    review(second, item)
    html = client.get(page).content.decode()
    assert "Report says B" in html and "Agree <kbd>a</kbd>" in html
    client.post(page, {"choice": "yes"})
    client.force_login(pi)  # not an expert: sees every proposal, and decides
    html = client.get(page).content.decode()
    assert "Accept as the key" in html and "Agree: expert, expert2" in html
    client.post(page, {"choice": "yes"})
    proposal.refresh_from_db()
    assert proposal.status == ProposalStatus.ACCEPTED and proposal.version.number == 2
    html = client.get(corrections).content.decode()
    assert "a PI&#x27;s decision (pi)" in html and "Key: <del>A</del> → <ins>B</ins>" in html
    # Reversing it from the question's page: at once under the PI's rule.
    client.post(reverse("version-reverse", args=[item.study.slug, proposal.version.pk]))
    assert QuestionVersion.objects.filter(question=item.question).count() == 3


def test_the_rule_form_is_the_pis(client, study, experts, pi):
    url = reverse("corrections", args=[study.slug])
    client.force_login(experts[0])
    assert client.post(url, {"rule": "experts", "votes": "2"}).status_code == 404
    client.force_login(pi)
    response = client.post(url, {"rule": "experts", "votes": "5"})
    assert "between 1 and the study&#x27;s 3 experts" in response.content.decode()
    client.post(url, {"rule": "experts", "votes": "2"})
    study.refresh_from_db()
    assert (study.adjudication, study.adjudication_votes) == ("experts", 2)
    assert AuditEvent.objects.filter(action="adjudication.set", actor=pi).exists()


def test_the_api_proposes_lists_by_the_review_rule_votes_and_decides(item, experts, pi):
    first, second, _ = experts
    api = APIClient()
    api.force_login(first)
    review(first, item)
    url = f"/api/v1/studies/{item.study.slug}/corrections/"
    body = {"item_id": item.id, "base_version": 1, "error_type": "several_valid", "accepted": ["C"]}
    created = api.post(url, body, format="json")
    assert created.status_code == 201, created.json()
    assert created.json()["changes"] == {"accepted": "AC"}
    stale = api.post(url, {**body, "base_version": 2}, format="json")
    assert stale.status_code == 400 and "corrected since" in stale.json()["detail"]
    api.force_login(second)
    listed = api.get(url).json()
    assert listed["count"] == 0 and listed["rule"] == "a PI's decision"
    pk = created.json()["id"]
    assert api.post(f"{url}{pk}/vote/", {"agree": True}, format="json").status_code == 404
    review(second, item)
    assert api.get(url).json()["count"] == 1
    voted = api.post(f"{url}{pk}/vote/", {"agree": True}, format="json")
    assert voted.status_code == 200 and len(voted.json()["votes"]) == 2
    api.force_login(pi)
    decided = api.post(f"{url}{pk}/decision/", {"agree": True}, format="json")
    assert decided.status_code == 200 and decided.json()["version"] == 2
    current = api.get(f"/api/v1/studies/{item.study.slug}/questions/").json()["results"][0]
    assert current["current"]["accepted"] == ["A", "C"] and current["correct"] == "A"
