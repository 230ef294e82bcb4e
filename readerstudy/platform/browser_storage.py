"""Sign-out and sign-in clear what this site kept in the browser, so the next person at a
shared reading-room workstation finds no drafts.

Reader and expert drafts and the reader's outbox live in localStorage (static/js). The server
cannot read them, but it can tell the browser to drop them: `Clear-Site-Data: "storage"` on
the sign-out response, and on a sign-in by a user other than the one who last signed in in
this browser (a signed cookie remembers who that was). The same user signing in again, say
after their session ended mid-reading, keeps their drafts.
"""

from __future__ import annotations

from django.contrib.auth import views as auth_views
from django.http import HttpRequest, HttpResponse

from readerstudy.platform.login_limits import BoundedAuthenticationForm

CLEAR_STORAGE = '"storage"'
LAST_USER_COOKIE = "rs_last_user"
# The cookie's signing salt, not the module's path: changing it makes every browser's
# remembered sign-in unreadable, which clears a returning user's drafts once.
LAST_USER_SALT = "readerstudy.browser_storage"


def signed_in(request: HttpRequest, response: HttpResponse, user) -> HttpResponse:
    """After any sign-in (the sign-in page, an accepted invitation): clear the browser's
    storage unless `user` is who signed in last here; remember them."""
    previous = request.get_signed_cookie(LAST_USER_COOKIE, default=None, salt=LAST_USER_SALT)
    if previous != str(user.pk):
        response["Clear-Site-Data"] = CLEAR_STORAGE
    response.set_signed_cookie(
        LAST_USER_COOKIE,
        str(user.pk),
        salt=LAST_USER_SALT,
        max_age=365 * 24 * 3600,
        httponly=True,
        samesite="Lax",
        secure=request.is_secure(),
    )
    return response


class SignInView(auth_views.LoginView):
    authentication_form = BoundedAuthenticationForm

    def form_valid(self, form) -> HttpResponse:
        response = super().form_valid(form)
        return signed_in(self.request, response, form.get_user())


class SignOutView(auth_views.LogoutView):
    def post(self, request, *args, **kwargs) -> HttpResponse:
        response = super().post(request, *args, **kwargs)
        response["Clear-Site-Data"] = CLEAR_STORAGE
        return response
