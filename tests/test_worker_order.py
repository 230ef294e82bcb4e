"""The order tests/worker_order.py gives the xdist workers: every test once, each worker's first
share starting with its share of the long tests, and any selection (all long, none long, fewer
tests than workers) ordered without error (`make test PYTEST_ARGS=tests/browser`)."""

from types import SimpleNamespace

import pytest

from tests.worker_order import pytest_collection_modifyitems


class Item:
    def __init__(self, name: str, mark: str | None = None):
        self.name, self.mark = name, mark

    def get_closest_marker(self, name: str):
        return name if name == self.mark else None

    def __repr__(self) -> str:
        return self.name


def ordered(items: list[Item], workers: int) -> list[Item]:
    config = SimpleNamespace(workerinput={"workercount": workers})
    items = list(items)
    pytest_collection_modifyitems(config, items)
    return items


def shares(items: list[Item], workers: int) -> list[list[Item]]:
    """What xdist's worksteal sends each worker first: contiguous, len // n at a time."""
    out, start, left = [], 0, len(items)
    for worker in range(workers):
        size = left // (workers - worker)
        out.append(items[start : start + size])
        start, left = start + size, left - size
    return out


def test_each_worker_starts_with_its_share_of_the_long_tests():
    # In file order the long ones (browser, R) come last, as tests/browser and the R oracles
    # did in the slowest runs.
    items = [Item(f"short{i}") for i in range(30)]
    items += [Item(f"walk{i}", "browser") for i in range(5)] + [Item("r", "roracle")]
    result = ordered(items, 3)
    assert sorted(map(repr, result)) == sorted(map(repr, items))
    for share in shares(result, 3):
        longs = [i for i in share if i.mark]
        assert len(longs) == 2
        assert share[: len(longs)] == longs  # first, before any short test


@pytest.mark.parametrize(
    ("n_short", "n_long", "workers"), [(0, 7, 2), (0, 1, 3), (5, 0, 3), (1, 1, 3), (2, 9, 3)]
)
def test_any_selection_keeps_every_test_once(n_short, n_long, workers):
    items = [Item(f"s{i}") for i in range(n_short)] + [
        Item(f"l{i}", "browser") for i in range(n_long)
    ]
    result = ordered(items, workers)
    assert sorted(map(repr, result)) == sorted(map(repr, items))


def test_one_process_keeps_the_file_order():
    items = [Item("a"), Item("b", "browser"), Item("c")]
    config = SimpleNamespace()  # no workerinput: not an xdist worker
    kept = list(items)
    pytest_collection_modifyitems(config, kept)
    assert kept == items
