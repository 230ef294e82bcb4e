"""The API's token endpoint, with the same input bounds as the sign-in page.

DRF's stock serializer accepts a username of any length and passes it to authenticate(); the
login-failure record (django-axes) then overflows its 255-character column on PostgreSQL and
the request fails with a 500. Found by the schema fuzzing on PostgreSQL.
"""

from __future__ import annotations

from django.contrib.auth import get_user_model
from rest_framework import serializers
from rest_framework.authtoken.serializers import AuthTokenSerializer
from rest_framework.authtoken.views import ObtainAuthToken

USERNAME_MAX = get_user_model()._meta.get_field("username").max_length
PASSWORD_MAX = 4096  # bounds the hashing work an anonymous request can cause


class BoundedAuthTokenSerializer(AuthTokenSerializer):
    username = serializers.CharField(label="Username", write_only=True, max_length=USERNAME_MAX)
    password = serializers.CharField(
        label="Password",
        style={"input_type": "password"},
        trim_whitespace=False,
        write_only=True,
        max_length=PASSWORD_MAX,
    )


class TokenView(ObtainAuthToken):
    """Exchange a username and password for an API token."""

    serializer_class = BoundedAuthTokenSerializer


obtain_auth_token = TokenView.as_view()
