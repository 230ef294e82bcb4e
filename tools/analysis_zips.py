"""Make, or compare, the analysis ZIPs a PI downloads for the demo and a simulated crossover.

    python tools/analysis_zips.py make DIR      # on a fresh SQLite database under DIR
    python tools/analysis_zips.py compare OLD NEW

A refactoring must leave every number a PI publishes unchanged: `make` on the commit before and
after, then `compare` says which members differ, byte for byte, once the dates and times a
member carries of its own making (README.txt's date, PDF and SVG metadata, ZIP entry times)
are blanked. Everything goes through the commands and URLs people use (migrate, seed_demo,
simulate_study, the ZIP's own URL as a PI), so the tool runs unchanged across moves of modules.
"""

from __future__ import annotations

import difflib
import io
import os
import re
import sys
import zipfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SIMULATED = ("sim-crossover", ["--design", "crossover", "--readers", "4", "--xrays", "16"])
# Dates and times a member writes of itself: the export date, matplotlib's PDF/SVG metadata.
STAMPS = [
    re.compile(rb"\d{4}-\d{2}-\d{2}([T ]\d{2}:\d{2}(:\d{2}(\.\d+)?)?([+-]\d{2}:?\d{2}|Z)?)?"),
    re.compile(rb"/CreationDate \(D:[^)]*\)"),
    re.compile(rb"<dc:date>[^<]*</dc:date>"),
    # A hash of when the answers were saved: two runs of the same data differ in it.
    re.compile(rb"[Dd]ata[ _]version\W+[0-9a-f]{16,}"),
]


def _settings_module() -> str:
    found = re.search(r'"DJANGO_SETTINGS_MODULE",\s*"([^"]+)"', (ROOT / "manage.py").read_text())
    if not found:
        sys.exit("manage.py names no DJANGO_SETTINGS_MODULE")
    return found.group(1)


def make(out: Path) -> None:
    out.mkdir(parents=True, exist_ok=True)
    os.environ.update(
        DJANGO_SETTINGS_MODULE=_settings_module(),
        DATABASE_URL=f"sqlite:///{out / 'db.sqlite3'}",
        MEDIA_ROOT=str(out / "media"),
        TASKS_URL="immediate://",
        DEBUG="1",
    )
    sys.path.insert(0, str(ROOT))
    import django

    django.setup()
    from django.core.management import call_command
    from django.test import Client
    from django.urls import reverse

    from readerstudy.models import Membership, ReaderStudy, Role

    call_command("migrate", verbosity=0)
    call_command("seed_demo", verbosity=0)
    slug, options = SIMULATED
    call_command("simulate_study", slug, *options, verbosity=0)
    client = Client(HTTP_HOST="127.0.0.1")
    for study in ReaderStudy.objects.order_by("slug"):
        pi = Membership.objects.filter(study=study, role=Role.PI).order_by("pk").first()
        if pi is None:
            continue
        client.force_login(pi.user)
        response = client.get(reverse("analysis-zip", args=[study.slug]))
        if response.status_code != 200:
            print(f"{study.slug}: HTTP {response.status_code}, no ZIP")
            continue
        (out / f"{study.slug}.zip").write_bytes(response.content)
        print(f"{study.slug}: {len(response.content)} bytes")


def _members(path: Path) -> dict[str, bytes]:
    with zipfile.ZipFile(path) as archive:
        return {name: archive.read(name) for name in archive.namelist()}


def _blank(data: bytes) -> bytes:
    if data.startswith(b"PK"):  # an XLSX: its parts, each blanked
        with zipfile.ZipFile(io.BytesIO(data)) as inner:
            names = sorted(inner.namelist())
            return b"\0".join(name.encode() + b"\0" + _blank(inner.read(name)) for name in names)
    for stamp in STAMPS:
        data = stamp.sub(b"<stamp>", data)
    return data


def compare(old: Path, new: Path) -> int:
    differences = 0
    for old_zip in sorted(old.glob("*.zip")):
        new_zip = new / old_zip.name
        if not new_zip.exists():
            print(f"{old_zip.name}: missing in {new}")
            differences += 1
            continue
        before, after = _members(old_zip), _members(new_zip)
        for name in sorted(before.keys() | after.keys()):
            if name not in after or name not in before:
                print(f"{old_zip.name}:{name}: only in {'old' if name in before else 'new'}")
                differences += 1
            elif _blank(before[name]) != _blank(after[name]):
                differences += 1
                print(f"{old_zip.name}:{name}: differs")
                if name.endswith((".csv", ".txt", ".md", ".json")):
                    diff = difflib.unified_diff(
                        io.StringIO(before[name].decode()).readlines(),
                        io.StringIO(after[name].decode()).readlines(),
                        lineterm="",
                        n=0,
                    )
                    print("".join(list(diff)[:20]))
    print(f"{differences} difference(s)")
    return 1 if differences else 0


if __name__ == "__main__":
    if len(sys.argv) == 3 and sys.argv[1] == "make":
        make(Path(sys.argv[2]).resolve())
    elif len(sys.argv) == 4 and sys.argv[1] == "compare":
        sys.exit(compare(Path(sys.argv[2]), Path(sys.argv[3])))
    else:
        sys.exit(__doc__)
