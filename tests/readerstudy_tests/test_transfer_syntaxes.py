"""Every encoding a hospital exports: import checks decodability, create_study renders it like
the uncompressed reference. Real radiographs from pydicom-data."""

import json
import shutil
from io import StringIO
from pathlib import Path

import numpy as np
import pydicom
import pytest
from django.conf import settings
from django.core.management import CommandError, call_command
from PIL import Image as PILImage
from pydicom.data import get_testdata_file
from pydicom.encaps import encapsulate
from pydicom.uid import MPEG2MPML, JPEG2000Lossless, RLELossless

from readerstudy.imaging import ImagingError, check_source, derive_display_image
from readerstudy.models import Image, Question
from tests.radiographs import derived_once
from tests.readerstudy_tests import rexvqa_builder as rb

pytestmark = pytest.mark.django_db


def real_file(name: str) -> Path:
    return Path(get_testdata_file(name))


def write_file(root: Path, sources: dict[str, Path]) -> Path:
    """A ReXVQA file with one case (and one question) per source DICOM."""
    records = {}
    for study, source in sources.items():
        rel = rb.image_rel(study, "image.dcm")
        target = root / rel
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(source, target)
        records[f"q-{study}"] = rb.record(len(records) + 1, study, ImagePath=[f"../{rel}"])
    return rb.write(root, records, images=False)


def import_file(path: Path, dataset: str = "hospital") -> dict:
    out = StringIO()
    call_command("import_rexvqa", str(path), "--dataset", dataset, "--json", stdout=out)
    return json.loads(out.getvalue())


def rendering(relative: str) -> np.ndarray:
    return np.asarray(PILImage.open(Path(settings.MEDIA_ROOT) / relative), dtype=float)


def correlation(a: np.ndarray, b: np.ndarray) -> float:
    assert a.shape == b.shape
    return float(np.corrcoef(a.ravel(), b.ravel())[0, 1])


def uncompressed_copy(source: Path, target: Path) -> Path:
    ds = pydicom.dcmread(source)
    ds.decompress()
    ds.save_as(target, enforce_file_format=True)
    return target


def compressed_copy(source: Path, target: Path, syntax) -> Path:
    ds = pydicom.dcmread(source)
    ds.compress(syntax)
    ds.save_as(target, enforce_file_format=True)
    return target


def test_hospital_encodings_import_sample_and_render_like_the_reference(tmp_path):
    jpeg_ll_reference = uncompressed_copy(real_file("JPEG-LL.dcm"), tmp_path / "jpeg_ll_unc.dcm")
    path = write_file(
        tmp_path / "release",
        {
            "j2kr": real_file("RG1_J2KR.dcm"),
            "j2ki": real_file("RG1_J2KI.dcm"),
            "unci": real_file("RG1_UNCI.dcm"),
            "jpegll": real_file("JPEG-LL.dcm"),
        },
    )
    summary = import_file(path)
    assert summary["images_created"] == 4
    out = StringIO()
    call_command(
        "create_study", "hospital-study", "--dataset", "hospital", "--sample", "4", stdout=out
    )
    references = {
        "j2kr": real_file("RG1_UNCR.dcm"),
        "j2ki": real_file("RG1_UNCR.dcm"),
        "unci": real_file("RG1_UNCR.dcm"),
        "jpegll": jpeg_ll_reference,
    }
    for study, reference_source in references.items():
        image = Image.objects.get(case__study_id=study)
        assert image.display, study
        reference = derived_once(reference_source)  # the standard, not the subject
        assert (image.width, image.height) == (reference.width, reference.height)
        assert correlation(rendering(image.display), rendering(reference.display)) >= 0.98
        # The full-depth data the viewer windows matches too.
        assert image.depth and reference.depth
        assert (
            correlation(rendering(image.depth)[..., 0], rendering(reference.depth)[..., 0]) >= 0.98
        )
    lossless = Image.objects.get(case__study_id="j2kr")
    reference = derived_once(real_file("RG1_UNCR.dcm"))
    assert lossless.display == reference.display  # lossless: byte-identical display PNG
    assert lossless.depth == reference.depth


