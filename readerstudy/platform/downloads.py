"""File downloads: one way to build an attachment response for every export."""

from __future__ import annotations

import datetime as dt
import hashlib

from django.http import HttpResponse
from django.utils.http import content_disposition_header


def attachment(body: bytes | str, filename: str, content_type: str) -> HttpResponse:
    """Django's header builder quotes and encodes the name, which hand-written f-strings don't."""
    response = HttpResponse(body, content_type=content_type)
    response["Content-Disposition"] = content_disposition_header(True, filename)
    return response


def export_filename(slug: str, stem: str, ext: str, *, version: str = "", date=None) -> str:
    """`<study>-<what>-v<data version>-<YYYY-MM-DD>.<ext>`: every export names the study, the
    data it was made from and the day (UTC), so two downloads never overwrite each other in a
    Downloads folder and a file says where it came from."""
    day = date or dt.datetime.now(dt.UTC).date()
    parts = [slug, stem, *([f"v{version[:8]}"] if version else []), day.isoformat()]
    return "-".join(parts) + f".{ext}"


def content_version(body: bytes | str) -> str:
    """The data version of an export that is not the analysis's: a hash of its own rows, so
    it changes exactly when the file's content does."""
    data = body.encode() if isinstance(body, str) else body
    return hashlib.sha256(data).hexdigest()[:8]
