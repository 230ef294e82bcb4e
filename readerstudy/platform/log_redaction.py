"""Secrets kept out of logs: the sign-in links' tokens.

A one-time invitation link (`/accounts/invitation/<token>/`) and a password-reset link
(`/accounts/reset/<uid>/<token>/`) carry their secret in the path. Whoever reads a log holding
one could use it while it is open, so every place this server writes a request's path or an
e-mail's text says the path without it:

- the request log of `runserver` (`django.server`) and every other log record through the
  console handler (`django.request` writes "Gone: <path>" for a closed link) run through
  `RedactSecretsFilter` (settings.LOGGING);
- gunicorn's access log, when an operator turns it on, uses `GunicornLogger` (named by
  gunicorn.conf.py at the top of the checkout, which gunicorn reads from its working
  directory): the request line, the path, the query and the Referer of a page opened from a
  link are written without it;
- the e-mails the demo prints to the console (readerstudy.platform.mail).

The link itself is still shown once to the PI on the page that made it, and sent by e-mail
when e-mail is configured: that is how it reaches its owner.

No Django here: gunicorn's master imports this before any app is loaded.
"""

from __future__ import annotations

import logging
import re

INVITATION_PATH = "accounts/invitation/"  # readerstudy.config.urls: INVITATION_PATH + "<token>/"
RESET_PATH = "accounts/reset/"  # django.contrib.auth.urls: "reset/<uidb64>/<token>/"
HIDDEN = "[secret]"

# A token: what stands in the path segment after the prefix (up to /, ?, #, a quote or a
# space). A reset link's uid is left (it names the account, not a secret); its token goes,
# but not the token-less "set-password" page Django redirects to.
_SECRET_PATHS = re.compile(
    rf"(/{re.escape(INVITATION_PATH)})[^/?#\s\"']+"
    rf"|(/{re.escape(RESET_PATH)}[^/?#\s\"']+/)(?!set-password(?:[/?#\s\"']|$))[^/?#\s\"']+"
)


def redact(text: str) -> str:
    """`text` with the secret of every sign-in link replaced by [secret]."""
    return _SECRET_PATHS.sub(lambda m: (m.group(1) or m.group(2)) + HIDDEN, text)


class RedactSecretsFilter(logging.Filter):
    """A log handler's filter: the record's message without sign-in links' secrets."""

    def filter(self, record: logging.LogRecord) -> bool:
        message = record.getMessage()
        clean = redact(message)
        if clean != message:
            record.msg, record.args = clean, None
        return True


def gunicorn_logger_class():
    """gunicorn's logger with the access log's values redacted (imported by gunicorn.conf.py;
    gunicorn is a production dependency, not one of the tests')."""
    from gunicorn.glogging import Logger

    class GunicornLogger(Logger):
        def atoms(self, resp, req, environ, request_time):
            values = super().atoms(resp, req, environ, request_time)
            return {k: redact(v) if isinstance(v, str) else v for k, v in values.items()}

    return GunicornLogger
