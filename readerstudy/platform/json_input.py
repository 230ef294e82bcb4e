"""JSON from outside, parsed with bounds: nesting depth and text that is really text.

Python's parser recurses once per level and gives up with a RecursionError near 1000 levels;
that error is not a ValueError, so `"[" * 5000` to any API endpoint, or to the reading page's
`base` field, would be a 500. Nothing we accept nests more than a few levels, so input
nested deeper than MAX_DEPTH is refused before parsing, with the reason.

JSON may also spell an unpaired UTF-16 surrogate (`"\\ud800"`): Python decodes it into a str
that cannot be encoded as UTF-8, so a 400 that echoed it, or the database write, would fail.
Such input is not text; it is refused here, without echoing it.

An integer literal longer than Python converts (4,300 digits) raises a ValueError that is
no JSONDecodeError, so it too would be a 500 (the answer and review APIs, the reading page's
`base` field, the anonymous token endpoint). Nothing we accept is a number of more
than MAX_INT_DIGITS digits (ids and milliseconds have at most 19): a longer one is refused
before it is converted.

Used by the API's parser (settings REST_FRAMEWORK) and every form field that holds JSON.
"""

from __future__ import annotations

import json
import re
from itertools import accumulate

from django.conf import settings
from rest_framework.exceptions import ParseError
from rest_framework.parsers import JSONParser

MAX_DEPTH = 32
MAX_INT_DIGITS = 30

# Escapes first (JSON has backslashes only inside strings), then the plain string literals:
# what is inside a string is never nesting. Two passes, each linear; one pattern matching
# strings with their escapes restarted at every escaped quote (quadratic on `"\"\"\"...`).
_ESCAPE = re.compile(r"\\.", re.DOTALL)
_STRING = re.compile(r'"[^"]*"')
_NOT_BRACKET = re.compile(r"[^\[\]{}]+")
_STEP = {"[": 1, "{": 1, "]": -1, "}": -1}.__getitem__


class JsonInputError(ValueError):
    """The text is not JSON we accept; the message says why without quoting the input."""


def nesting_depth(text: str) -> int:
    """The deepest bracket nesting of `text`, outside string literals (linear time)."""
    brackets = _NOT_BRACKET.sub("", _STRING.sub("", _ESCAPE.sub("", text)))
    return max(accumulate(map(_STEP, brackets)), default=0)


def check_text(value) -> None:
    """Refuse a parsed value holding a string that is not encodable text (lone surrogates)."""
    try:
        json.dumps(value, ensure_ascii=False).encode("utf-8")
    except UnicodeEncodeError as exc:
        raise JsonInputError(
            "The JSON holds an unpaired UTF-16 surrogate escape (\\ud800-\\udfff), which is "
            "not text."
        ) from exc


def loads(text: str | bytes, *, max_depth: int = MAX_DEPTH, **kwargs):
    """json.loads with a depth bound and a text check; JsonInputError names the problem."""
    if isinstance(text, bytes | bytearray):
        try:
            text = text.decode("utf-8")
        except UnicodeDecodeError as exc:
            raise JsonInputError("The JSON is not valid UTF-8.") from exc
    if nesting_depth(text) > max_depth:
        raise JsonInputError(f"The JSON is nested more than {max_depth} levels deep.")
    kwargs.setdefault("parse_int", _bounded_int)
    try:
        value = json.loads(text, **kwargs)
    except JsonInputError:
        raise
    except RecursionError as exc:  # not reachable through the bound; kept as a last guard
        raise JsonInputError(f"The JSON is nested more than {max_depth} levels deep.") from exc
    except json.JSONDecodeError as exc:
        raise JsonInputError(
            f"Not valid JSON: {exc.msg} (line {exc.lineno}, column {exc.colno})."
        ) from exc
    except ValueError as exc:  # a number Python will not convert, from a caller's own hook
        raise JsonInputError(f"The JSON holds a number that cannot be read ({exc}).") from exc
    check_text(value)
    return value


def _bounded_int(literal: str) -> int:
    digits = len(literal.lstrip("-"))
    if digits > MAX_INT_DIGITS:
        raise JsonInputError(
            f"The JSON holds an integer of {digits} digits; at most {MAX_INT_DIGITS} are accepted."
        )
    return int(literal)


class BoundedJSONParser(JSONParser):
    """DRF's JSON parser with the bounds above; a refused body is a 400 naming the reason."""

    def parse(self, stream, media_type=None, parser_context=None):
        limit = settings.DATA_UPLOAD_MAX_MEMORY_SIZE
        body = stream.read(limit + 1) if stream is not None else b""
        if limit is not None and len(body) > limit:
            raise ParseError(f"The JSON body is larger than {limit} bytes.")
        try:
            return loads(body, parse_constant=_no_constant)
        except JsonInputError as exc:
            raise ParseError(str(exc)) from exc


def _no_constant(name: str):
    raise JsonInputError(f"{name} is not a JSON number.")
