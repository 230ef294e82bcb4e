"""Refuse NUL characters in the URL and query string before any view sees them.

PostgreSQL text cannot hold NUL, so a NUL that reaches a query (`?expert=%00`) or a file path
(`/img/display/aa/%00.png`) failed with a 500; no legitimate request carries one.
"""

from __future__ import annotations

from django.http import HttpRequest, HttpResponse, HttpResponseBadRequest, JsonResponse

MESSAGE = "The URL or its query parameters contain a NUL character (%00), which is not allowed."


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
