"""The README's "Where things live" table names every module and command folder there is, and
nothing that is gone (issue 21: written from the code, kept true by this test)."""

import re
from pathlib import Path

from django.conf import settings

ROOT = Path(settings.BASE_DIR)
FOLDERS = {
    "readerstudy/config/",
    "readerstudy/imaging/",
    "readerstudy/jobs/",
    "readerstudy/predictions/",
    "readerstudy/design/",
    "readerstudy/services/",
    "readerstudy/templatetags/",
    "analysis/templatetags/",
    "annotation/templatetags/",
    "readerstudy/management/commands/",
    "analysis/management/commands/",
}  # one line each


def table_entries() -> set[str]:
    text = (ROOT / "README.md").read_text()
    section = text[text.index("### Where things live") :]
    section = section[: section.index("\n## ")]
    return set(re.findall(r"^\| `([^`]+)`", section, flags=re.M))


def modules() -> set[str]:
    found = set()
    for app in ("readerstudy", "annotation", "analysis", "tools"):
        for path in (ROOT / app).rglob("*.py"):
            rel = path.relative_to(ROOT).as_posix()
            if "/migrations/" in rel or path.name == "__init__.py":
                continue
            folder = next((f for f in FOLDERS if rel.startswith(f)), None)
            found.add(folder or rel)
    return found


def test_where_things_live_lists_every_module():
    entries = table_entries()
    assert modules() - entries == set()
    gone = {e for e in entries if not (ROOT / e.split(",")[0]).exists()}
    assert gone == set()
