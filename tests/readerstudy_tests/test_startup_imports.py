"""Starting Django loads none of the analysis's heavy libraries, nor does serving a page.

matplotlib, scipy, statsmodels and scikit-learn cost every process that imports them about
150 MB and seconds of start-up; only the process that computes an analysis or draws a figure
(a task worker, export_analysis) imports them, inside the functions that use them. Start-up
alone does not load pandas or pydicom either (a management command that needs neither, a
worker before its first job). Checked in a fresh interpreter: the test process itself has long
imported everything.
"""

import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
HEAVY = ("matplotlib", "scipy", "statsmodels", "sklearn")
NOT_AT_START = (*HEAVY, "pandas", "pydicom")

CODE = """
import sys
import django

heavy, not_at_start = {heavy!r}, {not_at_start!r}
django.setup()
print("setup", *[m for m in not_at_start if m in sys.modules])
# What any request imports: the URLconf (every view module) and the case page's templates.
from django.template.loader import get_template
from django.urls import get_resolver

get_resolver().url_patterns
get_template("annotation/case.html")
get_template("annotation/_case.html")
print("request", *[m for m in heavy if m in sys.modules])
"""


def test_django_setup_and_a_case_page_import_no_analysis_library():
    env = {
        **os.environ,
        "ENV_FILE": os.devnull,
        "DJANGO_SETTINGS_MODULE": "readerstudy.config.settings",
    }
    out = subprocess.run(
        [sys.executable, "-c", CODE.format(heavy=HEAVY, not_at_start=NOT_AT_START)],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
    )
    assert out.returncode == 0, out.stderr
    assert out.stdout.splitlines() == ["setup", "request"]
