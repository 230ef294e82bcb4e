"""Fuzz the pages' query parameters: whatever a persona puts in the query string, a page
answers without a 5xx (a bad value is ignored or refused with a 4xx).

Hypothesis draws a page, the parameters the pages read (analysis settings, `download`, htmx
headers) and arbitrary ones, with values from the valid choices, numbers, long strings,
control characters and text; the profile (tests/conftest.py) makes CI draw the same each run.
"""

from urllib.parse import quote

import pytest
from django.test import Client
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from annotation.services import answer_submit
from readerstudy.predictions.services import predictions_import
from tests.profiles import examples

pytestmark = pytest.mark.fuzz

# The parameters the pages read, and some they might be tempted to.
PARAMS = ["missing", "scale", "excluded", "vrange", "ci", "download", "page", "next", "expert"]
CHOICES = ["wrong", "exclude", "answer", "correct", "drop", "keep", "-1,1", "0,1", "wilson"]
CHOICES += ["clopper-pearson", "1", "0", "", "true"]
VALUES = st.one_of(
    st.sampled_from(CHOICES),
    st.integers(min_value=-(2**70), max_value=2**70).map(str),
    st.text(max_size=40),
    st.text(alphabet=st.characters(codec="utf-8"), min_size=1, max_size=5).map(lambda s: s * 400),
    st.sampled_from(["%00", "\x00", "\ud7ff", "../../etc/passwd", "' OR 1=1 --", "<script>"]),
)
QUERY = st.lists(
    st.tuples(st.one_of(st.sampled_from(PARAMS), st.text(min_size=1, max_size=12)), VALUES),
    max_size=6,
)
PAGES = {
    "reader": [
        "/",
        "/s/{slug}/read/",
        "/s/{slug}/read/1/",
        "/s/{slug}/read/4/",
        "/s/{slug}/read/review/",
        "/s/{slug}/read/done/",
        "/accounts/",
    ],
    "expert": ["/", "/s/{slug}/expert/", "/s/{slug}/expert/{item}/", "/accounts/"],
    "pi": [
        "/",
        "/s/{slug}/dashboard/",
        "/s/{slug}/dashboard/reviews.csv",
        "/s/{slug}/dashboard/feedback.csv",
        "/s/{slug}/expert/",
        "/s/{slug}/expert/{item}/",
        "/s/{slug}/analysis/",
        "/s/{slug}/analysis/figure/accuracy.svg",
        "/s/{slug}/analysis/figure/kappa.png",
        "/s/{slug}/analysis/table/accuracy.csv",
        "/s/{slug}/analysis/table/responses.xlsx",
        "/studies/new/",
    ],
    "outsider": ["/", "/s/{slug}/read/", "/s/{slug}/dashboard/", "/s/{slug}/analysis/"],
}


@pytest.fixture
def lived_in(study, reader, expert, pi):
    """A study with an answer and a model, so the pages have something to show."""
    answer_submit(reader=reader, item=study.items.order_by("position").first(), choice="A")
    rows = "".join(f"{i.question.source_id},B\n" for i in study.items.all())
    predictions_import(
        dataset=study.dataset, model_name="gpt", content=f"question_id,prediction\n{rows}".encode()
    )
    return study


@pytest.mark.django_db
@pytest.mark.parametrize("persona", list(PAGES))
def test_no_page_answers_5xx_whatever_the_query(lived_in, request, persona):
    study = lived_in
    user = request.getfixturevalue(persona)
    if persona == "pi":
        from django.contrib.auth.models import Permission

        user.user_permissions.add(Permission.objects.get(codename="add_readerstudy"))
    client = Client(raise_request_exception=False)
    client.force_login(user)
    item = study.items.order_by("position").first().id
    pages = [p.replace("{slug}", study.slug).replace("{item}", str(item)) for p in PAGES[persona]]

    @given(
        page=st.sampled_from(pages),
        query=QUERY,
        htmx=st.booleans(),
        accept=st.sampled_from(["text/html", "*/*", "application/json", "image/png"]),
    )
    @settings(max_examples=examples(40), suppress_health_check=list(HealthCheck))
    def run(page, query, htmx, accept):
        headers = {"HTTP_ACCEPT": accept, **({"HTTP_HX_REQUEST": "true"} if htmx else {})}
        response = client.get(page, query, **headers)
        assert response.status_code < 500, (page, query, response.status_code)

    run()


