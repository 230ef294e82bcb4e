"""Hypothesis profiles, chosen by HYPOTHESIS_PROFILE (loaded by tests/conftest.py).

`ci` (.ci/run) draws the same examples on every run, so a red CI means the code changed, never
the dice; a failure prints the blob that reproduces it. `dev` (the default, `make test`) draws
afresh each run and remembers failures in .hypothesis/. `fuzz` (`make fuzz`) draws afresh and
ten times as many. Tests never pin derandomize, database or a seed (tests/test_hypothesis_
profiles.py checks); they size their budget with `examples(n)`.
"""

from __future__ import annotations

import os

from hypothesis import HealthCheck, settings

PROFILE = os.environ.get("HYPOTHESIS_PROFILE", "dev")
FUZZ_FACTOR = 10

_COMMON = {"deadline": None, "suppress_health_check": [HealthCheck.too_slow]}
settings.register_profile("ci", derandomize=True, database=None, print_blob=True, **_COMMON)
settings.register_profile("dev", **_COMMON)
settings.register_profile("fuzz", max_examples=1_000, print_blob=True, **_COMMON)


def load() -> None:
    settings.load_profile(PROFILE)


def examples(n: int) -> int:
    """A test's example budget: n, or FUZZ_FACTOR times n under `make fuzz`."""
    return n * FUZZ_FACTOR if PROFILE == "fuzz" else n
