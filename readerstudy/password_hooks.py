"""A new password ends the user's API tokens, whichever way it was set.

Django calls `password_changed(password, user)` on every configured password validator
whenever a password set with `set_password` is saved: the password-change and reset pages,
the admin, `manage.py changepassword`, `seed_demo --password` and the shell alike. Hooking
that one documented point means no path can forget it.
"""

from __future__ import annotations

from readerstudy.services.accounts import user_password_changed


class EndApiTokensOnPasswordChange:
    """A password "validator" that validates nothing and acts on change."""

    def validate(self, password, user=None) -> None:
        return None

    def password_changed(self, password, user=None) -> None:
        if user is not None and user.pk is not None:
            user_password_changed(user=user)

    def get_help_text(self) -> str:
        # Shown with the password rules: worth knowing before a script stops working.
        return "A new password ends your API token; scripts need a new one."