@pytest.mark.django_db
def test_no_image_name_answers_5xx(client, reader):
    """The image view takes a path: NUL, over-long and odd names are 4xx, never 500."""
    client.raise_request_exception = False
    client.force_login(reader)

    @given(folder=st.sampled_from(["display", "thumbs", "other"]), name=VALUES)
    @settings(max_examples=examples(60), suppress_health_check=list(HealthCheck))
    def run(folder, name):
        response = client.get(f"/img/{folder}/aa/{quote(name)}.png")
        assert response.status_code in (400, 404), (name, response.status_code)

    run()


# Issue 25's shapes: nesting, unpaired surrogates (as JSON escapes), long and odd values.
SHAPES = st.one_of(
    VALUES,
    st.integers(min_value=1, max_value=30_000).map(lambda n: "[" * n),
    st.integers(min_value=1, max_value=300).map(lambda n: '{"a":' * n + "1" + "}" * n),
    st.sampled_from(['{"choice": "\\ud800"}', '"\\udfff"', '{"choice": "A"}', "[]", "null"]),
    st.text(min_size=200, max_size=6000),
)
FORMS = {
    "reader": [
        ("/s/{slug}/read/1/answer/", ["choice", "difficulty", "alignment", "comment", "base"]),
        ("/s/{slug}/read/review/", ["confirm"]),
    ],
    "anonymous": [("/accounts/login/", ["username", "password", "next"])],
    "expert": [("/s/{slug}/expert/{item}/", ["decision", "difficulty", "comment", "flags"])],
    "pi": [
        ("/s/{slug}/dashboard/members/", ["username", "role", "remove", "confirm"]),
        ("/s/{slug}/analysis/names/", ["name-reader:1", "name-model:gpt"]),
    ],
}


@pytest.mark.django_db
@pytest.mark.parametrize("persona", list(FORMS))
def test_no_form_post_answers_5xx_whatever_the_fields(lived_in, request, persona):
    """Every form field takes odd shapes (the reading page's `base` with 19,000 brackets was a
    500; a 5,000-character username a 500 on PostgreSQL)."""
    study = lived_in
    client = Client(raise_request_exception=False)
    if persona != "anonymous":
        client.force_login(request.getfixturevalue(persona))
    item = study.items.order_by("position").first().id
    forms = [
        (url.replace("{slug}", study.slug).replace("{item}", str(item)), fields)
        for url, fields in FORMS[persona]
    ]

    @given(form=st.sampled_from(forms), data=st.data(), script=st.booleans())
    @settings(max_examples=examples(40), suppress_health_check=list(HealthCheck))
    def run(form, data, script):
        url, fields = form
        values = {
            name: data.draw(SHAPES, label=name)
            for name in data.draw(st.lists(st.sampled_from(fields), unique=True), label="fields")
        }
        headers = {"HTTP_ACCEPT": "application/json"} if script else {}
        response = client.post(url, values, **headers)
        assert response.status_code < 500, (url, values, response.status_code)

    run()


@pytest.mark.django_db
@pytest.mark.parametrize("persona", [*PAGES, "anonymous"])
def test_options_on_every_page_is_never_a_5xx(lived_in, request, persona):
    """`OPTIONS /api/docs/` was a 500 for anyone."""
    study = lived_in
    client = Client(raise_request_exception=False)
    if persona != "anonymous":
        client.force_login(request.getfixturevalue(persona))
    item = study.items.order_by("position").first().id
    pages = [*PAGES.get(persona, PAGES["outsider"]), "/api/docs/", "/api/schema/", "/healthz"]
    pages += ["/accounts/login/", "/accounts/password_change/", "/admin/login/"]
    for page in pages:
        url = page.replace("{slug}", study.slug).replace("{item}", str(item))
        response = client.options(url)
        assert response.status_code < 500, (url, response.status_code)
