"""`make demo-pacs`: the demo's own Orthanc, loaded, and the demo imported through DICOMweb."""

from io import StringIO
from pathlib import Path

import pytest
from django.core.management import call_command

from readerstudy import demo
from readerstudy.models import Image, ReaderStudy
from readerstudy.orthanc_local import free_port, unavailable_reason

pytestmark = [
    pytest.mark.django_db,
    pytest.mark.skipif(bool(unavailable_reason()), reason=f"no Orthanc: {unavailable_reason()}"),
]


def test_demo_pacs_start_seed_and_stop(monkeypatch, settings, derive_once):
    settings.DICOMWEB_RETRIES, settings.DICOMWEB_BACKOFF = 1, 0.05
    port = free_port()
    out = StringIO()
    call_command("demo_pacs", "start", "--port", str(port), stdout=out)
    try:
        assert f"Demo PACS on http://127.0.0.1:{port}/dicom-web (6 instances" in out.getvalue()
        monkeypatch.setenv("DEMO_PACS_PASSWORD", "demo-pacs-password")
        args = ["--dicomweb", f"http://127.0.0.1:{port}/dicom-web", "--dicomweb-user", "demo"]
        args += ["--dicomweb-password-env", "DEMO_PACS_PASSWORD", "--password", "pw-demo-1"]
        call_command("seed_demo", *args, stdout=StringIO())
    finally:
        call_command("demo_pacs", "stop", stdout=StringIO())
    study = ReaderStudy.objects.get(slug=demo.PACS_STUDY_SLUG)
    assert study.dataset.name == demo.PACS_DATASET_NAME
    images = Image.objects.filter(case__dataset=study.dataset)
    assert images.count() == 6 and not images.filter(source_uri="").exists()
    assert not images.filter(display="").exists()
    assert not (Path(settings.MEDIA_ROOT) / "demo-pacs" / "orthanc.pid").exists()


def test_demo_pacs_stop_ignores_a_stale_pid_file(settings):
    pid_file = Path(settings.MEDIA_ROOT) / "demo-pacs" / "orthanc.pid"
    pid_file.parent.mkdir(parents=True)
    pid_file.write_text("1")  # not an Orthanc: must not be signalled
    call_command("demo_pacs", "stop", stdout=StringIO())
    assert not pid_file.exists()
