"""Shared by every test: the Hypothesis profiles, the `database` mark, the resources folder;
and, when pytest-django runs (`make test`), the Django fixtures of tests/django_fixtures.py
(isolated media, personas around one study, the demo seeded once per run). The statistics
library's tests (tests/stats_tests) need none of them: `pytest -p no:django tests/stats_tests`
runs them without Django."""

import gc
import sys
from pathlib import Path

import pytest

from tests import profiles, roracle

RESOURCES = Path(__file__).parent / "resources"

profiles.load()  # Hypothesis: `ci` derandomized, `dev` random, `fuzz` more (tests/profiles.py)

# The fixtures through which a test reaches the database (pytest-django blocks any other way).
DATABASE_FIXTURES = {
    "db",
    "transactional_db",
    "django_db_reset_sequences",
    "django_db_serialized_rollback",
}


@pytest.hookimpl(tryfirst=True)  # before `-m` selects on the mark
def pytest_collection_modifyitems(items):
    """Mark `database` every test that can touch the database: a django_db mark, or a fixture
    that asks for it. The rest cannot (pytest-django refuses the connection), so a second run on
    another database engine (.ci/run, PostgreSQL) selects `-m database`."""
    for item in items:
        uses = item.get_closest_marker("django_db") or DATABASE_FIXTURES & set(item.fixturenames)
        if uses:
            item.add_marker(pytest.mark.database)


class _Frozen:
    """How many modules were imported when the heap was last frozen."""

    modules = 0


def _freeze_what_lives() -> None:
    """Move everything alive now out of the cycle collector's reach. Every full collection,
    and each explicit `gc.collect()` the analysis makes after drawing a figure, would otherwise
    walk that heap again: in a test process it is ten times a server's (Django, the test
    modules, and once an analysis has run, pandas, SciPy, statsmodels and matplotlib: about
    190,000 objects, 0.1 s per collection)."""
    gc.collect()
    gc.freeze()
    _Frozen.modules = len(sys.modules)


def pytest_collection_finish(session):
    _freeze_what_lives()


def pytest_runtest_logfinish(nodeid, location):
    """Again after a test that imported something (Django starts without the statistics and
    plotting libraries; the first analysis imports them): what an import makes lives as long
    as the process, like what collection made."""
    if len(sys.modules) > _Frozen.modules:
        _freeze_what_lives()


@pytest.hookimpl(wrapper=True)
def pytest_runtest_protocol(item, nextitem):
    """The test being run, for tests/roracle.py's check of its mark."""
    roracle.Running.item = item
    try:
        return (yield)
    finally:
        roracle.Running.item = None


def pytest_configure(config):
    config.pluginmanager.import_plugin("tests.worker_order")
    if config.pluginmanager.has_plugin("django"):
        config.pluginmanager.import_plugin("tests.django_fixtures")


@pytest.fixture
def resources() -> Path:
    return RESOURCES
