"""Hardening: deploy checks, security headers, CSP, login throttling."""

import os
import subprocess
import sys
from pathlib import Path

import pytest
from rest_framework.test import APIClient

from tests.factories import PASSWORD, UserFactory

ROOT = Path(__file__).resolve().parents[2]
pytestmark = pytest.mark.django_db


def test_check_deploy_is_clean_with_production_settings():
    """The environment of the README's production recipe."""
    env = {
        **os.environ,
        "DEBUG": "0",
        "SECRET_KEY": "k3y-" + "x7Qz9" * 12,
        "ALLOWED_HOSTS": "reader.example.org",
        "SECURE_SSL_REDIRECT": "1",
        "SECURE_HSTS_SECONDS": "31536000",
        "SECURE_HSTS_INCLUDE_SUBDOMAINS": "1",
        "SECURE_HSTS_PRELOAD": "1",
    }
    env.pop("DJANGO_ALLOW_ASYNC_UNSAFE", None)  # set by the browser tests' conftest only
    result = subprocess.run(
        [sys.executable, "manage.py", "check", "--deploy", "--fail-level", "WARNING"],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
    )
    assert result.returncode == 0, result.stdout + result.stderr
    assert "no issues" in result.stdout


def test_security_headers_and_csp(client, reader):
    client.force_login(reader)
    response = client.get("/")
    assert response["X-Frame-Options"] == "DENY"
    assert response["X-Content-Type-Options"] == "nosniff"
    csp = response["Content-Security-Policy"]
    directives = dict(d.strip().split(" ", 1) for d in csp.split(";") if d.strip())
    assert directives["script-src"] == "'self'"
    assert "unsafe-inline" not in directives["script-src"]
    assert directives["frame-ancestors"] == "'none'"
    assert directives["object-src"] == "'none'"


def test_pages_have_no_inline_scripts(client, reader, study):
    client.force_login(reader)
    for url in ["/", f"/s/{study.slug}/read/1/", "/accounts/login/", "/api/docs/"]:
        html = client.get(url).content.decode()
        for chunk in html.split("<script")[1:]:
            tag = chunk.split(">", 1)[0]
            body = chunk.split(">", 1)[1].split("</script>", 1)[0]
            assert "src=" in tag and not body.strip(), (url, tag)


def test_session_and_csrf_cookies_are_secure(settings):
    assert settings.SESSION_COOKIE_SECURE and settings.CSRF_COOKIE_SECURE


def test_failed_logins_lock_the_account(client, reader, settings):
    for _ in range(settings.AXES_FAILURE_LIMIT - 1):
        response = client.post("/accounts/login/", {"username": "reader", "password": "wrong"})
        assert response.status_code == 200  # the form again, with an error
    response = client.post("/accounts/login/", {"username": "reader", "password": "wrong"})
    assert response.status_code == 429  # the limit-th failure locks
    response = client.post("/accounts/login/", {"username": "reader", "password": PASSWORD})
    assert response.status_code == 429
    assert "Too many failed sign-ins" in response.content.decode()
    assert "_auth_user_id" not in client.session


def test_successful_login_still_works_below_the_limit(client, reader):
    client.post("/accounts/login/", {"username": "reader", "password": "wrong"})
    response = client.post("/accounts/login/", {"username": "reader", "password": PASSWORD})
    assert response.status_code == 302 and response.url == "/"


def test_token_endpoint_is_throttled_too(reader, settings):
    api = APIClient()
    for _ in range(settings.AXES_FAILURE_LIMIT):
        api.post("/api/v1/auth/token/", {"username": "reader", "password": "wrong"})
    response = api.post("/api/v1/auth/token/", {"username": "reader", "password": PASSWORD})
    assert response.status_code in (400, 403, 429)
    assert "token" not in response.json()


def test_a_locked_account_does_not_lock_out_colleagues_on_the_same_address(
    client, reader, settings
):
    """Residents in one hospital share a NAT address; one person's typos must not lock all."""
    colleague = UserFactory(username="colleague")
    for _ in range(settings.AXES_FAILURE_LIMIT):
        client.post("/accounts/login/", {"username": "reader", "password": "wrong"})
    response = client.post(
        "/accounts/login/", {"username": colleague.username, "password": PASSWORD}
    )
    assert response.status_code == 302 and response.url == "/"
