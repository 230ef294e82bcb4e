"""Real radiographs derived once per test session, then placed in each test's MEDIA_ROOT.

Decoding a 16-bit X-ray and writing its display, thumbnail and full-depth PNGs costs 1-5 s
(most of it zlib); tests that need real images, not the derivation itself, would pay it in every
set-up (the browser studies, the demo with six radiographs). The first derivation of a source
(by content) and options is real (readerstudy.imaging), into a folder kept for the session;
later ones link the same content-addressed files into the media root asked for and return the
same fields. A failing derivation is not remembered. The tests of the derivation itself
(test_imaging, test_transfer_syntaxes, test_image_limits) call `derive_display_image`.
"""

from __future__ import annotations

import atexit
import hashlib
import os
import shutil
import tempfile
from pathlib import Path

from django.conf import settings

from readerstudy.imaging import DerivedImage, derive_display_image

_DERIVED: dict[tuple, DerivedImage] = {}
_FOLDER: Path | None = None


def _session_folder() -> Path:
    global _FOLDER
    if _FOLDER is None:
        _FOLDER = Path(tempfile.mkdtemp(prefix="readerstudy-radiographs-"))
        atexit.register(shutil.rmtree, _FOLDER, ignore_errors=True)
    return _FOLDER


def _digest(source: Path) -> str:
    return hashlib.sha256(Path(source).read_bytes()).hexdigest()


def place(relative: str, source_root: Path, media_root: Path) -> None:
    """A file of source_root at the same place under media_root (linked: derived files are
    written once, by replacing, never in place)."""
    target = media_root / relative
    if target.exists():
        return
    target.parent.mkdir(parents=True, exist_ok=True)
    try:
        os.link(source_root / relative, target)
    except OSError:
        shutil.copyfile(source_root / relative, target)


def derived_once(source: Path, media_root: Path | None = None, **options) -> DerivedImage:
    """`derive_display_image(source, media_root, **options)` (media_root: MEDIA_ROOT), derived
    once per session for each source content and options."""
    media_root = Path(media_root if media_root is not None else settings.MEDIA_ROOT)
    key = (_digest(source), tuple(sorted(options.items())))
    if key not in _DERIVED:
        _DERIVED[key] = derive_display_image(source, _session_folder(), **options)
    derived = _DERIVED[key]
    for relative in (derived.display, derived.thumbnail, derived.depth):
        if relative:
            place(relative, _session_folder(), media_root)
    return derived
