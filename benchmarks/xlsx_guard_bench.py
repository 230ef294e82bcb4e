"""Time and memory of refusing hostile question-bank workbooks (issue 38): a DOCTYPE hidden
after a 5 KB comment, and one in a UTF-16 part, each expanding to 100 MB of text if read.

Each workbook is read in a fresh process (`read_question_bank`, as an upload is); reported:
wall time of the read and the process's peak resident memory above what it held before.
Goal: refused by name within 1 s and 50 MB.
Run: .venv/bin/python benchmarks/xlsx_guard_bench.py
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
GOAL_SECONDS, GOAL_MB = 1.0, 50

CHILD = """
import io, json, os, resource, sys, time
import django
django.setup()
import tests.readerstudy_tests.test_workbook_xml as cases
from readerstudy.question_bank import read_question_bank
data = cases._bank_with(cases.STRINGS, getattr(cases, sys.argv[1])())
before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
started = time.perf_counter()
try:
    read_question_bank(io.BytesIO(data), "bank.xlsx")
    message = "NOT REFUSED"
except Exception as exc:
    message = str(exc)
seconds = time.perf_counter() - started
peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
print(json.dumps({"bytes": len(data), "seconds": seconds, "mb": (peak - before) / 1024,
                  "message": message}))
"""


def main() -> int:
    env = {**os.environ, "DJANGO_SETTINGS_MODULE": "readerstudy.config.settings", "DEBUG": "1"}
    failed = False
    for case in ("hidden_doctype", "utf16_doctype"):
        out = subprocess.run(
            [sys.executable, "-c", CHILD, case],
            cwd=ROOT,
            env=env,
            capture_output=True,
            text=True,
            check=True,
        )
        result = json.loads(out.stdout.strip().splitlines()[-1])
        ok = (
            result["seconds"] < GOAL_SECONDS
            and result["mb"] < GOAL_MB
            and "DTD" in (result["message"])
        )
        failed |= not ok
        print(
            f"{case}: {result['bytes']} B workbook refused in {result['seconds'] * 1000:.1f} ms, "
            f"+{result['mb']:.1f} MB peak RSS ({'ok' if ok else 'MISSED'}): {result['message']}"
        )
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
