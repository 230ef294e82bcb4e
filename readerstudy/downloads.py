"""File downloads: one way to build an attachment response for every export."""

from __future__ import annotations

from django.http import HttpResponse
from django.utils.http import content_disposition_header


def attachment(body: bytes | str, filename: str, content_type: str) -> HttpResponse:
    """Django's header builder quotes and encodes the name, which hand-written f-strings don't."""
    response = HttpResponse(body, content_type=content_type)
    response["Content-Disposition"] = content_disposition_header(True, filename)
    return response
