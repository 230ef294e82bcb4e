"""Bringing people into a study from the browser: bulk invite, one-time sign-in links."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.contrib.auth import get_user_model
from django.core import mail
from django.urls import reverse
from django.utils import timezone

from readerstudy.models import AuditEvent, Invitation, Membership, Role
from readerstudy.services.invitations import InvitationError, people_parse
from tests.factories import UserFactory, build_study

pytestmark = pytest.mark.django_db
User = get_user_model()
NEW_PASSWORD = "a-long-fresh-passphrase-42"


@pytest.fixture
def pi_client(client, pi):
    client.force_login(pi)
    return client


def _invite(client, study, people="", role=Role.READER, **extra):
    return client.post(
        reverse("pi-invite", args=[study.slug]), {"people": people, "role": role, **extra}
    )


def _links(response) -> list[str]:
    html = response.content.decode()
    marker = "/accounts/invitation/"
    links = []
    for part in html.split('data-link="')[1:]:
        value = part.split('"', 1)[0]
        if marker in value:
            links.append(value)
    return links


def test_pasted_list_creates_accounts_memberships_and_links(pi_client, study):
    response = _invite(
        pi_client, study, "newresident\njane.doe@hospital.org\nbob, bob@hospital.org"
    )
    assert response.status_code == 200
    assert "no-store" in response["Cache-Control"]
    assert response["Referrer-Policy"] == "same-origin"
    readers = set(
        Membership.objects.filter(study=study, role=Role.READER).values_list(
            "user__username", flat=True
        )
    )
    assert {"newresident", "jane.doe", "bob"} <= readers
    for name in ("newresident", "jane.doe", "bob"):
        assert not User.objects.get(username=name).has_usable_password()
    assert len(_links(response)) == 3
    assert AuditEvent.objects.filter(study=study, action="account.create").count() == 3
    # Only hashes are stored: no link secret appears in the database.
    secrets = [link.rstrip("/").rsplit("/", 1)[1] for link in _links(response)]
    stored = set(Invitation.objects.values_list("token_hash", flat=True))
    assert not stored & set(secrets)


def test_existing_account_is_added_directly_without_a_link(pi_client, study):
    UserFactory(username="senior")
    response = _invite(pi_client, study, "senior", role=Role.EXPERT)
    assert Membership.objects.filter(study=study, user__username="senior", role="expert").exists()
    assert _links(response) == []
    assert "Already had an account" in response.content.decode()
    assert not Invitation.objects.exists()


def test_someone_already_in_the_study_is_not_counted_as_added(pi_client, study):
    """The walk-through of issue 26 pasted an existing reader: the page said "3 people added as
    readers" and "Already had an account: added to the study" for someone who already was."""
    UserFactory(username="senior")
    reader = UserFactory(username="inside")
    Membership.objects.create(study=study, user=reader, role=Role.READER)
    audit_before = AuditEvent.objects.filter(action="membership.add").count()
    text = _invite(pi_client, study, "senior\ninside\nnewcomer").content.decode()
    assert "2 people added as readers" in text
    assert "Already a reader of this study: nothing changed." in text
    assert "Already had an account: added to the study." in text  # senior
    assert AuditEvent.objects.filter(action="membership.add").count() == audit_before + 2
    expert = UserFactory(username="colleague")
    Membership.objects.create(study=study, user=expert, role=Role.EXPERT)
    text = _invite(pi_client, study, "colleague", role=Role.EXPERT).content.decode()
    assert "0 people added as experts · 1 already an expert" in text
    assert "Already an expert of this study: nothing changed." in text


def test_a_bad_line_is_quoted_as_typed():
    with pytest.raises(InvitationError) as caught:
        people_parse(text="good1\nbad line, not@an@address")
    assert "Line 2" in str(caught.value) and "'bad line, not@an@address'" in str(caught.value)


def test_one_bad_line_adds_nobody_and_names_the_line(pi_client, study):
    response = _invite(pi_client, study, "good1\nnot a@valid@address\ngood2")
    text = response.content.decode()
    assert "Nobody was added" in text and "Line 2" in text
    assert not User.objects.filter(username__in=["good1", "good2"]).exists()
    assert not Invitation.objects.exists()


def test_duplicates_and_hostile_values_are_refused_with_short_messages(study):
    with pytest.raises(InvitationError, match="already on line 1"):
        people_parse(text="alice\nALICE")
    with pytest.raises(InvitationError) as caught:
        people_parse(text="x" * 5000)
    assert len(str(caught.value)) < 300
    with pytest.raises(InvitationError, match="at least one"):
        people_parse(text="\n  \n# a comment\n")


