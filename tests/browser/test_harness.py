"""The browser tests' own harness: what the drain before each flush counts."""

import threading

from django.core.signals import request_finished, request_started

from tests.browser.conftest import _IN_FLIGHT


def test_the_drain_counts_only_the_live_servers_requests():
    """The test client's requests run in the main thread; one never finished (a streamed
    download nobody read to the end) must not make every later browser test wait and fail."""
    before = _IN_FLIGHT.count
    request_started.send(sender=None, environ={})  # the test client, never finished
    assert _IN_FLIGHT.count == before
    seen = []

    def served():
        request_started.send(sender=None, environ={})
        seen.append(_IN_FLIGHT.count)
        request_finished.send(sender=None)

    thread = threading.Thread(target=served)
    thread.start()
    thread.join()
    assert seen == [before + 1] and _IN_FLIGHT.count == before
