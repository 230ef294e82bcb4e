"""The API's token endpoint and token authentication, with expiry and revocation.

DRF's stock serializer accepts a username of any length and passes it to authenticate(); the
login-failure record (django-axes) then overflows its 255-character column on PostgreSQL and
the request fails with a 500. Found by the schema fuzzing on PostgreSQL.

Tokens expire API_TOKEN_TTL_HOURS after they were issued (0: never); a password change revokes
them (readerstudy.platform.accounts) and the user may revoke theirs (DELETE on the endpoint,
or the account page).
"""

from __future__ import annotations

from django.contrib.auth import get_user_model
from drf_spectacular.utils import extend_schema, inline_serializer
from rest_framework import serializers, status
from rest_framework.authtoken.serializers import AuthTokenSerializer
from rest_framework.authtoken.views import ObtainAuthToken
from rest_framework.permissions import AllowAny, IsAuthenticated
from rest_framework.response import Response
from rest_framework.settings import api_settings

from readerstudy.platform.accounts import (
    api_token_issue,
    api_token_revoke,
    token_expires_at,
    username_normalized,
)

USERNAME_MAX = get_user_model()._meta.get_field("username").max_length
PASSWORD_MAX = 4096  # bounds the hashing work an anonymous request can cause


class BoundedAuthTokenSerializer(AuthTokenSerializer):
    """Bounded, and the username read as the sign-in form reads it (NFKC, as accounts hold
    it: readerstudy.platform.accounts.username_normalized)."""

    username = serializers.CharField(label="Username", write_only=True, max_length=USERNAME_MAX)

    def validate_username(self, value: str) -> str:
        return username_normalized(value)

    password = serializers.CharField(
        label="Password",
        style={"input_type": "password"},
        trim_whitespace=False,
        write_only=True,
        max_length=PASSWORD_MAX,
    )


class TokenView(ObtainAuthToken):
    """POST: exchange a username and password for an API token. DELETE: revoke my token."""

    serializer_class = BoundedAuthTokenSerializer
    # ObtainAuthToken names DRF's own JSON parser; ours bounds the nesting.
    parser_classes = api_settings.DEFAULT_PARSER_CLASSES

    def get_permissions(self):
        return [IsAuthenticated()] if self.request.method == "DELETE" else [AllowAny()]

    @extend_schema(
        request=BoundedAuthTokenSerializer,
        responses=inline_serializer(
            "IssuedToken",
            {
                "token": serializers.CharField(),
                "expires": serializers.DateTimeField(allow_null=True),
            },
        ),
    )
    def post(self, request, *args, **kwargs):
        serializer = self.get_serializer(data=request.data)
        serializer.is_valid(raise_exception=True)
        token = api_token_issue(user=serializer.validated_data["user"])
        expires = token_expires_at(token)
        return Response({"token": token.key, "expires": expires.isoformat() if expires else None})

    @extend_schema(request=None, responses={204: None})
    def delete(self, request, *args, **kwargs):
        api_token_revoke(user=request.user)
        return Response(status=status.HTTP_204_NO_CONTENT)


obtain_auth_token = TokenView.as_view()
