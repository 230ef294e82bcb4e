"""API tokens: a password change ends them, their owner can revoke them, and they may expire.

Red-team finding: tokens survived a password change and never expired, and the token endpoint
handed back the same token after the password had changed.
"""

import io
import os
import subprocess
import sys
from datetime import timedelta

import pytest
from django.utils import timezone
from rest_framework.authtoken.models import Token
from rest_framework.test import APIClient

from tests.factories import PASSWORD, UserFactory
from tests.readerstudy_tests.test_settings import ROOT

pytestmark = pytest.mark.django_db
NEW_PASSWORD = "a-new-and-long-passphrase-42"


def obtain(username, password):
    response = APIClient().post("/api/v1/auth/token/", {"username": username, "password": password})
    assert response.status_code == 200, response.content
    return response.json()


def works(key):
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Token {key}")
    return client.get("/api/v1/studies/").status_code == 200


def test_changing_the_password_ends_the_token(client, reader):
    old = obtain("reader", PASSWORD)["token"]
    assert works(old)
    client.force_login(reader)
    response = client.post(
        "/accounts/password_change/",
        {"old_password": PASSWORD, "new_password1": NEW_PASSWORD, "new_password2": NEW_PASSWORD},
    )
    assert response.status_code == 302
    assert client.get("/").status_code == 200  # this session stays signed in
    assert not works(old)
    new = obtain("reader", NEW_PASSWORD)["token"]
    assert new != old and works(new)


def test_an_admin_setting_a_password_ends_the_token(client, reader):
    old = obtain("reader", PASSWORD)["token"]
    admin = UserFactory(username="boss", is_staff=True, is_superuser=True)
    client.force_login(admin)
    response = client.post(
        f"/admin/auth/user/{reader.pk}/password/",
        {"password1": NEW_PASSWORD, "password2": NEW_PASSWORD, "usable_password": "true"},
    )
    assert response.status_code == 302, response.content.decode()[:2000]
    assert not works(old)
    assert obtain("reader", NEW_PASSWORD)["token"] != old


def test_manage_py_changepassword_ends_the_token(reader, monkeypatch):
    from django.contrib.auth.management.commands import changepassword
    from django.core.management import call_command

    old = obtain("reader", PASSWORD)["token"]
    monkeypatch.setattr(changepassword.getpass, "getpass", lambda prompt="": NEW_PASSWORD)
    call_command("changepassword", "reader", stdout=io.StringIO())
    assert not works(old)
    assert obtain("reader", NEW_PASSWORD)["token"] != old


def test_a_password_set_in_the_shell_ends_the_token(reader):
    old = obtain("reader", PASSWORD)["token"]
    reader.set_password(NEW_PASSWORD)
    reader.save()
    assert not works(old)
    reader.first_name = "Ada"  # other saves leave the token alone
    reader.save()
    assert works(obtain("reader", NEW_PASSWORD)["token"])


def test_the_owner_revokes_the_token_through_the_api(reader):
    key = obtain("reader", PASSWORD)["token"]
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Token {key}")
    assert client.delete("/api/v1/auth/token/").status_code == 204
    assert not works(key)
    assert APIClient().delete("/api/v1/auth/token/").status_code in (401, 403)


def test_the_owner_revokes_the_token_on_the_account_page(client, reader):
    key = obtain("reader", PASSWORD)["token"]
    client.force_login(reader)
    page = client.get("/accounts/").content.decode()
    assert "Revoke API token" in page and key not in page  # the secret is never shown
    response = client.post("/accounts/token/revoke/", follow=True)
    assert "revoked" in response.content.decode()
    assert not works(key)
    assert "You have no API token" in client.get("/accounts/").content.decode()


def test_tokens_expire_after_the_configured_hours(reader, settings):
    settings.API_TOKEN_TTL_HOURS = 0
    issued = obtain("reader", PASSWORD)
    assert issued["expires"] is None
    Token.objects.filter(key=issued["token"]).update(created=timezone.now() - timedelta(days=90))
    assert works(issued["token"])  # 0: no expiry
    settings.API_TOKEN_TTL_HOURS = 24
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Token {issued['token']}")
    response = client.get("/api/v1/studies/")
    assert response.status_code in (401, 403) and "expired" in response.json()["detail"]
    renewed = obtain("reader", PASSWORD)
    assert renewed["token"] != issued["token"] and works(renewed["token"])
    assert renewed["expires"] is not None


@pytest.mark.parametrize(("value", "shown"), [("12", "12"), ("", "0"), ("-1", "at least 0")])
def test_the_ttl_setting_is_read_from_the_environment(value, shown):
    code = "import readerstudy.config.settings as s; print(s.API_TOKEN_TTL_HOURS)"
    env = {**os.environ, "DEBUG": "1", "ENV_FILE": os.devnull, "API_TOKEN_TTL_HOURS": value}
    result = subprocess.run(
        [sys.executable, "-c", code], cwd=ROOT, env=env, capture_output=True, text=True
    )
    assert shown in result.stdout + result.stderr


def test_disabling_password_sign_in_in_the_admin_ends_the_token(client, reader):
    """Issue 25, finding 4: "Password-based authentication: Disabled" (set_unusable_password)
    left the token working."""
    old = obtain("reader", PASSWORD)["token"]
    admin = UserFactory(username="boss", is_staff=True, is_superuser=True)
    client.force_login(admin)
    response = client.post(
        f"/admin/auth/user/{reader.pk}/password/",
        {"usable_password": "false", "unset-password": "1"},
    )
    assert response.status_code == 302, response.content.decode()[:2000]
    reader.refresh_from_db()
    assert not reader.has_usable_password()
    assert not works(old)
    assert not Token.objects.filter(user=reader).exists()


def test_set_unusable_password_in_the_shell_ends_the_token(reader):
    old = obtain("reader", PASSWORD)["token"]
    reader.set_unusable_password()
    reader.save()
    assert not works(old)


def test_deactivating_the_account_ends_the_token_for_good(reader):
    old = obtain("reader", PASSWORD)["token"]
    reader.is_active = False
    reader.save()
    assert not Token.objects.filter(user=reader).exists()
    reader.is_active = True  # reactivated later: the old token does not come back
    reader.save()
    assert not works(old)


def test_a_token_of_an_account_disabled_behind_the_models_back_is_refused(reader):
    """A bulk update skips save(); authentication checks the account's state itself."""
    old = obtain("reader", PASSWORD)["token"]
    type(reader).objects.filter(pk=reader.pk).update(password="!unusable")
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Token {old}")
    response = client.get("/api/v1/studies/")
    assert response.status_code in (401, 403)
    assert not Token.objects.filter(key=old).exists()
