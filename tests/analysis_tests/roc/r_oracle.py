"""Running the R reference packages from a test: where they are, and skipping (with the
reason) where they are not. See ../shared/r-oracles/README.md for installing them."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

R_LIBS = os.environ.get("R_LIBS", "/opt/r-oracles")
RESULTS = Path(__file__).parent / "results"


def require(package: str) -> None:
    """Skip the calling test unless Rscript and `package` (in R_LIBS) are present."""
    if shutil.which("Rscript") is None:
        pytest.skip("Rscript is not installed (see ../shared/r-oracles/README.md)")
    if not (Path(R_LIBS) / package).is_dir():
        pytest.skip(f"the R package {package} is not in R_LIBS={R_LIBS}")


def rscript(*args: str, timeout: int = 300) -> str:
    """Run `Rscript args...` in the results folder with R_LIBS set; fail with R's error."""
    out = subprocess.run(
        ["Rscript", *args],
        cwd=RESULTS,
        env={**os.environ, "R_LIBS": R_LIBS},
        capture_output=True,
        text=True,
        timeout=timeout,
    )
    assert out.returncode == 0, out.stderr[-3000:]
    return out.stdout
