"""The statistics package works in a notebook: importing it loads no Django, and its letters
are the platform's letters."""

import subprocess
import sys
from pathlib import Path

from analysis import stats
from readerstudy.vocabulary import LETTERS

ROOT = Path(__file__).resolve().parents[2]


def test_statistics_import_without_django():
    code = (
        "import sys\n"
        "import analysis.stats, analysis.plots, analysis.package_files\n"
        "import analysis.pipeline\n"
        "loaded = sorted(m for m in sys.modules if m == 'django' or m.startswith('django.'))\n"
        "print(','.join(loaded))\n"
    )
    env = {"PATH": "/usr/bin:/bin", "PYTHONPATH": str(ROOT)}  # no DJANGO_SETTINGS_MODULE
    out = subprocess.run(
        [sys.executable, "-c", code], cwd=ROOT, env=env, capture_output=True, text=True, check=True
    )
    assert out.stdout.strip() == ""


def test_statistics_letters_are_the_vocabulary_letters():
    assert stats.LETTERS == LETTERS
