"""Token authentication that honours API_TOKEN_TTL_HOURS (in its own module: DRF imports the
authentication classes while it loads its views, so this must not import a view)."""

from __future__ import annotations

from rest_framework import exceptions
from rest_framework.authentication import TokenAuthentication

from readerstudy.services.accounts import token_expired


class ExpiringTokenAuthentication(TokenAuthentication):
    """DRF's token authentication, refusing tokens older than API_TOKEN_TTL_HOURS."""

    def authenticate_credentials(self, key):
        user, token = super().authenticate_credentials(key)
        if token_expired(token):
            raise exceptions.AuthenticationFailed(
                "Token expired; request a new one from /api/v1/auth/token/."
            )
        return user, token
