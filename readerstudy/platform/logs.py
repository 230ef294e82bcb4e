"""The console says one line per event; the log file keeps the whole story.

A handled error (a background job that failed in words, a request the server answered with an
error page) is one line on the console, naming the exception and where its traceback is: the
log file (LOG_FILE), which keeps every record with its traceback. With LOG_LEVEL=DEBUG the
console shows the tracebacks too.
"""

from __future__ import annotations

import logging


class OneLineFormatter(logging.Formatter):
    """One line per record: the message (its own line breaks folded), then the exception's
    type and first line; never the traceback. `where`: where the traceback can be read."""

    def __init__(self, *args, where: str = "", **kwargs):
        super().__init__(*args, **kwargs)
        self.where = where

    def format(self, record: logging.LogRecord) -> str:
        # Not Formatter.format: it would cache the traceback on the record (exc_text) and
        # print it, and the file's handler needs it intact.
        record.message = record.getMessage()
        if self.usesTime():
            record.asctime = self.formatTime(record, self.datefmt)
        line = " ".join(self.formatMessage(record).split())
        error = record.exc_info[1] if record.exc_info else None
        if error is not None:
            first = (str(error).strip().splitlines() or [""])[0][:200]
            where = f"; traceback in {self.where}" if self.where else ""
            line += f" [{type(error).__name__}{f': {first}' if first else ''}{where}]"
        return line
