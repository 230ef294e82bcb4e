"""Sign-in links' secrets never reach a log (issue 38): runserver's request log, Django's
"Gone: <path>" warning for a closed link, gunicorn's access log and the demo's console
e-mails say the path without the token; the PI's page still shows the link."""

from __future__ import annotations

import datetime as dt
import io
import logging
import os
import runpy
import subprocess
import sys
from pathlib import Path
from types import SimpleNamespace

import pytest
from django.core import mail
from django.urls import reverse

from readerstudy.models import Invitation
from readerstudy.platform.log_redaction import RedactSecretsFilter, gunicorn_logger_class, redact
from tests.readerstudy_tests.test_invitations import _invite, _links

ROOT = Path(__file__).resolve().parents[2]


def test_redact_takes_the_token_out_of_every_link_and_leaves_the_rest():
    assert redact('"GET /accounts/invitation/Ab-1_x/ HTTP/1.1" 410 5') == (
        '"GET /accounts/invitation/[secret]/ HTTP/1.1" 410 5'
    )
    assert redact("https://h.org/accounts/invitation/tok?x=1") == (
        "https://h.org/accounts/invitation/[secret]?x=1"
    )
    assert redact("/accounts/reset/MQ/c8z-0123abcd/") == "/accounts/reset/MQ/[secret]/"
    assert redact("/accounts/reset/MQ/set-password/") == "/accounts/reset/MQ/set-password/"
    assert redact("/s/demo/read/1/ /accounts/login/") == "/s/demo/read/1/ /accounts/login/"


@pytest.fixture
def console_logs():
    """What the configured log handlers write (settings.LOGGING), as text."""
    buffer = io.StringIO()
    handlers = {
        *logging.getLogger().handlers,
        *logging.getLogger("django.server").handlers,
        *logging.getLogger("django").handlers,
    }
    streams = [(h, h.setStream(buffer)) for h in handlers if type(h) is logging.StreamHandler]
    assert streams, "no console handler configured"
    yield buffer
    for handler, stream in streams:
        handler.setStream(stream)


@pytest.mark.django_db
def test_a_closed_links_request_is_logged_without_its_token(client, pi, study, console_logs):
    client.force_login(pi)
    (link,) = _links(_invite(client, study, "newcomer"))
    path = link.split("testserver", 1)[1]
    token = path.rstrip("/").rsplit("/", 1)[1]
    invitation = Invitation.objects.get(user__username="newcomer")
    client.post(reverse("pi-invitation", args=[study.slug, invitation.id]), {"action": "revoke"})
    client.logout()
    assert client.get(path).status_code == 410  # django.request: "Gone: <path>"
    # runserver's request line for the same request (WSGIRequestHandler.log_message).
    logging.getLogger("django.server").info(
        '"%s" %s %s',
        f"GET {path} HTTP/1.1",
        "410",
        "512",
        extra={"request": None, "server_time": "now", "status_code": 410},
    )
    written = console_logs.getvalue()
    assert "Gone: /accounts/invitation/[secret]/" in written
    assert '"GET /accounts/invitation/[secret]/ HTTP/1.1" 410' in written
    assert token not in written


def test_every_console_handler_redacts():
    """Every handler settings.LOGGING configured (pytest adds its own capturing ones)."""
    for name in ("", "django", "django.server", "django.request", "readerstudy", "analysis"):
        logger = logging.getLogger(name)
        while logger is not None:
            for handler in logger.handlers:
                if type(handler) is not logging.StreamHandler:
                    continue
                assert any(isinstance(f, RedactSecretsFilter) for f in handler.filters), (
                    name,
                    handler,
                )
            logger = logger.parent if logger.propagate else None


@pytest.mark.django_db
def test_the_demos_email_leaves_the_token_out_of_the_console(
    client, pi, study, settings, tmp_path, caplog, django_capture_on_commit_callbacks
):
    """The demo writes each e-mail whole to a file (a mailbox the person opens); the console,
    a log, gets one line naming the recipient and the file, never the link."""
    settings.INVITATION_EMAIL = True
    settings.EMAIL_BACKEND = "readerstudy.platform.mail.DemoEmailBackend"
    settings.EMAIL_FILE_PATH = str(tmp_path / "mail")
    client.force_login(pi)
    with (
        caplog.at_level(logging.INFO, logger="readerstudy.platform.mail"),
        django_capture_on_commit_callbacks(execute=True),
    ):
        response = _invite(client, study, "mailme, mailme@hospital.org")
    (link,) = _links(response)  # the PI's page shows the whole link, once
    token = link.rstrip("/").rsplit("/", 1)[1]
    logged = "\n".join(record.getMessage() for record in caplog.records)
    assert "mailme@hospital.org" in logged and token not in logged
    assert any(token in mailbox.read_text() for mailbox in (tmp_path / "mail").iterdir())


def test_a_configured_mail_server_sends_the_link_whole(settings):
    settings.EMAIL_BACKEND = "django.core.mail.backends.locmem.EmailBackend"
    mail.send_mail("s", "open https://h/accounts/invitation/tok3n/", None, ["a@b.org"])
    assert "accounts/invitation/tok3n/" in mail.outbox[0].body


def test_gunicorns_access_log_leaves_the_token_out():
    """The logger gunicorn.conf.py names (gunicorn reads that file from the checkout)."""
    from gunicorn.config import Config

    logger_class = runpy.run_path(str(ROOT / "gunicorn.conf.py"))["logger_class"]
    assert issubclass(logger_class, gunicorn_logger_class().__mro__[1])
    logger = logger_class(Config())
    environ = {
        "REQUEST_METHOD": "GET",
        "RAW_URI": "/accounts/invitation/s3cret/?a=1",
        "PATH_INFO": "/accounts/invitation/s3cret/",
        "QUERY_STRING": "a=1",
        "SERVER_PROTOCOL": "HTTP/1.1",
        "HTTP_REFERER": "https://h/accounts/invitation/s3cret/",
    }
    response = SimpleNamespace(status="410 Gone", sent=10, headers=[])
    atoms = logger.atoms(response, [("Referer", environ["HTTP_REFERER"])], environ, dt.timedelta())
    line = logger.cfg.access_log_format % atoms
    assert "s3cret" not in line and "s3cret" not in repr(atoms)
    assert "GET /accounts/invitation/[secret]/?a=1 HTTP/1.1" in line


def test_the_demo_logs_one_line_per_email_without_its_secret(tmp_path):
    """DEBUG without EMAIL_HOST (the demo): each e-mail is written whole to a file under
    EMAIL_FILE_PATH, and the console says to whom and where, never the link."""
    env = {k: v for k, v in os.environ.items() if k not in {"EMAIL_HOST", "DATABASE_URL"}}
    env.update(
        DEBUG="1",
        ENV_FILE=os.devnull,
        DJANGO_SETTINGS_MODULE="readerstudy.config.settings",
        EMAIL_FILE_PATH=str(tmp_path / "mail"),
        LOG_FILE="-",
    )
    code = (
        "import django; django.setup(); from django.core.mail import send_mail; "
        "send_mail('Invited', 'Open https://h/accounts/invitation/tok3n-X/ once.', None, "
        "['a@b.org'])"
    )
    result = subprocess.run(
        [sys.executable, "-c", code], cwd=ROOT, env=env, capture_output=True, text=True
    )
    assert result.returncode == 0, result.stderr
    console = result.stdout + result.stderr
    assert "e-mail to a@b.org" in console and "tok3n" not in console
    assert any("tok3n-X" in mailbox.read_text() for mailbox in (tmp_path / "mail").iterdir())
