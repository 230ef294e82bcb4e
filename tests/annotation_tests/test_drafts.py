"""Drafts are removed at sign-out and expire (issue 25, finding 11): reader and expert drafts
stayed in localStorage with no expiry; the next person on a shared reading-room workstation
could read them in devtools. The stores' own rules: tests/js/drafts.test.js (make test-js)."""

import pytest
from django.urls import reverse

from readerstudy.models import ReaderStudy
from tests.factories import PASSWORD, UserFactory

pytestmark = pytest.mark.django_db


def sign_in(client, username):
    return client.post(reverse("login"), {"username": username, "password": PASSWORD})


def test_sign_out_tells_the_browser_to_clear_the_sites_storage(client, reader):
    client.force_login(reader)
    response = client.post(reverse("logout"))
    assert response.status_code == 302
    assert response["Clear-Site-Data"] == '"storage"'


def test_a_different_user_signing_in_clears_storage_the_same_user_keeps_it(client, db):
    UserFactory(username="ann")
    UserFactory(username="bob")
    first = sign_in(client, "ann")
    assert first.status_code == 302 and first["Clear-Site-Data"] == '"storage"'  # unknown before
    again = sign_in(client, "ann")  # e.g. her session ended mid-reading: her drafts stay
    assert again.status_code == 302 and "Clear-Site-Data" not in again
    other = sign_in(client, "bob")
    assert other.status_code == 302 and other["Clear-Site-Data"] == '"storage"'


def test_the_last_user_cookie_cannot_be_forged(client, db):
    UserFactory(username="ann")
    ann = UserFactory(username="carl")
    client.cookies["rs_last_user"] = str(ann.pk)  # unsigned: ignored
    assert sign_in(client, "carl")["Clear-Site-Data"] == '"storage"'


def test_draft_days_defaults_to_14_and_reaches_the_pages(client, study, reader, expert):
    assert ReaderStudy._meta.get_field("draft_days").default == 14
    study.draft_days = 3
    study.save()
    client.force_login(reader)
    assert 'data-draft-days="3"' in client.get(f"/s/{study.slug}/read/1/").content.decode()
    assert 'data-draft-days="3"' in client.get(f"/s/{study.slug}/read/review/").content.decode()
    client.force_login(expert)
    item = study.items.first()
    page = client.get(reverse("expert-review", args=[study.slug, item.id])).content.decode()
    assert 'data-draft-days="3"' in page


def test_the_admins_sign_out_clears_storage_too(client, db):
    boss = UserFactory(username="boss", is_staff=True, is_superuser=True)
    client.force_login(boss)
    response = client.post("/admin/logout/")
    assert response.status_code == 302 and response["Clear-Site-Data"] == '"storage"'
    assert client.get("/admin/").status_code == 302  # signed out
