"""Odd requests answer 4xx with a clear message, never 500 (the red team's list, issue 14)."""

import pytest
from django.contrib.auth.models import Permission
from rest_framework.test import APIClient

from readerstudy.models import Membership, ReaderStudy
from readerstudy.services.studies import StudyError, study_create

pytestmark = pytest.mark.django_db


def api_urls(study):
    base = f"/api/v1/studies/{study.slug}"
    return [
        "/api/v1/auth/token/",
        "/api/v1/studies/",
        f"{base}/cases/",
        f"{base}/cases/1/",
        f"{base}/cases/1/answer/",
        f"{base}/questions/",
        f"{base}/reviews/",
        f"{base}/predictions/",
        f"{base}/analysis/",
    ]


@pytest.mark.parametrize("persona", ["reader", "expert", "pi"])
def test_browsers_and_options_get_an_answer_not_a_500(study, request, persona):
    """DRF's browsable renderer and OPTIONS description asked our views for a queryset they do
    not have (AssertionError, 500). The API speaks JSON; OPTIONS describes the view."""
    client = APIClient()
    client.force_login(request.getfixturevalue(persona))
    for url in api_urls(study):
        html = client.get(url, HTTP_ACCEPT="text/html")
        assert html.status_code in (404, 405, 406) or html.status_code < 300, url
        if html.status_code == 406:
            assert "Accept header" in html.json()["detail"], url
        options = client.options(url, HTTP_ACCEPT="text/html")
        assert options.status_code in (200, 406), url
        options = client.options(url)
        assert options.status_code == 200 and "name" in options.json(), url


def test_the_api_lists_answer_html_browsers_with_json(study, reader):
    """A browser's usual Accept header still gets JSON."""
    client = APIClient()
    client.force_login(reader)
    response = client.get(
        "/api/v1/studies/", HTTP_ACCEPT="text/html,application/xhtml+xml,*/*;q=0.8"
    )
    assert response.status_code == 200 and response["Content-Type"] == "application/json"


def test_a_nul_in_the_url_or_query_is_refused(client, study, expert):
    client.force_login(expert)
    response = client.get(f"/api/v1/studies/{study.slug}/reviews/?expert=%00")
    assert response.status_code == 400 and "NUL" in response.json()["detail"]
    response = client.get(f"/s/{study.slug}/expert/?q=a%00b")
    assert response.status_code == 400 and b"NUL" in response.content
    response = client.get("/img/display/aa/%00.png")
    assert response.status_code == 400


@pytest.mark.parametrize(
    "path",
    [
        "/img/display/aa/" + "a" * 300 + ".png",
        "/img/display/" + "a" * 5000 + "/x.png",
        "/img/thumbs/aa/" + "é" * 200 + ".png",
    ],
)
def test_over_long_image_names_are_not_found(client, reader, path):
    client.force_login(reader)
    assert client.get(path).status_code == 404


@pytest.mark.parametrize("remove", ["abc", "9" * 40, "-1", ""])
def test_members_form_with_a_bad_id(client, study, pi, reader, remove):
    client.force_login(pi)
    response = client.post(f"/s/{study.slug}/dashboard/members/", {"remove": remove})
    assert response.status_code == 404
    assert Membership.objects.filter(study=study, user=reader).exists()


def test_a_seed_past_64_bits_is_a_form_error(client, study, pi):
    pi.user_permissions.add(Permission.objects.get(codename="add_readerstudy"))
    client.force_login(pi)
    form = {
        "dataset": study.dataset.id,
        "slug": "big-seed",
        "title": "Big seed",
        "sample": 4,
        "stratify": "none",
    }
    response = client.post("/studies/new/", {**form, "seed": str(2**63)})
    assert response.status_code == 200
    assert "less than or equal to" in response.content.decode()
    assert not ReaderStudy.objects.filter(slug="big-seed").exists()
    with pytest.raises(StudyError, match="seed must be between"):
        study_create(slug="big-seed", dataset=study.dataset, n=4, seed=2**63, stratify="none")
