"""Bringing people into a study from the browser (PI), and the one-time sign-in link (invitee).

The links are secrets: pages that show them are never cached and send the referrer only to
this site (with `no-referrer` the browser sends `Origin: null` and CSRF refuses the form).
"""

from __future__ import annotations

from urllib.parse import quote

from django.conf import settings
from django.contrib import messages
from django.contrib.auth import login
from django.contrib.auth.decorators import login_required
from django.contrib.auth.forms import SetPasswordForm
from django.http import HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, redirect, render, resolve_url
from django.urls import reverse
from django.views.decorators.cache import never_cache
from django.views.decorators.http import require_http_methods, require_POST

from readerstudy.forms import InviteForm
from readerstudy.models import Invitation, Role
from readerstudy.platform.browser_storage import signed_in
from readerstudy.platform.downloads import export_filename
from readerstudy.platform.spreadsheets import csv_text
from readerstudy.selectors import pending_invitations, study_for_user
from readerstudy.services.invitations import (
    InvitationError,
    invitation_accept,
    invitation_for_token,
    invitation_renew,
    invitation_revoke,
    people_invite,
    people_parse,
)

MODEL_BACKEND = "django.contrib.auth.backends.ModelBackend"


def _secret_page(response: HttpResponse) -> HttpResponse:
    response["Referrer-Policy"] = "same-origin"
    return response


def _link_maker(request: HttpRequest):
    return lambda token: request.build_absolute_uri(reverse("invitation-accept", args=[token]))


@never_cache
@login_required
@require_http_methods(["GET", "POST"])
def invite(request: HttpRequest, slug: str) -> HttpResponse:
    study = study_for_user(request.user, slug, [Role.PI])
    form = InviteForm(request.POST or None, request.FILES or None)
    problems = False  # lines of the list refused: nobody was added, the list is kept
    if request.method == "POST" and form.is_valid():
        upload = form.cleaned_data["people_file"]
        link = _link_maker(request)
        try:
            people = people_parse(
                text=form.cleaned_data["people"], csv_bytes=upload.read() if upload else None
            )
            added = people_invite(
                study=study,
                people=people,
                role=form.cleaned_data["role"],
                actor=request.user,
                link_for=link,
            )
        except InvitationError as exc:
            for problem in exc.problems:
                form.add_error(None, problem)
            problems = True
        else:
            rows = [(a, link(a.link_token) if a.link_token else "") for a in added]
            context = {
                "study": study,
                "rows": rows,
                "role": form.cleaned_data["role"],
                "added_count": sum(not a.already_member for a in added),
                "member_count": sum(a.already_member for a in added),
                "links": [row_link for _, row_link in rows if row_link],
                "links_text": "\n".join(row_link for _, row_link in rows if row_link),
                **_links_csv(study, rows),
            }
            return _secret_page(render(request, "readerstudy/invite_done.html", context))
    context = {
        "study": study,
        "form": form,
        "problems": problems,
        "ttl_days": settings.INVITATION_TTL_DAYS,
        "invitations": pending_invitations(study),
        "emailing": settings.INVITATION_EMAIL,
    }
    return render(request, "readerstudy/invite.html", context)


def _links_csv(study, rows) -> dict[str, str]:
    """The page's people and links as a CSV the browser saves without asking the server again
    (a data: URL): the links are secrets shown once, and the server keeps only their hashes."""
    table = [("name", "username", "email", "sign_in_link", "note")]
    for added, link in rows:
        note = (
            "already in the study"
            if added.already_member
            else "existing account: added"
            if added.existing
            else "e-mailed"
            if added.emailed
            else ""
        )
        table.append((added.name, added.username, added.email, link, note))
    return {
        "csv_href": "data:text/csv;charset=utf-8," + quote(csv_text(table)),
        "csv_name": export_filename(study.slug, "invitations", "csv"),
    }


def _invitation(study, invitation_id: int) -> Invitation:
    return get_object_or_404(
        Invitation.objects.select_related("user"), id=invitation_id, study=study
    )


@never_cache
@login_required
@require_POST
def invitation_action(request: HttpRequest, slug: str, invitation_id: int) -> HttpResponse:
    """Withdraw a link, or replace it with a new one (shown once, like the first)."""
    study = study_for_user(request.user, slug, [Role.PI])
    invitation = _invitation(study, invitation_id)
    if request.POST.get("action") == "renew":
        try:
            token = invitation_renew(invitation=invitation, actor=request.user)
        except InvitationError as exc:
            messages.error(request, str(exc))
            return redirect("pi-invite", slug=slug)
        link = _link_maker(request)(token)
        row = (invitation, link)
        context = {"study": study, "renewed": row, "role": invitation.role, "links": [link]}
        return _secret_page(render(request, "readerstudy/invite_done.html", context))
    invitation_revoke(invitation=invitation, actor=request.user)
    messages.success(request, f"The sign-in link for {invitation.user.username} no longer works.")
    return redirect("pi-invite", slug=slug)


@never_cache
@require_http_methods(["GET", "POST"])
def accept(request: HttpRequest, token: str) -> HttpResponse:
    """The invitee chooses a password; then they are signed in and land on their studies."""
    try:
        invitation = invitation_for_token(token)
    except InvitationError as exc:
        response = render(request, "registration/invitation_closed.html", {"reason": str(exc)})
        response.status_code = 410
        return _secret_page(response)
    form = SetPasswordForm(invitation.user, request.POST or None)
    if request.method == "POST" and form.is_valid():
        try:
            user = invitation_accept(token=token, password=form.cleaned_data["new_password1"])
        except InvitationError as exc:
            response = render(request, "registration/invitation_closed.html", {"reason": str(exc)})
            response.status_code = 410
            return _secret_page(response)
        login(request, user, backend=MODEL_BACKEND)
        messages.success(request, f"Welcome, {user.username}: your password is set.")
        return signed_in(request, redirect(resolve_url(settings.LOGIN_REDIRECT_URL)), user)
    context = {"form": form, "invitation": invitation}
    return _secret_page(render(request, "registration/invitation_accept.html", context))
