"""Running the reference R packages (MRMCaov, RJafroc) from a test: where they are, and
skipping (with the reason) where they are not. See ../shared/r-oracles/README.md for
installing them; .ci/run installs them and exports R_LIBS. Mark such tests `roracle`."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

R_LIBS = os.environ.get("R_LIBS", "/opt/r-oracles")
# The R scripts of the ROC oracles (and the data they read) live beside those tests.
ROC_RESULTS = Path(__file__).parent / "analysis_tests" / "roc" / "results"


def require(*packages: str) -> None:
    """Skip the calling test unless Rscript and every one of `packages` (in R_LIBS) are
    present."""
    if shutil.which("Rscript") is None:
        pytest.skip("Rscript is not installed (see ../shared/r-oracles/README.md)")
    for package in packages:
        if not (Path(R_LIBS) / package).is_dir():
            pytest.skip(f"the R package {package} is not in R_LIBS={R_LIBS}")


class Running:
    """The test being run (set by tests/conftest.py around its setup, call and teardown)."""

    item: pytest.Item | None = None


def _check_marked() -> None:
    """A test that runs R carries the `roracle` mark: .ci/run runs those once, on SQLite, and
    tests/worker_order.py starts them first; an unmarked one ran R twice in CI, late."""
    item = Running.item
    if item is not None and item.get_closest_marker("roracle") is None:
        raise AssertionError(f"{item.nodeid} runs R: mark it `pytest.mark.roracle`")


def rscript(*args: str, timeout: int = 300, cwd: Path = ROC_RESULTS) -> str:
    """Run `Rscript args...` in `cwd` with R_LIBS set; fail with R's error."""
    _check_marked()
    out = subprocess.run(
        ["Rscript", *args],
        cwd=cwd,
        env={**os.environ, "R_LIBS": R_LIBS},
        capture_output=True,
        text=True,
        timeout=timeout,
    )
    assert out.returncode == 0, out.stderr[-3000:]
    return out.stdout


def run_r(code: str, cwd: Path, timeout: int = 300) -> str:
    """Run the R program `code` (a file written in `cwd`) there; R's standard output."""
    script = cwd / "_roracle.R"
    script.write_text(code)
    try:
        return rscript(str(script), timeout=timeout, cwd=cwd)
    finally:
        script.unlink()
