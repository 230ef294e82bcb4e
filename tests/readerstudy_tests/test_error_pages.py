"""Error pages for every app: dark, in plain words, with a way back; JSON for the page's
script; and an ended session tells a script 401 instead of handing it the sign-in page."""

import pytest
from django.test import Client, RequestFactory
from django.urls import reverse

from readerstudy.platform import errors

pytestmark = pytest.mark.django_db


def test_404_page_is_the_dark_page_with_a_way_back(reader_client):
    response = reader_client.get("/no/such/page/", HTTP_REFERER="http://testserver/")
    html = response.content.decode()
    assert response.status_code == 404
    assert "css/app.css" in html and "Not found" in html
    assert 'href="http://testserver/"' in html and "Back to the previous page" in html
    assert f'href="{reverse("home")}"' in html and "Your studies" in html


def test_back_link_only_points_to_this_site(reader_client):
    html = reader_client.get("/no/such/page/", HTTP_REFERER="https://evil.example/x").content
    assert b"evil.example" not in html and b"Back to the previous page" not in html


def test_another_studys_case_is_a_404_page_not_a_white_one(client, outsider, study):
    client.force_login(outsider)
    response = client.get(reverse("reader-case", args=[study.slug, 1]))
    assert response.status_code == 404 and b"Your studies" in response.content


def test_403_and_400_pages_render_with_a_way_home():
    request = RequestFactory().get("/x/")
    for view, status, words in (
        (errors.permission_denied, 403, "No access"),
        (errors.bad_request, 400, "Bad request"),
    ):
        response = view(request, exception=Exception("x"))
        html = response.content.decode()
        assert response.status_code == status and words in html and "Your studies" in html


def test_500_page_needs_no_database_or_user():
    response = errors.server_error(RequestFactory().get("/x/"))
    html = response.content.decode()
    assert response.status_code == 500 and "Server error" in html
    assert "css/app.css" in html and "Your studies" in html


def test_script_requests_get_errors_as_json(reader_client):
    response = reader_client.get("/no/such/page/", HTTP_ACCEPT="application/json")
    assert response.status_code == 404 and "does not exist" in response.json()["error"]


def test_csrf_failure_is_a_page_for_people_and_json_for_the_script(reader, study):
    client = Client(enforce_csrf_checks=True)
    client.force_login(reader)
    url = reverse("reader-answer", args=[study.slug, 1])
    page = client.post(url, {"choice": "A"})
    assert page.status_code == 403 and b"This form has expired" in page.content
    assert b"Your studies" in page.content
    script = client.post(url, {"choice": "A"}, HTTP_ACCEPT="application/json")
    assert script.status_code == 403 and script["X-CSRF-Failed"] == "1"
    assert script.json()["csrf"] is True


@pytest.mark.parametrize(
    "headers", [{"HTTP_HX_REQUEST": "true"}, {"HTTP_ACCEPT": "application/json"}]
)
def test_ended_session_gives_a_script_401_not_the_sign_in_page(client, study, headers):
    for response in (
        client.get(reverse("reader-case", args=[study.slug, 1]), **headers),
        client.post(reverse("reader-answer", args=[study.slug, 1]), {"choice": "A"}, **headers),
        client.get(reverse("reader-session", args=[study.slug]), **headers),
    ):
        assert response.status_code == 401
        assert response["X-Login-Required"] == "1"
        assert "Sign in again" in response.json()["error"]


def test_ended_session_still_sends_a_person_to_the_sign_in_page(client, study):
    response = client.get(reverse("reader-case", args=[study.slug, 1]))
    assert response.status_code == 302 and response.url.startswith(reverse("login"))
