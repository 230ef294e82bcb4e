"""The signed-in user's account: API token (when issued, when it expires, revoke it). Django's
own password views need nothing here: a new password ends the token however it is set
(readerstudy.platform.password_hooks)."""

from __future__ import annotations

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.http import HttpRequest, HttpResponse, JsonResponse
from django.middleware.csrf import get_token
from django.shortcuts import redirect, render
from django.views.decorators.cache import never_cache
from django.views.decorators.http import require_GET, require_POST
from rest_framework.authtoken.models import Token

from readerstudy.platform.accounts import (
    api_token_revoke,
    token_expired,
    token_expires_at,
)


@login_required
@require_GET
def account(request: HttpRequest) -> HttpResponse:
    token = Token.objects.filter(user=request.user).first()
    context = {
        "token": token,
        "expires": token_expires_at(token) if token else None,
        "expired": bool(token) and token_expired(token),
    }
    return render(request, "registration/account.html", context)


@login_required
@require_POST
def token_revoke(request: HttpRequest) -> HttpResponse:
    if api_token_revoke(user=request.user):
        messages.success(request, "Your API token was revoked; scripts using it will stop.")
    else:
        messages.info(request, "You had no API token.")
    return redirect("account")


@require_GET
@never_cache
def session(request: HttpRequest) -> JsonResponse:
    """Who is signed in, and a fresh CSRF token; 401 when nobody is. Expert and PI pages ask
    before they post a form (static/js/session-guard.js): an ended session is signed in
    again in place and the form is then sent, instead of ending on "This form has expired".
    Never a redirect to the login page (a script reads it)."""
    if not request.user.is_authenticated:
        return JsonResponse({"user": None}, status=401)
    return JsonResponse(
        {
            "user": request.user.pk,
            "username": request.user.get_username(),
            "csrf": get_token(request),
        }
    )
