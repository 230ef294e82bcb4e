"""Expert and PI pages handle an ended session in place (issue 26, item 9): the session URL
their script asks before posting, the sign-in that answers it, and the page without script."""

import pytest
from django.test import Client
from django.urls import reverse

from tests.factories import PASSWORD

pytestmark = pytest.mark.django_db


def test_the_session_url_says_who_is_signed_in_with_a_fresh_token(client, pi):
    url = reverse("account-session")
    signed_out = client.get(url)
    assert signed_out.status_code == 401 and signed_out.json() == {"user": None}
    client.force_login(pi)
    data = client.get(url).json()
    assert data["user"] == pi.pk and data["username"] == pi.username and data["csrf"]
    assert "no-cache" in client.get(url)["Cache-Control"]


def test_signing_in_from_the_dialog_answers_with_the_session_and_its_token(pi):
    """What session-guard.js does: the login form posted with next = the session URL gives
    the new session's user and CSRF token, and that token posts the pending form."""
    client = Client(enforce_csrf_checks=True)
    login = client.get(reverse("login"))
    token = login.cookies["csrftoken"].value
    response = client.post(
        reverse("login"),
        {
            "username": pi.username,
            "password": PASSWORD,
            "next": reverse("account-session"),
            "csrfmiddlewaretoken": token,
        },
        follow=True,
        HTTP_ACCEPT="application/json",
    )
    data = response.json()
    assert data["user"] == pi.pk
    # The token the dialog hands to the page's forms is accepted for a POST.
    logout = client.post(reverse("logout"), {"csrfmiddlewaretoken": data["csrf"]})
    assert logout.status_code in (200, 302)


def test_expert_and_pi_pages_carry_the_in_place_sign_in(client, study, expert, pi):
    for user, url in (
        (expert, reverse("expert-queue", args=[study.slug])),
        (pi, reverse("pi-dashboard", args=[study.slug])),
        (pi, reverse("analysis", args=[study.slug])),
    ):
        client.force_login(user)
        html = client.get(url).content.decode()
        assert f'data-user="{user.pk}"' in html, url
        assert 'id="session-signin"' in html and "js/session-guard.js" in html, url
        assert f'data-session-url="{reverse("account-session")}"' in html


def test_an_expired_form_without_script_offers_to_sign_in_and_come_back(study):
    """No script (or it failed): the CSRF page of a signed-out user links to the sign-in,
    which brings them back to the page the form was on."""
    client = Client(enforce_csrf_checks=True)
    back = f"http://testserver{reverse('pi-dashboard', args=[study.slug])}"
    response = client.post(reverse("pi-members", args=[study.slug]), {}, HTTP_REFERER=back)
    html = response.content.decode()
    assert response.status_code == 403 and "Your session has ended" in html
    assert f"{reverse('login')}?next=http%3A//testserver/s/{study.slug}/dashboard/" in html
