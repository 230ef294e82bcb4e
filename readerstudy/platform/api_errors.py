"""API errors as JSON with a stable shape: {"detail": "...", "errors": {...}}.

Messages may quote the input (DRF's `"..." is not a valid choice.`): a quoted value is cut to
QUOTE_MAX characters, a whole message to MESSAGE_MAX, and text that cannot be encoded (an
unpaired surrogate) is replaced, so an error can neither balloon nor fail to render.
"""

from __future__ import annotations

import re

from rest_framework.exceptions import ErrorDetail
from rest_framework.views import exception_handler as drf_exception_handler

QUOTE_MAX = 80
MESSAGE_MAX = 500
_LONG_QUOTE = re.compile(r'"([^"]{' + str(QUOTE_MAX) + r'})[^"]+"')


def safe_message(text: str) -> str:
    """`text` with quoted values and its length bounded, and only encodable characters."""
    text = text.encode("utf-8", "replace").decode("utf-8")
    text = _LONG_QUOTE.sub(lambda m: f'"{m.group(1)}…"', text)
    return text if len(text) <= MESSAGE_MAX else text[: MESSAGE_MAX - 1] + "…"


def _bounded(data):
    if isinstance(data, dict):
        return {safe_message(str(k)): _bounded(v) for k, v in data.items()}
    if isinstance(data, list):
        return [_bounded(v) for v in data]
    if isinstance(data, ErrorDetail):
        return ErrorDetail(safe_message(str(data)), code=data.code)
    if isinstance(data, str):
        return safe_message(data)
    return data


def exception_handler(exc, context):
    response = drf_exception_handler(exc, context)
    if response is None:
        return None
    if isinstance(response.data, dict) and "detail" not in response.data:
        response.data = {"detail": "Invalid input.", "errors": response.data}
    elif isinstance(response.data, list):
        response.data = {"detail": " ".join(str(e) for e in response.data)}
    response.data = _bounded(response.data)
    return response
