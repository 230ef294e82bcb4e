"""Text every database and file system here can store, checked where files come in.

PostgreSQL refuses a NUL character in text and a path with one raises; JSON's "\\ud800"
escapes make unpaired surrogates, which UTF-8 cannot encode. SQLite kept both, so an import
that passed there failed on PostgreSQL with a driver error (a 500 on the upload pages).
"""

from __future__ import annotations


def unstorable_text(text: str) -> str:
    """Why `text` cannot be stored, in words ("" when it can)."""
    if "\x00" in text:
        return "holds a NUL character"
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return "holds an unpaired surrogate (not UTF-8 text)"
    return ""
