"""Sign-in input with bounds: a username longer than any account's is refused, and what the
login-failure records (django-axes) store is bounded whichever way a sign-in arrives.

Django's AuthenticationForm sets the username's max_length after the field is built, so only
the HTML attribute changes and a 5,000-character name reaches authenticate(); django-axes
then would write it into its varchar(255) column and PostgreSQL fail the request with a 500.
The forms below check the length; `axes_username` bounds what axes records for
every entry point (the sign-in page, the admin's, the API token endpoint).
"""

from __future__ import annotations

from django.contrib.admin.forms import AdminAuthenticationForm
from django.contrib.auth import get_user_model
from django.contrib.auth.forms import AuthenticationForm
from django.core.validators import MaxLengthValidator

USERNAME_MAX = get_user_model()._meta.get_field("username").max_length
AXES_USERNAME_MAX = 255  # axes.models.AccessBase.username


def axes_username(request, credentials: dict | None = None) -> str | None:
    """AXES_USERNAME_CALLABLE: the username axes records, cut to what its column holds."""
    if credentials:
        name = credentials.get("username")
    else:
        name = getattr(request, "data", request.POST).get("username")
    return None if name is None else str(name)[:AXES_USERNAME_MAX]


class _BoundedUsername:
    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        field = self.fields["username"]
        field.max_length = USERNAME_MAX
        field.validators.append(MaxLengthValidator(USERNAME_MAX))


class BoundedAuthenticationForm(_BoundedUsername, AuthenticationForm):
    """The sign-in page's form, refusing names longer than any account's before any check."""


class BoundedAdminAuthenticationForm(_BoundedUsername, AdminAuthenticationForm):
    """The same for the admin's sign-in page."""
