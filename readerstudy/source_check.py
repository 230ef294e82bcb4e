"""Minimal checks on a fetched DICOM instance before it is accepted into an import.

STOPGAP: issue 12's branch adds `readerstudy.imaging.check_source(...)` (decodability for every
transfer syntax, MAX_IMAGE_PIXELS from the header, regular files only). When that lands, this
module's `check_dicom_source` should become a thin call to it (or be replaced by it); it is kept
narrow on purpose so the swap touches one place (`readerstudy.dicomweb.DicomwebSource._get`).

What it checks now: a DICOM Part-10 file, a header small enough (rows x columns x frames under
MAX_IMAGE_PIXELS) before anything is decoded, and pixel data that `imaging.display_pixels`
can actually turn into a display image (so an unsupported encoding fails at import, naming the
question, and not later in create_study).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import pydicom
from django.conf import settings

from readerstudy.imaging import ImagingError, display_pixels

DEFAULT_MAX_IMAGE_PIXELS = 100_000_000


class SourceCheckError(ValueError):
    pass


@dataclass(frozen=True)
class SourceInfo:
    view_position: str
    modality: str


def check_dicom_source(path: Path) -> SourceInfo:
    try:
        header = pydicom.dcmread(path, stop_before_pixels=True)
    except Exception as exc:  # pydicom raises many types for broken files
        raise SourceCheckError(f"not a readable DICOM file ({exc})") from exc
    limit = int(getattr(settings, "MAX_IMAGE_PIXELS", DEFAULT_MAX_IMAGE_PIXELS))
    try:
        rows, columns = int(header.Rows), int(header.Columns)
        frames = int(header.get("NumberOfFrames", 1) or 1)
    except (AttributeError, TypeError, ValueError) as exc:
        raise SourceCheckError("has no image (Rows/Columns missing)") from exc
    if rows * columns * frames > limit:
        raise SourceCheckError(
            f"{columns}x{rows}x{frames} pixels is more than MAX_IMAGE_PIXELS ({limit})"
        )
    try:
        display_pixels(path)
    except ImagingError as exc:
        raise SourceCheckError(str(exc)) from exc
    return SourceInfo(
        view_position=str(header.get("ViewPosition", "") or ""),
        modality=str(header.get("Modality", "") or ""),
    )
