"""The simulated-study sweep, longer than the suite's selection: every design (single arm,
crossover, second read, split-plot with and without anchor) x every stop point (before anyone
reads, one arm half read, one reader finished, all finished) under a pairwise covering of the
analysis policy switches, each analysed through the worker's job with every figure and the
ZIP (tests/analysis_tests/test_simulated_study.py with SIMULATED_STUDY_SWEEP=full).

Prints pytest's summary and the wall time; a failure of any case is a failed run. About
40 minutes on the 2-core development machine.
Run: .venv/bin/python benchmarks/simulated_study_bench.py [pytest options, e.g. -k crossover]
"""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def main() -> int:
    start = time.perf_counter()
    command = [
        str(ROOT / ".venv" / "bin" / "pytest"),
        "-q",
        "-p",
        "no:randomly",
        "-rxXf",
        "tests/analysis_tests/test_simulated_study.py::test_simulated_study",
        *sys.argv[1:],
    ]
    env = {**os.environ, "SIMULATED_STUDY_SWEEP": "full"}
    code = subprocess.call(command, cwd=ROOT, env=env)
    print(f"simulated-study sweep: {time.perf_counter() - start:.0f} s, exit {code}")
    return code


if __name__ == "__main__":
    sys.exit(main())