def test_csv_upload(pi_client, study):
    from django.core.files.uploadedfile import SimpleUploadedFile

    upload = SimpleUploadedFile(
        "people.csv", b"username,email\ncsvone,one@x.org\n,two@x.org\n", content_type="text/csv"
    )
    response = pi_client.post(
        reverse("pi-invite", args=[study.slug]),
        {"people": "", "role": Role.READER, "people_file": upload},
    )
    assert response.status_code == 200
    assert set(
        User.objects.filter(email__endswith="@x.org").values_list("username", flat=True)
    ) == {
        "csvone",
        "two",
    }


def test_link_sets_password_signs_in_and_works_once(client, pi_client, study):
    response = _invite(pi_client, study, "newresident")
    (link,) = _links(response)
    path = link.split("testserver", 1)[1]
    client.logout()
    page = client.get(path)
    assert page.status_code == 200 and "newresident" in page.content.decode()
    done = client.post(path, {"new_password1": NEW_PASSWORD, "new_password2": NEW_PASSWORD})
    assert done.status_code == 302
    assert client.get(reverse("home")).status_code == 200
    assert User.objects.get(username="newresident").check_password(NEW_PASSWORD)
    client.logout()
    again = client.get(path)
    assert again.status_code == 410 and "already used" in again.content.decode()
    signed_in = client.post(reverse("login"), {"username": "newresident", "password": NEW_PASSWORD})
    assert signed_in.status_code == 302


def test_weak_password_is_refused_and_the_link_stays_open(client, pi_client, study):
    (link,) = _links(_invite(pi_client, study, "newresident"))
    path = link.split("testserver", 1)[1]
    client.logout()
    refused = client.post(path, {"new_password1": "123", "new_password2": "123"})
    assert refused.status_code == 200 and "too short" in refused.content.decode()
    assert client.get(path).status_code == 200


def test_expired_revoked_and_unknown_links_are_closed(client, pi_client, study):
    (link,) = _links(_invite(pi_client, study, "late"))
    path = link.split("testserver", 1)[1]
    Invitation.objects.update(expires_at=timezone.now() - timedelta(seconds=1))
    client.logout()
    assert "expired" in client.get(path).content.decode()
    assert client.get("/accounts/invitation/nonsense/").status_code == 410


def test_pi_withdraws_and_renews_a_link(client, pi_client, study):
    (old,) = _links(_invite(pi_client, study, "lost"))
    invitation = Invitation.objects.get()
    renewed = pi_client.post(
        reverse("pi-invitation", args=[study.slug, invitation.id]), {"action": "renew"}
    )
    (new,) = _links(renewed)
    assert new != old
    anonymous = client.__class__()
    assert anonymous.get(old.split("testserver", 1)[1]).status_code == 410
    assert anonymous.get(new.split("testserver", 1)[1]).status_code == 200
    fresh = Invitation.objects.get(revoked_at=None)
    pi_client.post(reverse("pi-invitation", args=[study.slug, fresh.id]), {"action": "revoke"})
    assert "withdrawn" in anonymous.get(new.split("testserver", 1)[1]).content.decode()


def test_emailed_when_email_is_configured(
    pi_client, study, settings, django_capture_on_commit_callbacks
):
    settings.INVITATION_EMAIL = True
    settings.EMAIL_BACKEND = "django.core.mail.backends.locmem.EmailBackend"
    with django_capture_on_commit_callbacks(execute=True):
        response = _invite(pi_client, study, "mailme, mailme@hospital.org\nnomail")
    assert "e-mailed to mailme@hospital.org" in response.content.decode()
    assert len(mail.outbox) == 1
    assert mail.outbox[0].to == ["mailme@hospital.org"]
    assert "/accounts/invitation/" in mail.outbox[0].body


@pytest.mark.parametrize("role", [Role.READER, Role.EXPERT, None])
def test_only_the_studys_pi_can_invite(client, study, role):
    user = UserFactory(username=f"who-{role}")
    if role:
        Membership.objects.create(study=study, user=user, role=role)
    client.force_login(user)
    assert client.get(reverse("pi-invite", args=[study.slug])).status_code == 404
    assert _invite(client, study, "intruder").status_code == 404
    assert not User.objects.filter(username="intruder").exists()


def test_a_pi_cannot_touch_another_studys_invitation(pi_client, study, pi):
    other = build_study(1)
    Membership.objects.create(study=other, user=UserFactory(username="otherpi"), role=Role.PI)
    other_pi = User.objects.get(username="otherpi")
    from django.test import Client

    other_client = Client()
    other_client.force_login(other_pi)
    _invite(other_client, other, "theirs")
    theirs = Invitation.objects.get(user__username="theirs")
    response = pi_client.post(
        reverse("pi-invitation", args=[study.slug, theirs.id]), {"action": "revoke"}
    )
    assert response.status_code == 404
    theirs.refresh_from_db()
    assert theirs.revoked_at is None


def test_invite_as_pi_is_not_offered(pi_client, study):
    response = _invite(pi_client, study, "boss", role=Role.PI)
    assert response.status_code == 200
    assert not User.objects.filter(username="boss").exists()
