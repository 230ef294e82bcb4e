"""A real PACS for the DICOMweb tests: Debian's Orthanc, started once per test session."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest

from readerstudy.orthanc_local import LocalOrthanc, unavailable_reason

# The pydicom-data radiographs loaded into the PACS: (file, study UID, series UID, SOP UID).
RADIOGRAPHS = ("RG1_UNCR.dcm", "RG1_J2KR.dcm", "RG1_J2KI.dcm", "JPEG-LL.dcm", "RG3_UNCR.dcm")
COMPRESSED = {"RG1_J2KR.dcm", "RG1_J2KI.dcm", "JPEG-LL.dcm"}

# Rendering JPEG 2000 / JPEG Lossless needs pydicom's pixel-data plugins (issue 12 adds them).
HAS_PYLIBJPEG = all(
    importlib.util.find_spec(name) is not None for name in ("pylibjpeg", "openjpeg", "libjpeg")
)
needs_pylibjpeg = pytest.mark.skipif(
    not HAS_PYLIBJPEG,
    reason="decoding JPEG 2000 / JPEG Lossless needs pylibjpeg, pylibjpeg-openjpeg, "
    "pylibjpeg-libjpeg",
)


def radiograph(name: str) -> Path:
    from pydicom.data import get_testdata_file

    return Path(get_testdata_file(name))


def uids(name: str) -> tuple[str, str, str]:
    import pydicom

    ds = pydicom.dcmread(radiograph(name), stop_before_pixels=True)
    return str(ds.StudyInstanceUID), str(ds.SeriesInstanceUID), str(ds.SOPInstanceUID)


@pytest.fixture(scope="session")
def orthanc(tmp_path_factory):
    """Orthanc on 127.0.0.1 (free port, auth on, remote access off) holding RADIOGRAPHS."""
    reason = unavailable_reason()
    if reason:
        pytest.skip(f"no local Orthanc PACS: {reason}")
    server = LocalOrthanc(tmp_path_factory.mktemp("orthanc"))
    server.start()
    try:
        server.store([radiograph(name) for name in RADIOGRAPHS])
        yield server
    finally:
        server.stop()


@pytest.fixture
def pacs(orthanc, settings):
    """The session's Orthanc, running, with short timeouts and retries for the tests."""
    orthanc.start()  # again, in case a test stopped it and failed before restarting it
    settings.DICOMWEB_TIMEOUT = 10
    settings.DICOMWEB_RETRIES = 1
    settings.DICOMWEB_BACKOFF = 0.05
    return orthanc
