"""E-mail where no mail server is configured (the demo, DEBUG): each message is written to a
file in EMAIL_FILE_PATH, as a mailbox would hold it, and the console gets one line saying to
whom, what and where it is; the console never prints whole e-mails."""

from __future__ import annotations

import logging

from django.core.mail.backends.filebased import EmailBackend as FileBackend

log = logging.getLogger(__name__)


class DemoEmailBackend(FileBackend):
    def send_messages(self, email_messages) -> int:
        sent = super().send_messages(email_messages)
        for message in email_messages or []:
            log.info(
                "e-mail to %s: %r (written to %s)",
                ", ".join(message.recipients()),
                message.subject,
                self._fname,
            )
        return sent
