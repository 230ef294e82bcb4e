"""The order in which pytest-xdist's workers receive the tests (a plugin tests/conftest.py
loads)."""

import itertools

import pytest

# Tests that take tens of seconds each (a browser, R): started first, so that none of them is
# what a worker is still running when the others have finished.
LONG = ("browser", "roracle")


@pytest.hookimpl(trylast=True)  # on what is left once `-m` and `-k` have selected
def pytest_collection_modifyitems(config, items):
    """Deal the long tests out at the head of each xdist worker's first share.

    pytest-xdist's `worksteal` gives each of its n workers a contiguous share of the collection
    (the first len // n items to the first, and so on), and a worker that runs dry takes half
    of the untouched end of another's queue. In file order the long tests bunch up: a 77 s walk
    started last kept one worker running 70 s after the others (8 min for 1,630 tests on 2
    cores). Each share here starts with every n-th long test, then the short ones, which
    the others can take over. The order is the same in every worker (xdist checks)."""
    workers = getattr(config, "workerinput", {}).get("workercount", 1)
    if workers < 2:
        return
    is_long = [any(item.get_closest_marker(m) for m in LONG) for item in items]
    long = list(itertools.compress(items, is_long))
    if not long:
        return
    short = itertools.compress(items, [not flag for flag in is_long])
    ordered, left = [], len(items)
    for worker in range(workers):
        size = left // (workers - worker)  # as worksteal's first distribution
        head = long[worker::workers]
        ordered += head + list(itertools.islice(short, max(0, size - len(head))))
        left -= size
    ordered += list(short)
    assert len(ordered) == len(items)
    items[:] = ordered
