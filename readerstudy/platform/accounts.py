"""Account writes: API tokens and what a new password must end.

Called from the token endpoint and the account page; `user_password_changed` runs whenever a
password is saved, from a password-validator hook (readerstudy.platform.password_hooks).
"""

from __future__ import annotations

from datetime import datetime, timedelta

from django.conf import settings
from django.contrib.auth import get_user_model
from django.db import transaction
from django.utils import timezone
from rest_framework.authtoken.models import Token


def username_normalized(name: str) -> str:
    """A username as an account holds it and as sign-in reads it: stripped and NFKC-normalised
    (Django's sign-in form normalises what is typed, so an account named with full-width
    letters could not sign in with its password and looked like its ASCII twin)."""
    return get_user_model().normalize_username(name.strip())


def token_expires_at(token: Token) -> datetime | None:
    hours = settings.API_TOKEN_TTL_HOURS
    return token.created + timedelta(hours=hours) if hours else None


def token_expired(token: Token) -> bool:
    expires = token_expires_at(token)
    return expires is not None and expires <= timezone.now()


@transaction.atomic
def api_token_issue(*, user) -> Token:
    """The user's token, or a fresh one when there is none or it has expired."""
    token = Token.objects.select_for_update().filter(user=user).first()
    if token is not None and token_expired(token):
        token.delete()
        token = None
    return token or Token.objects.create(user=user)


@transaction.atomic
def api_token_revoke(*, user) -> bool:
    deleted, _ = Token.objects.filter(user=user).delete()
    return bool(deleted)


def user_password_changed(*, user) -> None:
    """Whoever knew the old password may hold a token taken with it: a new password ends it,
    and the token endpoint then hands out a new one."""
    api_token_revoke(user=user)


def can_hold_token(user) -> bool:
    """A token stands for the password it was taken with: only an active account that still
    signs in with a password may use one (disabling password sign-in in the admin,
    `set_unusable_password()`, ends the token too)."""
    return user.is_active and user.has_usable_password()


def user_saved(*, user) -> None:
    """An account saved inactive or without a usable password loses its tokens for good, so
    reactivating it later does not bring an old token back."""
    if user.pk is not None and not can_hold_token(user):
        api_token_revoke(user=user)
