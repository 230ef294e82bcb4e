"""python manage.py demo_pacs start|stop [--port N]: a local Orthanc holding the demo radiographs.

For `make demo-pacs` only: Debian's Orthanc on 127.0.0.1 (remote access off, a demo user),
its data and log under MEDIA_ROOT/demo-pacs/. `start` leaves it running in the background and
loads the demo instances by STOW-RS; `stop` ends it.
"""

from __future__ import annotations

import contextlib
import os
import signal
import time
from pathlib import Path

from django.conf import settings
from django.core.management.base import BaseCommand, CommandError

from readerstudy import demo
from readerstudy.orthanc_local import LocalOrthanc, OrthancError

USER = "demo"
PASSWORD = "demo-pacs-password"  # loopback only, for the demo's own throw-away PACS


def _workdir() -> Path:
    return Path(settings.MEDIA_ROOT) / "demo-pacs"


class Command(BaseCommand):
    help = "Start (and load) or stop the demo's local Orthanc PACS."

    def add_arguments(self, parser):
        parser.add_argument("action", choices=["start", "stop"])
        parser.add_argument("--port", type=int, default=8043, help="HTTP port (default 8043).")

    def handle(self, *args, **opts):
        if opts["action"] == "stop":
            self._stop()
            return
        self._stop()
        server = LocalOrthanc(_workdir(), user=USER, password=PASSWORD, http_port=opts["port"])
        try:
            server.start()
        except OrthancError as exc:
            raise CommandError(f"Cannot start the demo PACS: {exc}") from exc
        json_path = demo.write_demo_files(Path(settings.MEDIA_ROOT) / "demo-source")
        loaded = server.store(demo.pacs_instances(json_path))
        server.process = None  # leave it running after this command; `stop` ends it
        self.stdout.write(
            self.style.SUCCESS(f"Demo PACS on {server.dicomweb_url}")
            + f" ({loaded} instances; user {USER!r}, password {PASSWORD!r}; "
            f"log {server.log_path})"
        )

    def _stop(self) -> None:
        pid_path = _workdir() / "orthanc.pid"
        if not pid_path.exists():
            return
        try:
            pid = int(pid_path.read_text())
            # Only our Orthanc: a stale pid file must not end whatever reuses the number.
            if b"Orthanc" not in Path(f"/proc/{pid}/cmdline").read_bytes():
                raise ProcessLookupError(pid)
            os.kill(pid, signal.SIGTERM)
        except (ValueError, OSError):
            pid_path.unlink(missing_ok=True)
            return
        for _ in range(100):
            if _ended(pid):
                break
            time.sleep(0.1)
        pid_path.unlink(missing_ok=True)
        self.stdout.write("Demo PACS stopped.")


def _ended(pid: int) -> bool:
    """Whether process `pid` has gone. Started and stopped from one process (the tests), the
    Orthanc is this process's child and stays a zombie, alive to kill(pid, 0), until reaped:
    reaping it here keeps the wait from running its full 10 s."""
    with contextlib.suppress(ChildProcessError):  # not our child: init reaps it
        os.waitpid(pid, os.WNOHANG)
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return True
    return False
