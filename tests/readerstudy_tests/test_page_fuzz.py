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

from analysis.services import predictions_import
from annotation.services import answer_submit
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
