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


def _browser_features(pids_before: set[int]) -> list[list[str]]:
    """The `--disable-features` lists on the command line of each Chromium browser process
    (not a renderer, GPU or utility process) started since `pids_before` was taken."""
    found = []
    for pid in _chromium_browsers() - pids_before:
        args = Path(f"/proc/{pid}/cmdline").read_bytes().decode().split("\0")
        found.append([a.split("=", 1)[1].split(",") for a in args if a.startswith(_DISABLE)])
    return found


_DISABLE = "--disable-features="


def _chromium_browsers() -> set[int]:
    """This test process's Chromium browsers (whatever CHROMIUM_PATH names): its descendants
    started with Playwright's pipe and without a `--type` (a renderer, GPU or utility process
    has one). Other xdist workers' browsers are not this process's descendants."""
    parents = {}
    for entry in Path("/proc").glob("[0-9]*"):
        try:
            stat = (entry / "stat").read_text()
        except OSError:
            continue
        parents[int(entry.name)] = int(stat.rsplit(")", 1)[1].split()[1])
    mine, grew = {os.getpid()}, True
    while grew:
        found = {pid for pid, parent in parents.items() if parent in mine} - mine
        mine |= found
        grew = bool(found)
    pids = set()
    for pid in mine - {os.getpid()}:
        try:
            args = Path(f"/proc/{pid}/cmdline").read_bytes().decode().split("\0")
        except OSError:
            continue
        if "--remote-debugging-pipe" in args and not any(a.startswith("--type=") for a in args):
            pids.add(pid)
    return pids


@pytest.mark.browser
def test_our_disabled_features_keep_playwrights_and_leave_out_the_omnibox(playwright, browser):
    """Chromium applies only the last `--disable-features`: ours must carry every feature
    Playwright disables itself (its list changes with its version), and the omnibox's WebUI
    renderers must be gone from every window the tests open."""
    before = _chromium_browsers()
    plain = playwright.chromium.launch(executable_path=headless_chromium.PATH)
    try:
        (playwrights,) = _browser_features(before)
    finally:
        plain.close()
    assert len(playwrights) == 1, playwrights
    ours = headless_chromium.launch_args()
    (last,) = [a for a in ours if a.startswith(_DISABLE)]
    missing = set(playwrights[0]) - set(last.removeprefix(_DISABLE).split(","))
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
