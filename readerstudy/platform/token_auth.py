"""Token authentication that honours API_TOKEN_TTL_HOURS and the account's state (in its own
module: DRF imports the authentication classes while it loads its views, so this must not
import a view)."""

from __future__ import annotations

from rest_framework import exceptions
from rest_framework.authentication import TokenAuthentication

from readerstudy.platform.accounts import api_token_revoke, can_hold_token, token_expired


class ExpiringTokenAuthentication(TokenAuthentication):
    """DRF's token authentication, refusing tokens older than API_TOKEN_TTL_HOURS."""

    def authenticate_credentials(self, key):
        user, token = super().authenticate_credentials(key)
        if not can_hold_token(user):  # whatever path disabled the account, even update()
            api_token_revoke(user=user)
            raise exceptions.AuthenticationFailed("Password sign-in is disabled for this user.")
        if token_expired(token):
            raise exceptions.AuthenticationFailed(
                "Token expired; request a new one from /api/v1/auth/token/."
            )
        return user, token
