"""Schemathesis against our own OpenAPI schema, bounded, as an authenticated reader, PI and expert.

Each operation gets its own budget of valid and invalid requests; every response must be free
of 5xx and, where documented, match the schema. Path slugs are pinned to a real study (and case
numbers to a real case half the time) so requests reach the code behind the membership check.
Driven through Hypothesis directly, with the operation's own strategy.

Each generated request is also sent as a browser would ask for it (`Accept: text/html`, which
was DRF's browsable renderer) and as `OPTIONS` on the same URL: neither may answer 5xx. The
token is fetched afresh for each request, as the fuzzing also calls DELETE on the token.
"""

import pytest
import schemathesis
import werkzeug
from django.core.signals import request_finished, request_started
from django.db import close_old_connections
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from rest_framework.authtoken.models import Token
from schemathesis import GenerationMode
from schemathesis.checks import not_a_server_error
from schemathesis.specs.openapi.checks import (
    content_type_conformance,
    response_schema_conformance,
)

from readerstudy.config.wsgi import application
from tests.profiles import examples

pytestmark = pytest.mark.fuzz
CHECKS = [not_a_server_error, response_schema_conformance, content_type_conformance]
EXAMPLES_PER_OPERATION = 25


def operations():
    schema = schemathesis.openapi.from_wsgi("/api/schema/?format=json", application)
    for result in schema.include(path_regex="^/api/v1/").get_all_operations():
        yield result.ok()


def fuzz(study, user) -> dict[str, int]:
    calls: dict[str, int] = {}
    for operation in operations():
        pins = [{"slug": study.slug, "number": 1}, {"slug": study.slug}]
        strategy = st.one_of(
            *[
                operation.as_strategy(
                    mode,
                    path_parameters={k: v for k, v in pin.items() if f"{{{k}}}" in operation.path},
                )
                for mode in (GenerationMode.POSITIVE, GenerationMode.NEGATIVE)
                for pin in pins
            ]
        )
        _run(strategy, user, f"{operation.method.upper()} {operation.path}", calls, set())
    return calls


def _run(strategy, user, label: str, calls: dict[str, int], asked: set) -> None:
    @given(case=strategy)
    @settings(
        max_examples=examples(EXAMPLES_PER_OPERATION), suppress_health_check=list(HealthCheck)
    )
    def run(case):
        auth = {"Authorization": f"Token {Token.objects.get_or_create(user=user)[0].key}"}
        case.call_and_validate(headers=auth, checks=CHECKS)
        _as_browser_and_options(case, auth, asked)
        calls[label] = calls.get(label, 0) + 1

    run()


def _as_browser_and_options(case, auth: dict[str, str], asked: set) -> None:
    """OPTIONS reads no body: it is sent once per URL and Accept, not again for every body
    drawn for that URL (three quarters of the fuzzing's requests were such repeats)."""
    client = werkzeug.Client(application)
    variants = [(case.method, "text/html"), ("OPTIONS", "application/json"), ("OPTIONS", "*/*")]
    for method, accept in variants:
        request = case.operation.schema.transport.serialize_case(
            case, headers={**auth, "Accept": accept}
        )
        request["method"] = method
        if method == "OPTIONS":
            url = (request.get("path"), str(request.get("query_string")), accept)
            if url in asked:
                continue
            asked.add(url)
        response = client.open(**request)
        assert response.status_code < 500, (method, accept, request["path"], response.status)


@pytest.fixture(autouse=True)
def _public_schema(settings):
    """The schema is read without signing in (API_DOCS_PUBLIC; sign-in is the default)."""
    settings.API_DOCS_PUBLIC = True


@pytest.fixture(autouse=True)
def _keep_the_test_connection():
    """Calls go straight to the WSGI app, so do what Django's test client does: keep the
    request signals from closing the connection that holds the test's transaction (on
    PostgreSQL it would be closed after the first request)."""
    request_started.disconnect(close_old_connections)
    request_finished.disconnect(close_old_connections)
    yield
    request_started.connect(close_old_connections)
    request_finished.connect(close_old_connections)


# Issue 25's body shapes, sent raw to every write endpoint: deep nesting, unpaired surrogate
# escapes, invalid JSON, long values. The schema's generator would not make them.
RAW_BODIES = st.one_of(
    st.integers(min_value=1, max_value=100_000).map(lambda n: "[" * n),
    st.integers(min_value=1, max_value=2_000).map(lambda n: '{"a":' * n + "1" + "}" * n),
    st.sampled_from(
        ['{"choice": "\\ud800"}', '{"username": "\\udfff", "password": "x"}', "NaN", "{", ""]
    ),
    st.text(max_size=200).map(lambda t: '{"choice": ' + repr(t) + "}"),
    st.integers(min_value=256, max_value=10_000).map(
        lambda n: '{"username": "' + "u" * n + '", "password": "x"}'
    ),
    # Issue 38: an integer past Python's 4,300-digit conversion limit, anywhere.
    st.tuples(
        st.sampled_from(["username", "time_ms", "item_id", "choice"]), st.integers(31, 6000)
    ).map(lambda kn: f'{{"{kn[0]}": -{"9" * kn[1]}, "password": "x"}}'),
)


@pytest.mark.parametrize("persona", ["anonymous", "reader"])
def test_raw_json_bodies_never_answer_5xx(study, request, persona):
    client = werkzeug.Client(application)
    headers = {"Content-Type": "application/json"}
    if persona != "anonymous":
        user = request.getfixturevalue(persona)
        headers["Authorization"] = f"Token {Token.objects.get_or_create(user=user)[0].key}"
    targets = [
        ("POST", "/api/v1/auth/token/"),
        ("PUT", f"/api/v1/studies/{study.slug}/cases/1/answer/"),
        ("POST", f"/api/v1/studies/{study.slug}/reviews/"),
    ]

    @given(target=st.sampled_from(targets), body=RAW_BODIES)
    @settings(max_examples=examples(60), suppress_health_check=list(HealthCheck))
    def run(target, body):
        method, path = target
        response = client.open(
            path, method=method, data=body.encode("utf-8", "surrogatepass"), headers=headers
        )
        assert response.status_code < 500, (method, path, body[:80], response.status)
        response.get_data()  # the body is encodable: the error never echoes what it cannot

    run()


@pytest.mark.parametrize("persona", ["reader", "pi", "expert"])
def test_api_fuzz(study, request, persona):
    calls = fuzz(study, request.getfixturevalue(persona))
    assert len(calls) >= 10  # every /api/v1 operation was exercised
    assert all(n >= 5 for n in calls.values()), calls
