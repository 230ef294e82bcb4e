"""An invitation dies the moment its account has a usable password or has signed in
(issue 38): a stale link, old or renewed, could otherwise set a new password and lock the
owner out, their API token revoked with it."""

from __future__ import annotations

import pytest
from django.contrib.auth import get_user_model
from django.contrib.messages import get_messages
from django.test import Client
from django.urls import reverse
from rest_framework.authtoken.models import Token

from readerstudy.models import Invitation
from readerstudy.platform.accounts import api_token_issue
from readerstudy.selectors import pending_invitations
from readerstudy.services.invitations import (
    InvitationError,
    invitation_accept,
    invitation_renew,
)
from tests.readerstudy_tests.test_invitations import NEW_PASSWORD, _invite, _links

pytestmark = pytest.mark.django_db
User = get_user_model()
OWNER_PASSWORD = "the-owners-own-passphrase-7"


@pytest.fixture
def pi_client(client, pi):
    client.force_login(pi)
    return client


@pytest.fixture
def invited(pi_client, study):
    """An invited person's link (a path) and their account, password-less."""
    (link,) = _links(_invite(pi_client, study, "newcomer"))
    return link.split("testserver", 1)[1], User.objects.get(username="newcomer")


def _owner_signs_in_with_a_password_set_elsewhere(user) -> Client:
    """The person got a password another way (an administrator, a reset) and signed in."""
    user.set_password(OWNER_PASSWORD)
    user.save()
    owner = Client()
    assert _signs_in(owner, user.username, OWNER_PASSWORD)
    return owner


def _signs_in(client: Client, username: str, password: str) -> bool:
    """Through the sign-in form, as a person does."""
    response = client.post(reverse("login"), {"username": username, "password": password})
    return response.status_code == 302 and client.session.get("_auth_user_id") is not None


def test_the_takeover_sequence_ends_with_the_owners_password_working_and_the_link_refused(
    pi_client, study, invited
):
    path, user = invited
    _owner_signs_in_with_a_password_set_elsewhere(user)
    token = api_token_issue(user=user)
    invitation = Invitation.objects.get(user=user)
    # The old link is closed, in words.
    stranger = Client()
    page = stranger.get(path)
    assert page.status_code == 410
    assert "no longer works" in page.content.decode() and "already has a password" in (
        page.content.decode()
    )
    taken = stranger.post(path, {"new_password1": NEW_PASSWORD, "new_password2": NEW_PASSWORD})
    assert taken.status_code == 410
    # The PI's "New link" is refused, in words, and makes no link.
    renewed = pi_client.post(
        reverse("pi-invitation", args=[study.slug, invitation.id]),
        {"action": "renew"},
        follow=True,
    )
    said = " ".join(str(m) for m in get_messages(renewed.wsgi_request))
    assert "No new link: newcomer already has a password" in said
    assert _links(renewed) == []
    assert Invitation.objects.filter(user=user).count() == 1
    # The owner's password still works, their token too; nobody else's does.
    user.refresh_from_db()
    assert user.check_password(OWNER_PASSWORD) and not user.check_password(NEW_PASSWORD)
    assert _signs_in(Client(), "newcomer", OWNER_PASSWORD)
    assert Token.objects.filter(key=token.key).exists()
    # And the PI's list no longer offers it as pending.
    assert pending_invitations(study) == []


def test_signed_in_without_a_usable_password_closes_the_link_too(invited):
    path, user = invited
    user.last_login = user.date_joined
    user.save(update_fields=["last_login"])
    assert Client().get(path).status_code == 410
    with pytest.raises(InvitationError, match="has already signed in"):
        invitation_renew(invitation=Invitation.objects.get(user=user), actor=None)


def test_a_password_set_after_the_page_opened_closes_the_link_at_accept(invited):
    """The page was opened while the link was good; an admin sets the password before the
    form is sent: the accept is refused, the admin's password stands."""
    path, user = invited
    token = path.rstrip("/").rsplit("/", 1)[1]
    user.set_password(OWNER_PASSWORD)
    user.save()
    with pytest.raises(InvitationError, match="already has a password"):
        invitation_accept(token=token, password=NEW_PASSWORD)
    user.refresh_from_db()
    assert user.check_password(OWNER_PASSWORD)
