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

import json
import os
import subprocess
import sys
import tempfile
import time
from collections import Counter
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
    with tempfile.NamedTemporaryFile(suffix=".jsonl") as report:
        env = {
            **os.environ,
            "SIMULATED_STUDY_SWEEP": "full",
            "SIMULATED_STUDY_REPORT": report.name,
        }
        code = subprocess.call(command, cwd=ROOT, env=env)
        met = [json.loads(line) for line in Path(report.name).read_text().splitlines()]
    kinds = Counter(kind for case in met for kind in case["found"])
    print(
        f"simulated-study sweep: {len(met)} cases, {time.perf_counter() - start:.0f} s, exit {code}"
    )
    for kind, count in kinds.most_common():
        cases = [case["case"] for case in met if kind in case["found"]]
        print(f"  {kind}: {count} cases, e.g. {', '.join(cases[:3])}")
    return code


if __name__ == "__main__":
    sys.exit(main())
