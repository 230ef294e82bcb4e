"""The browser tests' own harness: what the drain before each flush counts."""

import threading

from tests.browser.conftest import _IN_FLIGHT


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
