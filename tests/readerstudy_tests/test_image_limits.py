"""Red-team finding 8: images that exhaust memory or hang the import are refused at import,
from their headers, naming the question; create_study's form answers with a message, not 500."""

import json
import os
import shutil
import signal
import struct
import zlib
from contextlib import contextmanager
from io import StringIO
from pathlib import Path

import pydicom
import pytest
from django.contrib.auth.models import Permission
from django.core.management import CommandError, call_command
from django.urls import reverse
from pydicom.data import get_testdata_file

from readerstudy.imaging import ImagingError, check_source, derive_display_image
from readerstudy.models import Image, Question, ReaderStudy
from tests.factories import UserFactory
from tests.readerstudy_tests import rexvqa_builder as rb
from tests.readerstudy_tests.test_settings import load_settings

pytestmark = pytest.mark.django_db


@contextmanager
def deadline(seconds: int):
    """Fail instead of hanging: SIGALRM interrupts a blocking open() of a FIFO."""

    def expire(signum, frame):
        raise AssertionError(f"still blocked after {seconds} s")

    previous = signal.signal(signal.SIGALRM, expire)
    signal.alarm(seconds)
    try:
        yield
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, previous)


def png_header_only(width: int, height: int) -> bytes:
    """A valid PNG header claiming width x height, with a token IDAT: 100 bytes on disk."""

    def chunk(kind: bytes, data: bytes) -> bytes:
        body = kind + data
        return struct.pack(">I", len(data)) + body + struct.pack(">I", zlib.crc32(body))

    ihdr = struct.pack(">IIBBBBB", width, height, 8, 0, 0, 0, 0)
    return (
        b"\x89PNG\r\n\x1a\n"
        + chunk(b"IHDR", ihdr)
        + chunk(b"IDAT", zlib.compress(b"\x00" * 64))
        + chunk(b"IEND", b"")
    )


def dicom_claiming(tmp_path: Path, rows: int, columns: int, frames: int = 1) -> Path:
    ds = pydicom.dcmread(get_testdata_file("MR_small_RLE.dcm"))
    ds.Rows, ds.Columns = rows, columns
    if frames > 1:
        ds.NumberOfFrames = frames
    target = tmp_path / f"claims_{rows}x{columns}x{frames}.dcm"
    ds.save_as(target)
    return target


def release_with(tmp_path: Path, write_image) -> Path:
    """A ReXVQA release with two cases: a good PNG and the image `write_image` puts in place."""
    records = {
        "q-good": rb.record(1, "good"),
        "q-bad": rb.record(2, "bad", ImagePath=[f"../{rb.image_rel('bad', 'image.png')}"]),
    }
    path = rb.write(tmp_path, {"q-good": records["q-good"]})
    path.write_text(json.dumps(records))
    target = tmp_path / rb.image_rel("bad", "image.png")
    target.parent.mkdir(parents=True, exist_ok=True)
    write_image(target)
    return path


def import_errors(path: Path) -> str:
    with pytest.raises(CommandError) as error:
        call_command("import_rexvqa", str(path), "--json", stdout=StringIO())
    assert not Question.objects.exists()
    return str(error.value)


def test_a_20000_px_square_png_is_refused_at_import_from_its_header(tmp_path):
    path = release_with(tmp_path, lambda t: t.write_bytes(png_header_only(20000, 20000)))
    assert (tmp_path / rb.image_rel("bad", "image.png")).stat().st_size < 200
    message = import_errors(path)
    assert "'q-bad'" in message and "ImagePath" in message
    assert "20000 x 20000 = 400,000,000 pixels exceeds the limit of 100,000,000" in message


def test_the_pixel_cap_follows_the_setting(tmp_path, settings):
    settings.MAX_IMAGE_PIXELS = 1_000_000
    source = Path(get_testdata_file("RG1_UNCR.dcm"))
    path = release_with(tmp_path, lambda t: shutil.copyfile(source, t))
    message = import_errors(path)
    assert "'q-bad'" in message and "1841 x 1955 = 3,599,155 pixels" in message
    assert "MAX_IMAGE_PIXELS" in message


def test_pillow_refuses_bombs_beyond_its_own_limit_as_a_clear_error(tmp_path):
    source = tmp_path / "bomb.png"
    source.write_bytes(png_header_only(30000, 30000))
    with pytest.raises(ImagingError, match="refused as a decompression bomb"):
        check_source(source, max_pixels=10**12)


def test_dicom_rows_columns_and_frames_are_capped_from_the_header(tmp_path):
    huge = dicom_claiming(tmp_path, 30000, 30000)
    with pytest.raises(ImagingError, match="30000 x 30000 = 900,000,000 pixels exceeds"):
        check_source(huge)
    frames = dicom_claiming(tmp_path, 4000, 4000, frames=10)
    with pytest.raises(ImagingError, match=r"4000 x 4000 x 10 frames = 160,000,000 pixels"):
        check_source(frames)
    path = release_with(tmp_path / "release", lambda t: shutil.copyfile(huge, t))
    assert "'q-bad'" in import_errors(path)


def test_a_fifo_in_the_images_root_is_refused_without_hanging(tmp_path):
    path = release_with(tmp_path, lambda t: os.mkfifo(t))
    with deadline(20):
        message = import_errors(path)
    assert "'q-bad'" in message and "not a regular file" in message


def test_a_directory_or_a_symlink_out_of_the_root_is_refused(tmp_path):
    path = release_with(tmp_path, lambda t: t.mkdir())
    assert "not a regular file" in import_errors(path)


@pytest.mark.parametrize("kind", ["bomb", "fifo", "gone"])
def test_create_study_form_answers_with_the_case_and_the_reason_never_500(
    client, study, tmp_path, kind
):
    """Images imported before the checks existed, or changed since: the form says what."""
    bad = tmp_path / "bad.png"
    if kind == "bomb":
        bad.write_bytes(png_header_only(20000, 20000))
    elif kind == "fifo":
        os.mkfifo(bad)
    Image.objects.update(source_path=str(bad), display="")
    creator = UserFactory(username="creator")
    creator.user_permissions.add(Permission.objects.get(codename="add_readerstudy"))
    client.force_login(creator)
    form = {
        "dataset": study.dataset.id,
        "slug": "from-form",
        "title": "x",
        "sample": 2,
        "seed": 1,
        "stratify": "none",
    }
    with deadline(20):
        response = client.post(reverse("study-create"), form)
    assert response.status_code == 200
    text = response.content.decode()
    expected = {"bomb": "exceeds the limit", "fifo": "not a regular file", "gone": "not found"}
    assert expected[kind] in text and "case " in text
    assert not ReaderStudy.objects.filter(slug="from-form").exists()


def test_derivation_checks_the_cap_too(tmp_path):
    source = Path(get_testdata_file("RG3_UNCR.dcm"))
    with pytest.raises(ImagingError, match="exceeds the limit of 1,000"):
        derive_display_image(source, tmp_path, max_pixels=1000)


def test_max_image_pixels_comes_from_the_environment_and_fails_loudly():
    bad = load_settings(DEBUG="1", MAX_IMAGE_PIXELS="lots")
    assert bad.returncode != 0 and "MAX_IMAGE_PIXELS='lots' is not an integer" in bad.stderr
    assert load_settings(DEBUG="1", MAX_IMAGE_PIXELS="5000000").returncode == 0
