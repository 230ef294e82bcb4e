"""Error pages for every app: dark like the rest, in plain words, with a way back.

A script (the reading page's fetches) gets the same message as JSON so it can show it where
the reader is looking instead of swapping a whole page into the case.

The error pages know no domain rule, so the domain raises one of these two when a refusal
has words for the person: `RefusedInWords` (a 403 whose message the page shows, a
blinding conflict) and `TryLater` (a 429 with Retry-After, background work refused for now,
answered by readerstudy.platform.middleware.TryLaterMiddleware).
"""

from __future__ import annotations

from django.core.exceptions import PermissionDenied
from django.http import HttpRequest, HttpResponse, JsonResponse
from django.template import loader
from django.utils.http import url_has_allowed_host_and_scheme

from readerstudy.platform.http import is_script

MESSAGES = {
    400: "The request could not be understood.",
    403: "You do not have access to this page.",
    404: "This page does not exist, or it is not part of your studies.",
    500: "Something went wrong on the server. Nothing you saved is lost; please try again.",
}
CSRF_FAILED = (
    "This form was too old to accept (the page was open a long time, or you signed in again "
    "elsewhere). Reload the page and submit again."
)


class RefusedInWords(PermissionDenied):
    """A 403 whose message is written for the person refused; the error page shows it."""


class TryLater(Exception):
    """Refused for now, in words for the person who asked, with the seconds after which asking
    again may succeed (a 429's Retry-After)."""

    def __init__(self, message: str, retry_after: int):
        super().__init__(message)
        self.retry_after = max(1, int(retry_after))


def _back_url(request: HttpRequest) -> str:
    """The page the reader came from, if it is one of ours; else nothing."""
    referer = request.headers.get("Referer", "")
    if referer and url_has_allowed_host_and_scheme(
        referer, allowed_hosts={request.get_host()}, require_https=request.is_secure()
    ):
        return referer
    return ""


def page(request: HttpRequest, status: int, template: str, message: str) -> HttpResponse:
    """An error page (JSON for a script) saying `message`, never cached."""
    if is_script(request):
        response = JsonResponse({"error": message}, status=status)
    else:
        context = {"status": status, "message": message, "back_url": _back_url(request)}
        response = HttpResponse(loader.render_to_string(template, context, request), status=status)
    response["Cache-Control"] = "no-store"
    return response


def bad_request(request: HttpRequest, exception=None) -> HttpResponse:
    return page(request, 400, "400.html", MESSAGES[400])


def permission_denied(request: HttpRequest, exception=None) -> HttpResponse:
    """A refusal in words says why (a blinding conflict: the person belongs to both studies it
    names); any other says only that access is denied."""
    if isinstance(exception, RefusedInWords):
        return page(request, 403, "403.html", str(exception))
    return page(request, 403, "403.html", MESSAGES[403])


def page_not_found(request: HttpRequest, exception=None) -> HttpResponse:
    return page(request, 404, "404.html", MESSAGES[404])


def server_error(request: HttpRequest) -> HttpResponse:
    """No request context here: the database or a context processor may be what failed."""
    if is_script(request):
        return JsonResponse({"error": MESSAGES[500]}, status=500)
    html = loader.get_template("500.html").render({"status": 500, "message": MESSAGES[500]})
    return HttpResponse(html, status=500)


def csrf_failure(request: HttpRequest, reason: str = "") -> HttpResponse:
    """Settings' CSRF_FAILURE_VIEW. The page's script recognises `X-CSRF-Failed` and fetches a
    fresh token before sending the answer again."""
    if is_script(request):
        response = JsonResponse({"error": CSRF_FAILED, "csrf": True}, status=403)
    else:
        context = {
            "status": 403,
            "message": CSRF_FAILED,
            "back_url": _back_url(request),
            # Without the page's script (session-guard.js signs in in place): a way back in.
            "signed_out": not getattr(request, "user", None) or not request.user.is_authenticated,
        }
        html = loader.render_to_string("403_csrf.html", context, request)
        response = HttpResponse(html, status=403)
    response["X-CSRF-Failed"] = "1"
    response["Cache-Control"] = "no-store"
    return response
