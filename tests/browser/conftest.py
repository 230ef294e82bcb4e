"""Browser tests: Playwright driving Debian's Chromium (never a downloaded browser).

Skipped with a clear message where /usr/bin/chromium is absent; .ci/run installs it.
"""

import os
import threading
import time
from pathlib import Path

import pytest
from django.core.signals import request_finished, request_started
from playwright.sync_api import expect

from tools import headless_chromium

CHROMIUM = headless_chromium.PATH
ARTIFACTS = Path(__file__).resolve().parents[2] / "artifacts"

# `expect` waits as long as the page's own waits (Playwright's 30 s, not expect's 5 s): on a
# busy 2-core machine a state the page reaches in a second can take several.
expect.set_options(timeout=30_000)

# Playwright's sync API runs an event loop in this thread; the ORM calls made by the tests
# themselves (not by the live server) are safe.
os.environ.setdefault("DJANGO_ALLOW_ASYNC_UNSAFE", "true")


class _RequestsInFlight:
    """Requests the live server has started and not finished (any thread)."""

    def __init__(self) -> None:
        self.count = 0
        self.changed_at = time.monotonic()
        self._lock = threading.Lock()

    # Only the live server's requests count: they are handled in its threads. The test client
    # sends the same signals in the main thread, and a streamed response nobody closed never
    # sends request_finished (on PostgreSQL's test selection 2,465 such were counted once, and
    # every later browser test waited 15 s and failed).
    @staticmethod
    def _served() -> bool:
        return threading.current_thread() is not threading.main_thread()

    def started(self, **_) -> None:
        if not self._served():
            return
        with self._lock:
            self.count += 1
            self.changed_at = time.monotonic()

    def finished(self, **_) -> None:
        if not self._served():
            return
        with self._lock:
            self.count -= 1
            self.changed_at = time.monotonic()

    def wait_quiet(self, quiet: float = 0.1, timeout: float = 15.0) -> None:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.count <= 0 and time.monotonic() - self.changed_at >= quiet:
                return
            time.sleep(0.02)
        raise AssertionError(f"the live server still had {self.count} request(s) after {timeout}s")


_IN_FLIGHT = _RequestsInFlight()
request_started.connect(_IN_FLIGHT.started, weak=False)
request_finished.connect(_IN_FLIGHT.finished, weak=False)


@pytest.fixture(autouse=True)
def _live_server_drained(_django_db_marker, request):
    """After the test's page has closed, wait until the live server has answered everything it
    was sent before the test database is flushed. A prefetch or a keepalive POST the browser
    sent last would otherwise write into the flushed tables ("FOREIGN KEY constraint failed"
    in teardown, or a row left behind for the next test). Set up after pytest-django's database
    fixture and before `page`, so it is torn down between the two."""
    yield
    if "live_server" in request.fixturenames:
        _IN_FLIGHT.wait_quiet()


def pytest_collection_modifyitems(config, items):
    if Path(CHROMIUM).exists():
        return
    skip = pytest.mark.skip(
        reason=f"Chromium not found at {CHROMIUM}: apt-get install chromium (CI does this)"
    )
    for item in items:
        if "browser" in item.keywords:
            item.add_marker(skip)


@pytest.fixture(scope="session")
def browser_type_launch_args(browser_type_launch_args):
    return {
        **browser_type_launch_args,
        "executable_path": CHROMIUM,
        "args": headless_chromium.launch_args(),
    }


@pytest.fixture(scope="session")
def browser_context_args(browser_context_args):
    return {**browser_context_args, "viewport": {"width": 1440, "height": 900}}


@pytest.fixture
def new_context(browser, browser_context_args):
    """Another browser context (a second person, or a browser without JavaScript), closed when
    the test ends even if it fails: a page left open would go on sending its requests into the
    tests that follow."""
    made = []

    def make(**kwargs):
        context = browser.new_context(**{**browser_context_args, **kwargs})
        made.append(context)
        return context

    yield make
    for context in made:
        context.close()


@pytest.fixture
def artifacts() -> Path:
    ARTIFACTS.mkdir(exist_ok=True)
    return ARTIFACTS
