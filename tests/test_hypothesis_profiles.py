"""CI must draw the same Hypothesis examples every run: every property test follows the profile.

A test that pinned its own `derandomize`, `database` or seed would draw at random in CI (or
never at random under `make fuzz`); this walks the collected tests and refuses that. A budget
written as a bare number would not grow under `make fuzz`; the source is checked for that.
"""

import os
import re
import subprocess
import sys
from pathlib import Path

from hypothesis import settings

ROOT = Path(__file__).resolve().parents[1]


def test_every_property_test_follows_the_loaded_profile(request):
    profile = settings.default
    checked = 0
    for item in request.session.items:
        test = getattr(item, "obj", None)
        pinned = getattr(test, "_hypothesis_internal_use_settings", None)
        if pinned is None:
            continue
        checked += 1
        assert pinned.derandomize == profile.derandomize, item.nodeid
        assert pinned.database is profile.database, item.nodeid
        assert getattr(test, "_hypothesis_internal_use_seed", None) is None, item.nodeid
    assert checked or len(request.session.items) < 50  # a full run holds property tests


def test_the_ci_profile_is_derandomized_and_prints_blobs():
    """`.ci/run` selects it; run in a fresh interpreter as CI would."""
    code = (
        "from tests import profiles; profiles.load(); from hypothesis import settings;"
        "s = settings.default; print(s.derandomize, s.database, s.print_blob)"
    )
    env = {**os.environ, "HYPOTHESIS_PROFILE": "ci"}
    result = subprocess.run(
        [sys.executable, "-c", code], cwd=ROOT, env=env, capture_output=True, text=True
    )
    assert result.stdout.split() == ["True", "None", "True"], result.stderr
    assert "HYPOTHESIS_PROFILE=ci" in (ROOT / ".ci" / "run").read_text()


def test_every_example_budget_is_sized_by_the_profile():
    """`max_examples=examples(n)` (tests/profiles.py), never a bare number."""
    pinned = re.compile(r"max_examples\s*=\s*(?!examples\()")
    found = [
        f"{path.relative_to(ROOT)}:{text[: match.start()].count(chr(10)) + 1}"
        for path in sorted((ROOT / "tests").rglob("*.py"))
        if path.name != "profiles.py"
        for text in [path.read_text()]
        for match in pinned.finditer(text)
    ]
    assert not found, found
