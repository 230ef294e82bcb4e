"""tests/roracle.py: R only from a test marked `roracle`, the mark CI and the worker order
read (such a test runs once, on SQLite, and first in its worker's share)."""

import pytest

from tests import roracle


def test_r_from_a_test_without_the_mark_is_refused_before_r_starts():
    with pytest.raises(AssertionError, match=r"runs R: mark it `pytest\.mark\.roracle`"):
        roracle.rscript("-e", "cat('never run')")


@pytest.mark.roracle
def test_r_from_a_marked_test_runs():
    roracle.require()
    assert roracle.rscript("-e", "cat(6 * 7)") == "42"