@pytest.mark.parametrize("syntax", [RLELossless, JPEG2000Lossless], ids=["rle", "j2k-lossless"])
def test_a_compressed_extremity_radiograph_renders_exactly_like_the_uncompressed_one(
    tmp_path, syntax
):
    compressed = compressed_copy(real_file("RG3_UNCR.dcm"), tmp_path / "rg3.dcm", syntax)
    assert check_source(compressed).transfer_syntax.startswith(syntax.name)
    media = Path(settings.MEDIA_ROOT)
    derived = derive_display_image(compressed, media)
    reference = derived_once(real_file("RG3_UNCR.dcm"))  # the standard, once per session
    assert derived.display == reference.display
    assert derived.depth == reference.depth
    assert derived.dicom_windows == [[550.0, 1024.0, ""]]


def test_other_common_syntaxes_pass_the_import_check():
    for name in ("MR_small_RLE.dcm", "MR_small_jpeg_ls_lossless.dcm", "SC_rgb_jpeg_dcmtk.dcm"):
        info = check_source(real_file(name), decode=True)
        assert info.kind == "dicom"


def test_a_syntax_without_a_decoder_is_refused_at_import_naming_question_path_and_syntax(
    tmp_path,
):
    ds = pydicom.dcmread(real_file("RG3_UNCR.dcm"))
    ds.PixelData = encapsulate([ds.PixelData])
    ds.file_meta.TransferSyntaxUID = MPEG2MPML  # video: pydicom has no decoder for it
    source = tmp_path / "video.dcm"
    ds.save_as(source)
    path = write_file(tmp_path / "release", {"fine": real_file("RG1_UNCR.dcm"), "video": source})
    with pytest.raises(CommandError) as error:
        import_file(path)
    message = str(error.value)
    assert "'q-video'" in message and "ImagePath" in message
    assert "MPEG2 Main Profile / Main Level (1.2.840.10008.1.2.4.100)" in message
    assert "image.dcm" in message
    assert "no pixel-data decoder" in message
    assert not Question.objects.exists()


def test_a_missing_codec_is_refused_at_import_with_the_plugins_to_install(tmp_path, monkeypatch):
    import readerstudy.imaging.sources as sources

    class Missing:
        is_available = False
        missing_dependencies = ["pylibjpeg-openjpeg: not installed"]

    real = sources.get_decoder
    monkeypatch.setattr(
        sources,
        "get_decoder",
        lambda uid: Missing() if uid.name.startswith("JPEG 2000") else real(uid),
    )
    path = write_file(tmp_path / "release", {"j2k": real_file("RG1_J2KR.dcm")})
    with pytest.raises(CommandError) as error:
        import_file(path)
    message = str(error.value)
    assert "'q-j2k'" in message and "JPEG 2000 Image Compression (Lossless Only)" in message
    assert "pylibjpeg-openjpeg" in message
    assert not Question.objects.exists()


def test_multi_frame_and_palette_sources_are_refused_clearly(tmp_path):
    with pytest.raises(ImagingError, match=r"multi-frame DICOM \(2 frames\)"):
        check_source(real_file("SC_rgb_2frame.dcm"))
    ds = pydicom.dcmread(real_file("RG3_UNCR.dcm"))
    ds.PhotometricInterpretation = "PALETTE COLOR"
    ds.save_as(tmp_path / "palette.dcm")
    with pytest.raises(ImagingError, match=r"PALETTE COLOR .* is not supported"):
        check_source(tmp_path / "palette.dcm")


def test_colour_sources_are_shown_as_grey(tmp_path):
    for name in ("SC_rgb_rle.dcm", "SC_rgb_jpeg_dcmtk.dcm"):
        derived = derive_display_image(real_file(name), tmp_path)
        shown = PILImage.open(tmp_path / derived.display)
        assert shown.mode == "L" and shown.size == (100, 100)
        assert len(np.unique(np.asarray(shown))) > 2
        assert derived.depth == ""  # 8-bit colour: the display PNG is all there is


def test_truncated_pixel_data_is_refused_at_import(tmp_path):
    data = real_file("RG3_UNCR.dcm").read_bytes()
    source = tmp_path / "truncated.dcm"
    source.write_bytes(data[: len(data) // 2])
    with pytest.raises(ImagingError):
        check_source(source)


def test_checks_and_derivation_run_on_bytes_as_on_paths(tmp_path):
    """A DICOMweb source hands over instance bytes: the same checks and the same result."""
    data = real_file("RG1_J2KR.dcm").read_bytes()
    assert check_source(data) == check_source(real_file("RG1_J2KR.dcm"))
    from_bytes = derive_display_image(data, tmp_path)
    from_path = derive_display_image(real_file("RG1_J2KR.dcm"), tmp_path)
    assert from_bytes == from_path
    with pytest.raises(ImagingError, match="neither a PNG nor a DICOM"):
        check_source(b"not an image at all")
