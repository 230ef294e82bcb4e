"""Three request guards every app relies on.

`RejectNulMiddleware`: refuse NUL characters in the URL and query string before any view sees
them. PostgreSQL text cannot hold NUL, so a NUL that reaches a query (`?expert=%00`) or a file
path (`/img/display/aa/%00.png`) failed with a 500; no legitimate request carries one.

`TryLaterMiddleware`: work refused for now (readerstudy.platform.errors.TryLater, which
background jobs raise at a person's limit or a study's analyses at once) is a 429 in words
with Retry-After, as JSON for the API and the page's scripts, else the error page; from any
view that asks for work.

`SessionEndedMiddleware`: a script whose session ended gets 401, not the sign-in page.
`login_required` answers an anonymous request with a redirect to the sign-in page. A browser
navigating follows it and shows the form, which is right; but fetch and htmx follow it too and
hand the script a sign-in page where it expected a case or a save receipt, so the page can
neither tell that the answer was not saved nor ask the reader to sign in. For those requests
the redirect becomes a 401 the page can act on (ask to sign in, keep the answer, send it after).
"""

from __future__ import annotations

from urllib.parse import urlsplit

from django.conf import settings
from django.http import HttpRequest, HttpResponse, HttpResponseBadRequest, JsonResponse
from django.shortcuts import resolve_url

from readerstudy.platform.errors import TryLater
from readerstudy.platform.errors import page as error_page
from readerstudy.platform.http import is_script

MESSAGE = "The URL or its query parameters contain a NUL character (%00), which is not allowed."
SESSION_ENDED = "Your session has ended. Sign in again to continue; nothing you entered is lost."


class RejectNulMiddleware:
    def __init__(self, get_response):
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        if "\x00" in request.path or any(
            "\x00" in key or any("\x00" in value for value in values)
            for key, values in request.GET.lists()
        ):
            if request.path.startswith("/api/"):
                return JsonResponse({"detail": MESSAGE}, status=400)
            return HttpResponseBadRequest(MESSAGE, content_type="text/plain; charset=utf-8")
        return self.get_response(request)


class SessionEndedMiddleware:
    def __init__(self, get_response):
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        response = self.get_response(request)
        if response.status_code in (301, 302, 303) and is_script(request):
            login_path = urlsplit(resolve_url(settings.LOGIN_URL)).path
            if urlsplit(response.get("Location", "")).path == login_path:
                ended = JsonResponse({"error": SESSION_ENDED}, status=401)
                ended["X-Login-Required"] = "1"
                ended["Cache-Control"] = "no-store"
                return ended
        return response


class TryLaterMiddleware:
    def __init__(self, get_response):
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        return self.get_response(request)

    def process_exception(self, request: HttpRequest, exception: Exception):
        if not isinstance(exception, TryLater):
            return None
        if request.path.startswith("/api/"):
            response = JsonResponse({"detail": str(exception)}, status=429)
        else:
            response = error_page(request, 429, "429.html", str(exception))
        response["Retry-After"] = str(exception.retry_after)
        return response
