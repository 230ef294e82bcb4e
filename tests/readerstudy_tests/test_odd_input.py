"""Odd input, round 3 (issue 25): each shape the red team turned into a 500 is now a 4xx that
names the problem, and never echoes input that cannot be encoded."""

import json

import pytest
from axes.models import AccessAttempt, AccessFailureLog
from rest_framework.test import APIClient

pytestmark = pytest.mark.django_db

DEEP = "[" * 5000


def api(user=None) -> APIClient:
    client = APIClient()
    if user is not None:
        client.force_authenticate(user)
    return client


def test_deeply_nested_json_to_the_token_endpoint_is_a_400(db):
    """Finding 6: `"[" * 5000` to the anonymous token endpoint was a RecursionError, a 500."""
    response = api().post("/api/v1/auth/token/", DEEP, content_type="application/json")
    assert response.status_code == 400
    assert "nested" in response.json()["detail"]


@pytest.mark.parametrize("depth", [70, 5000, 100_000])
def test_deeply_nested_json_to_the_answer_endpoint_is_a_400(study, reader, depth):
    body = '{"choice": "A", "comment": ' + "[" * depth + "]" * depth + "}"
    response = api(reader).put(
        f"/api/v1/studies/{study.slug}/cases/1/answer/", body, content_type="application/json"
    )
    assert response.status_code == 400
    assert "nested" in response.json()["detail"]


@pytest.mark.parametrize(
    "body",
    ['"' + '\\"' * 300_000, '{"a": "' + '\\"' * 300_000, '"' * 600_001, "[" * 600_000],
)
def test_the_depth_check_is_linear_on_hostile_strings(study, reader, body):
    """A first version re-scanned from every escaped quote: `"\\"\\"...` took minutes."""
    import time

    started = time.perf_counter()
    response = api(reader).put(
        f"/api/v1/studies/{study.slug}/cases/1/answer/", body, content_type="application/json"
    )
    assert response.status_code == 400
    assert time.perf_counter() - started < 10


def test_ordinary_nesting_still_parses(study, reader):
    """The limit is far above anything the API's own shapes need."""
    body = json.dumps({"choice": "A", "comment": "[[not json, just text]]"})
    response = api(reader).put(
        f"/api/v1/studies/{study.slug}/cases/1/answer/", body, content_type="application/json"
    )
    assert response.status_code in (200, 201), response.content


def test_brackets_inside_strings_do_not_count_as_nesting(study, reader):
    body = json.dumps({"choice": "A", "comment": "[" * 5000 + '\\"{' * 100})
    response = api(reader).put(
        f"/api/v1/studies/{study.slug}/cases/1/answer/", body, content_type="application/json"
    )
    assert response.status_code in (200, 201), response.content


@pytest.mark.parametrize("depth", [70, 19_000])
def test_deeply_nested_base_field_on_the_reader_page_is_a_form_error(client, study, reader, depth):
    """Finding 6: the reading page's `base` field (`"[" * 19000`) was a 500."""
    client.force_login(reader)
    response = client.post(f"/s/{study.slug}/read/1/answer/", {"choice": "A", "base": "[" * depth})
    assert response.status_code == 422
    assert b"malformed" in response.content
    assert not reader.answers.exists()


@pytest.mark.parametrize(
    "raw", ['{"choice": "\\ud800"}', '{"choice": "A", "comment": "x\\udfffy"}', '["\\udbff"]']
)
def test_an_unpaired_surrogate_is_a_400_that_does_not_echo_it(study, reader, raw):
    """Finding 7: the 400 for a choice of "\\ud800" echoed it, and could not be encoded (500)."""
    response = api(reader).put(
        f"/api/v1/studies/{study.slug}/cases/1/answer/", raw, content_type="application/json"
    )
    assert response.status_code == 400
    detail = response.json()["detail"]
    assert "surrogate" in detail
    assert "\ud800" not in response.content.decode("utf-8")
    assert not reader.answers.exists()


def test_a_paired_surrogate_is_ordinary_text(study, reader):
    raw = '{"choice": "A", "comment": "\\ud83d\\ude00"}'
    response = api(reader).put(
        f"/api/v1/studies/{study.slug}/cases/1/answer/", raw, content_type="application/json"
    )
    assert response.status_code in (200, 201), response.content
    assert reader.answers.get().comment == "\U0001f600"


def test_error_messages_quote_at_most_a_short_prefix_of_a_value(study, reader):
    response = api(reader).put(
        f"/api/v1/studies/{study.slug}/cases/1/answer/",
        {"choice": "Z" * 50_000},
        format="json",
    )
    assert response.status_code == 400
    assert len(response.content) < 1000


def test_a_five_thousand_character_username_is_a_form_error(client, db):
    """Finding 8: django-axes wrote the username into varchar(255); on PostgreSQL a 500."""
    response = client.post("/accounts/login/", {"username": "u" * 5000, "password": "x"})
    assert response.status_code == 200
    assert b"at most" in response.content or b"characters" in response.content
    for record in [*AccessAttempt.objects.all(), *AccessFailureLog.objects.all()]:
        assert len(record.username) <= 255


def test_a_long_username_still_counts_as_a_failure_of_that_prefix(client, db, settings):
    """Bounding the name must not open a way around the lockout: a name over the limit is
    refused before any password check, so there is nothing to guess."""
    for _ in range(settings.AXES_FAILURE_LIMIT + 2):
        response = client.post("/accounts/login/", {"username": "v" * 300, "password": "x"})
        assert response.status_code == 200


@pytest.mark.parametrize("url", ["/api/docs/", "/api/schema/", "/accounts/login/", "/healthz"])
def test_options_is_never_a_500(client, url):
    """Finding 9: `OPTIONS /api/docs/` was a 500 for anyone."""
    assert client.options(url).status_code < 500
