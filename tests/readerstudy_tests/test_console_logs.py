"""The console says one line per handled error, the log file keeps its traceback (issue 34:
25 tracebacks on the console in one walk-through), and the demo's e-mails are files with one
line on the console, never whole e-mails."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from django.core import mail

ROOT = Path(__file__).resolve().parents[2]

# A job that fails in words, as readerstudy.jobs logs it: with its exception.
LOG_A_FAILURE = """
import django, logging
django.setup()
try:
    raise ValueError("row 7 (question 'q006'), column 'correct': must be one of A, B, C, D")
except ValueError:
    logging.getLogger("readerstudy.jobs").exception("job 3 (study-create:x) failed")
"""


def run(code: str, **env) -> subprocess.CompletedProcess:
    clean = {k: v for k, v in os.environ.items() if k not in {"LOG_LEVEL", "LOG_FILE"}}
    clean.update(
        ENV_FILE=os.devnull, DEBUG="1", DJANGO_SETTINGS_MODULE="readerstudy.config.settings"
    )
    clean.update(env)
    return subprocess.run(
        [sys.executable, "-c", code], cwd=ROOT, env=clean, capture_output=True, text=True
    )


def test_a_handled_error_is_one_console_line_and_its_traceback_is_in_the_file(tmp_path):
    log_file = tmp_path / "logs" / "readerstudy.log"
    result = run(LOG_A_FAILURE, LOG_FILE=str(log_file))
    assert result.returncode == 0, result.stderr
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1, result.stderr
    assert lines[0].startswith("ERROR readerstudy.jobs: job 3 (study-create:x) failed [ValueError:")
    assert f"traceback in {log_file}" in lines[0] and "Traceback" not in result.stderr
    kept = log_file.read_text()
    assert "Traceback (most recent call last)" in kept and "must be one of A, B, C, D" in kept


def test_at_debug_level_the_console_has_the_traceback_and_no_file_when_asked(tmp_path):
    result = run(LOG_A_FAILURE, LOG_LEVEL="debug", LOG_FILE="-")
    assert "Traceback (most recent call last)" in result.stderr
    assert not (ROOT / "-").exists()


def test_the_demo_writes_each_email_to_a_file_and_says_so_in_one_line(settings, tmp_path, caplog):
    settings.EMAIL_BACKEND = "readerstudy.platform.mail.DemoEmailBackend"
    settings.EMAIL_FILE_PATH = str(tmp_path / "mail")
    with caplog.at_level("INFO", logger="readerstudy.platform.mail"):
        mail.send_mail(
            "You are invited", "Open http://x/accounts/invitation/secret/", None, ["a@h.org"]
        )
    (written,) = list((tmp_path / "mail").iterdir())
    assert "invitation/secret" in written.read_text()
    (record,) = caplog.records
    assert record.getMessage().startswith("e-mail to a@h.org: 'You are invited' (written to ")
    assert "secret" not in record.getMessage()
