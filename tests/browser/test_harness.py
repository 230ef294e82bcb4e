"""The browser tests' own harness: what the drain before each flush counts, and the switches
Chromium is launched with."""

import os
import threading
from pathlib import Path

import pytest

from tests.browser.conftest import _IN_FLIGHT
from tools import headless_chromium


def test_the_drain_counts_only_the_live_servers_requests():
    """The test client's requests run in the main thread; one never finished (a streamed
    download nobody read to the end) must not make every later browser test wait and fail.
    (The handlers are called as the request signals call them, without Django's other
    receivers, which would reach for a database this test has none of.)"""
    before = _IN_FLIGHT.count
    _IN_FLIGHT.started(sender=None, environ={})  # the test client, never finished
    assert _IN_FLIGHT.count == before
    seen = []

    def served():
        _IN_FLIGHT.started(sender=None, environ={})
        seen.append(_IN_FLIGHT.count)
        _IN_FLIGHT.finished(sender=None)

    thread = threading.Thread(target=served)
    thread.start()
    thread.join()
    assert seen == [before + 1] and _IN_FLIGHT.count == before


_DISABLE = "--disable-features="


def _chromium_browsers() -> dict[int, list[str]]:
    """This test process's Chromium browsers (whatever CHROMIUM_PATH names), by pid, with
    their command lines: its descendants started with Playwright's pipe and without a `--type`
    (a renderer, GPU or utility process has one). Other xdist workers' browsers are not this
    process's descendants."""
    children: dict[int, list[int]] = {}
    for entry in Path("/proc").glob("[0-9]*"):
        try:
            parent = int((entry / "stat").read_text().rsplit(")", 1)[1].split()[1])
        except OSError:
            continue
        children.setdefault(parent, []).append(int(entry.name))
    browsers, stack = {}, list(children.get(os.getpid(), []))
    while stack:
        pid = stack.pop()
        stack += children.get(pid, [])
        try:
            args = Path(f"/proc/{pid}/cmdline").read_bytes().decode().split("\0")
        except OSError:
            continue
        if "--remote-debugging-pipe" in args and not any(a.startswith("--type=") for a in args):
            browsers[pid] = args
    return browsers


@pytest.mark.browser
def test_our_disabled_features_keep_playwrights_and_leave_out_the_omnibox(playwright, browser):
    """Chromium applies only the last `--disable-features`: ours must carry every feature
    Playwright disables itself (its list changes with its version), and the omnibox's WebUI
    renderers must be gone from every window the tests open."""
    before = _chromium_browsers()
    plain = playwright.chromium.launch(executable_path=headless_chromium.PATH)
    try:
        (args,) = [a for pid, a in _chromium_browsers().items() if pid not in before]
    finally:
        plain.close()
    (playwrights,) = [a.removeprefix(_DISABLE).split(",") for a in args if a.startswith(_DISABLE)]
    (ours,) = [a for a in headless_chromium.launch_args() if a.startswith(_DISABLE)]
    missing = set(playwrights) - set(ours.removeprefix(_DISABLE).split(","))
    assert not missing, (
        f"Playwright now disables {sorted(missing)}: add them to tools/headless_chromium.py"
    )

    context = browser.new_context()
    try:
        context.new_page().set_content("<p>a page</p>")
        session = browser.new_browser_cdp_session()
        targets = session.send("Target.getTargets")["targetInfos"]
        urls = [t["url"] for t in targets]
        assert "about:blank" in urls and not [u for u in urls if "omnibox" in u], urls
    finally:
        context.close()
