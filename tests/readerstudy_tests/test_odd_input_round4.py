"""Odd input, round 4 (issue 38): the shapes that were still a 500, now a 4xx in words."""

from __future__ import annotations

import json

import pytest
from rest_framework.test import APIClient

from readerstudy.platform.json_input import MAX_INT_DIGITS
from readerstudy.rexvqa import RexvqaError, load_json
from tests.factories import PASSWORD

pytestmark = pytest.mark.django_db
HUGE = "9" * 5000  # past Python's 4,300-digit conversion limit


def api(user=None) -> APIClient:
    client = APIClient()
    if user is not None:
        client.force_authenticate(user)
    return client


def _says_digits(response) -> None:
    assert response.status_code == 400, response.content[:300]
    assert f"an integer of 5000 digits; at most {MAX_INT_DIGITS}" in response.json()["detail"]


def test_a_huge_integer_to_the_anonymous_token_endpoint_is_a_400(db):
    body = f'{{"username": {HUGE}, "password": "x"}}'
    _says_digits(api().post("/api/v1/auth/token/", body, content_type="application/json"))


def test_a_huge_integer_in_an_answer_is_a_400(study, reader):
    body = f'{{"choice": "A", "time_ms": {HUGE}}}'
    response = api(reader).put(
        f"/api/v1/studies/{study.slug}/cases/1/answer/", body, content_type="application/json"
    )
    _says_digits(response)
    assert not reader.answers.exists()


def test_a_huge_integer_in_a_review_is_a_400(study, expert):
    item = study.items.first()
    body = f'{{"item_id": {item.id}, "decision": "accept", "clinical_quality": -{HUGE}}}'
    response = api(expert).post(
        f"/api/v1/studies/{study.slug}/reviews/", body, content_type="application/json"
    )
    _says_digits(response)


def test_a_huge_integer_in_the_reading_pages_base_field_is_a_form_error(client, study, reader):
    client.force_login(reader)
    response = client.post(
        f"/s/{study.slug}/read/1/answer/", {"choice": "A", "base": f'{{"choice": {HUGE}}}'}
    )
    assert response.status_code == 422 and b"malformed" in response.content
    assert not reader.answers.exists()


def test_an_ordinary_integer_still_reads(study, reader):
    body = json.dumps({"choice": "A", "time_ms": 12_345})
    response = api(reader).put(
        f"/api/v1/studies/{study.slug}/cases/1/answer/", body, content_type="application/json"
    )
    assert response.status_code in (200, 201), response.content
    assert reader.answers.get().time_ms == 12_345


def test_a_rexvqa_file_with_a_huge_integer_is_refused_in_words(tmp_path):
    """The importer's own JSON reading (a command or the new-study page): a ValueError that
    was no JSONDecodeError escaped as a traceback."""
    path = tmp_path / "rexvqa.json"
    path.write_text(f'{{"q1": {{"PatientAge": {HUGE}}}}}')
    with pytest.raises(RexvqaError, match="5000 digits"):
        load_json(path)


def test_the_aid_message_is_true_to_usable(db):
    """The API said "no usable answer" beside a usable one."""
    from readerstudy.design.services import study_design_set
    from tests.design_tests.conftest import add_model, add_readers, crossover
    from tests.factories import build_study

    study = build_study(3)
    add_model(study, failed={0})
    reader = add_readers(study, 1)[0]
    study_design_set(study=study, design=crossover(arms="aided"))
    cases = api(reader).get(f"/api/v1/studies/{study.slug}/cases/").json()["results"]
    aids = [case["aid"] for case in cases]
    assert {(aid["usable"], aid["message"]) for aid in aids} == {
        (True, ""),
        (False, "The AI gave no usable answer for this question."),
    }


FULL_WIDTH_PI1 = "\uff50\uff49\uff11"  # "pi1" in full-width letters


def test_usernames_are_normalised_at_creation_as_at_sign_in(client, study, pi):
    """An invited full-width "pi1" was a new account that looked like pi1 and could sign in
    by its link only; now it is pi1 (the sign-in form reads it so too)."""
    from django.contrib.auth import get_user_model
    from django.urls import reverse

    from tests.factories import UserFactory

    users = get_user_model().objects
    pi1 = UserFactory(username="pi1")
    client.force_login(pi)
    client.post(
        reverse("pi-invite", args=[study.slug]),
        {"people": f"{FULL_WIDTH_PI1}\n\uff4e\uff45\uff57\uff42\uff49\uff45", "role": "reader"},
    )
    assert not users.filter(username=FULL_WIDTH_PI1).exists()
    assert study.memberships.filter(user=pi1, role="reader").exists()
    assert users.filter(username="newbie").exists()
    # The members form and the API's token endpoint read a name as the sign-in form does.
    ex1 = UserFactory(username="ex1")
    client.post(
        reverse("pi-members", args=[study.slug]),
        {"username": "\uff45\uff58\uff11", "role": "expert"},
    )
    assert study.memberships.filter(user=ex1, role="expert").exists()
    token = api().post(
        "/api/v1/auth/token/", {"username": FULL_WIDTH_PI1, "password": PASSWORD}, format="json"
    )
    assert token.status_code == 200 and token.json()["token"]


def test_the_schema_reads_an_api_token(reader, settings):
    """A script holds a token, not a session: the schema refused it (API_DOCS_PUBLIC off)."""
    from readerstudy.platform.accounts import api_token_issue

    assert settings.API_DOCS_PUBLIC is False
    token = api_token_issue(user=reader)
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Token {token.key}")
    schema = client.get("/api/schema/")
    assert schema.status_code == 200 and b"/api/v1/studies/" in schema.content
    client.credentials()
    refused = client.get("/api/schema/")
    assert refused.status_code == 401 and b"/api/v1/" not in refused.content
    assert refused["WWW-Authenticate"] == "Token"
    client.credentials(HTTP_AUTHORIZATION="Token not-a-token")
    assert client.get("/api/schema/").status_code == 401
