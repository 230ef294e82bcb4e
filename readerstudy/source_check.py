"""Checks on a DICOM instance fetched from a DICOMweb server before an import accepts it.

The checks are imaging's `check_source` (DICOM by content, MAX_IMAGE_PIXELS from the header, a
decoder installed for the transfer syntax, one greyscale/colour frame), the same as for files
under an images root; the header facts it returns (view, modality) are what the importer records.
"""

from __future__ import annotations

from pathlib import Path

from django.conf import settings

from readerstudy.imaging import ImagingError, SourceInfo, check_source


class SourceCheckError(ValueError):
    pass


def check_dicom_source(path: Path) -> SourceInfo:
    try:
        info = check_source(path, max_pixels=settings.MAX_IMAGE_PIXELS)
    except ImagingError as exc:
        raise SourceCheckError(str(exc)) from exc
    if info.kind != "dicom":
        raise SourceCheckError("is not a DICOM instance")
    return info
