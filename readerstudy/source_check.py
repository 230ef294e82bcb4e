"""Checks on a DICOM instance fetched from a DICOMweb server before an import accepts it.

The pixel checks are imaging's `check_source` (DICOM by content, MAX_IMAGE_PIXELS from the
header, a decoder installed for the transfer syntax, one greyscale/colour frame), the same as
for files under an images root; this adds the header facts the importer records.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import pydicom
from django.conf import settings

from readerstudy.imaging import ImagingError, check_source


class SourceCheckError(ValueError):
    pass


@dataclass(frozen=True)
class SourceInfo:
    view_position: str
    modality: str


def check_dicom_source(path: Path) -> SourceInfo:
    try:
        info = check_source(path, max_pixels=settings.MAX_IMAGE_PIXELS)
    except ImagingError as exc:
        raise SourceCheckError(str(exc)) from exc
    if info.kind != "dicom":
        raise SourceCheckError("is not a DICOM instance")
    header = pydicom.dcmread(path, stop_before_pixels=True)
    return SourceInfo(
        view_position=str(header.get("ViewPosition", "") or ""),
        modality=str(header.get("Modality", "") or ""),
    )
