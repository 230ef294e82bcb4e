"""A new password ends the user's API tokens, whichever way it was set.

Django calls `password_changed(password, user)` on every configured password validator
whenever a password set with `set_password` is saved: the password-change and reset pages,
the admin, `manage.py changepassword`, `seed_demo --password` and the shell alike. Hooking
that one documented point means no path can forget it.

`set_unusable_password()` and deactivation do not set a password, so that hook misses them:
`end_tokens_of_disabled_accounts` runs after every save of a user instead, and the
token authentication checks the account's state as well, for changes that skip save().
"""

from __future__ import annotations

from readerstudy.platform.accounts import user_password_changed, user_saved


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


def end_tokens_of_disabled_accounts(sender, instance, **kwargs) -> None:
    """post_save of the user model (connected in ReaderStudyConfig.ready)."""
    user_saved(user=instance)
