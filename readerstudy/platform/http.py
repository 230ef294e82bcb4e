"""What kind of client sent a request. Pages answer people with HTML and scripts with JSON or
a status they can act on (a script shown a sign-in page cannot tell it from a case)."""

from __future__ import annotations

from django.http import HttpRequest


def wants_json(request: HttpRequest) -> bool:
    """True when the client asked for JSON first (the reading page's saves do).

    A browser navigating sends `text/html,...,*/*`: that is a page, not a script.
    """
    accept = request.headers.get("Accept", "")
    return accept.split(",")[0].strip().startswith("application/json")


def is_script(request: HttpRequest) -> bool:
    """A request made by the page's own script (htmx or fetch), not by navigation."""
    return request.headers.get("HX-Request") == "true" or wants_json(request)


def declared_size_over(request: HttpRequest, limit: int) -> int | None:
    """The body size a request declares (Content-Length) when it exceeds `limit`, else None.

    Checked before anything reads the body: Django streams an uploaded file of any size to a
    temporary file, and a CSRF check (a page's, or DRF's for session sign-in) parses the body,
    before a form or serializer could say it is too large."""
    try:
        size = int(request.META.get("CONTENT_LENGTH") or 0)
    except ValueError:
        return None
    return size if size > limit else None
