"""The console e-mail backend of DEBUG (the demo): it prints what would be sent, without the
sign-in links' secrets, since the console is a log (readerstudy.log_redaction). The PI's page
shows the link once; a configured mail server (EMAIL_HOST) sends it whole to its owner."""

from __future__ import annotations

import copy

from django.core.mail.backends.console import EmailBackend

from readerstudy.log_redaction import redact


class RedactingConsoleBackend(EmailBackend):
    def write_message(self, message) -> None:
        # The text before it is encoded: a long line's quoted-printable could split a link.
        shown = copy.copy(message)
        shown.body = redact(message.body)
        if getattr(message, "alternatives", None):
            shown.alternatives = [
                (redact(content) if isinstance(content, str) else content, *rest)
                for content, *rest in message.alternatives
            ]
        super().write_message(shown)
