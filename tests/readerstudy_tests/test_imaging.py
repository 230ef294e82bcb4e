"""The display pipeline on real radiographs from pydicom-data and on 8/16-bit PNGs."""

from pathlib import Path

import numpy as np
import pydicom
import pytest
from PIL import Image
from pydicom.data import get_testdata_file
from pydicom.pixels import apply_modality_lut

from readerstudy.imaging import ImagingError, decode_codes, derive_display_image, display_pixels
from readerstudy.imaging.derive import is_reading_window


def test_rg1_monochrome1_chest_shows_lungs_darker_than_spine():
    path = get_testdata_file("RG1_UNCR.dcm")
    ds = pydicom.dcmread(path)
    assert ds.PhotometricInterpretation == "MONOCHROME1"
    px = display_pixels(Path(path)).pixels
    h, w = px.shape
    assert px.dtype == np.uint8 and px.shape == (1955, 1841)
    # Sample boxes in the mid zones: the spine in the middle, the lungs either side.
    band = slice(int(h * 0.35), int(h * 0.45))
    spine = px[band, int(w * 0.47) : int(w * 0.53)].mean()
    right_lung = px[band, int(w * 0.2) : int(w * 0.3)].mean()
    left_lung = px[band, int(w * 0.7) : int(w * 0.8)].mean()
    assert spine > right_lung + 20
    assert spine > left_lung + 20


def test_rg1_uses_the_header_window():
    path = get_testdata_file("RG1_UNCR.dcm")
    ds = pydicom.dcmread(path)
    stored = apply_modality_lut(ds.pixel_array, ds).astype(float)
    centre, width = float(ds.WindowCenter), float(ds.WindowWidth)
    expected = np.clip(((stored - (centre - 0.5)) / (width - 1) + 0.5), 0, 1)
    expected = 255 - np.rint(expected * 255)  # MONOCHROME1
    px = display_pixels(Path(path)).pixels.astype(float)
    assert np.abs(px - expected).max() <= 1


def test_modality_lut_is_applied(tmp_path):
    path = get_testdata_file("mlut_18.dcm")
    ds = pydicom.dcmread(path)
    assert "ModalityLUTSequence" in ds
    px = display_pixels(Path(path)).pixels
    lut_values = apply_modality_lut(ds.pixel_array, ds).astype(float)
    # No VOI in the header: the full range of the modality LUT output is shown.
    expected = np.rint((lut_values - lut_values.min()) / np.ptp(lut_values) * 255)
    assert np.abs(px.astype(float) - expected).max() <= 1
    # The LUT really drives the output: reversing its data inverts the picture.
    item = ds.ModalityLUTSequence[0]
    item.LUTData = list(reversed(list(item.LUTData)))
    reversed_path = tmp_path / "mlut_reversed.dcm"
    ds.save_as(reversed_path)
    px_reversed = display_pixels(reversed_path).pixels.astype(int)
    assert np.abs(px_reversed - (255 - px.astype(int))).max() <= 1


def test_voi_lut_sequence_is_applied():
    path = get_testdata_file("vlut_04.dcm")
    ds = pydicom.dcmread(path)
    assert "VOILUTSequence" in ds
    lut = np.asarray(ds.VOILUTSequence[0].LUTData, dtype=float)
    first = int(ds.VOILUTSequence[0].LUTDescriptor[1])
    idx = np.clip(ds.pixel_array.astype(int) - first, 0, len(lut) - 1)
    mapped = lut[idx]
    expected = np.rint((mapped - lut.min()) / (lut.max() - lut.min()) * 255)
    px = display_pixels(Path(path)).pixels.astype(float)
    assert np.abs(px - expected).max() <= 1


def test_16bit_png_is_scaled_to_full_8bit_range(resources):
    px = display_pixels(resources / "tiny_16bit.png").pixels
    assert px.dtype == np.uint8 and px.min() == 0 and px.max() == 255
    assert (np.diff(px[0].astype(int)) >= 0).all()  # monotone along the gradient


def test_8bit_png_is_unchanged(resources):
    px = display_pixels(resources / "tiny_8bit.png").pixels
    assert (px == np.asarray(Image.open(resources / "tiny_8bit.png"))).all()


def test_not_an_image_is_rejected(resources):
    with pytest.raises(ImagingError, match="neither a PNG nor a DICOM"):
        display_pixels(resources / "not_an_image.png")


def test_derive_caps_size_writes_once_and_names_by_content(tmp_path):
    source = Path(get_testdata_file("RG1_UNCR.dcm"))
    first = derive_display_image(source, tmp_path, max_size=512, thumb_size=64)
    assert max(first.width, first.height) == 512
    display = tmp_path / first.display
    thumb = Image.open(tmp_path / first.thumbnail)
    assert max(thumb.size) == 64
    assert Image.open(display).mode == "L"
    mtime = display.stat().st_mtime_ns
    second = derive_display_image(source, tmp_path, max_size=512, thumb_size=64)
    assert second.display == first.display
    assert display.stat().st_mtime_ns == mtime
    assert first.bits_stored == 15


def test_rg1_full_depth_holds_the_modality_values_exactly(tmp_path):
    source = Path(get_testdata_file("RG1_UNCR.dcm"))
    derived = derive_display_image(source, tmp_path)
    depth = Image.open(tmp_path / derived.depth)
    assert depth.mode == "RGB" and depth.size == (derived.width, derived.height)
    codes = decode_codes(depth)
    assert len(np.unique(codes)) > 1024
    ds = pydicom.dcmread(source)
    modality = apply_modality_lut(ds.pixel_array, ds).astype(float)
    values = derived.value_offset + derived.value_scale * codes.astype(float)
    assert derived.value_scale == 1.0
    assert np.array_equal(values, modality)  # lossless: every stored value, not 219 greys
    assert (derived.value_min, derived.value_max) == (modality.min(), modality.max())
    assert derived.monochrome1 is True
    assert derived.dicom_windows == [[15000.0, 30000.0, ""]]


def test_presets_are_in_stored_units_and_keep_bone_bright(tmp_path):
    derived = derive_display_image(Path(get_testdata_file("RG1_UNCR.dcm")), tmp_path)
    presets = derived.window_presets
    assert list(presets) == ["default", "soft", "lung", "bone", "auto"]
    # RG1's DICOM window (W 30000 / L 15000: 0-30000) holds every value (874-26479): a
    # whole-range placeholder that shows the chest washed out, so "default" is "auto"; the
    # header window is kept in dicom_windows.
    assert derived.dicom_windows == [[15000.0, 30000.0, ""]]
    assert presets["default"] == presets["auto"]
    codes = decode_codes(Image.open(tmp_path / derived.depth)).astype(float)
    values = derived.value_offset + codes
    h, w = values.shape
    band = slice(int(h * 0.35), int(h * 0.45))
    spine = np.median(values[band, int(w * 0.47) : int(w * 0.53)])
    lung = np.median(values[band, int(w * 0.2) : int(w * 0.3)])
    for name, (center, width) in presets.items():
        assert derived.value_min - width <= center <= derived.value_max + width, name

        # MONOCHROME1: shown grey = 1 - windowed value, so the spine must come out brighter.
        def shown(v, center=center, width=width):
            return 1 - np.clip((v - (center - width / 2)) / width, 0, 1)

        assert shown(spine) >= shown(lung), name
    # The lung preset spreads the lungs over more greys than the DICOM window does.
    assert presets["lung"][1] < derived.dicom_windows[0][1] / 2

    # The default window shows the chest with contrast: the spine and the lung fields are
    # more than half the grey scale apart (the DICOM window puts them 0.28 apart).
    def apart(center, width):
        low = center - width / 2
        return abs(np.clip((spine - low) / width, 0, 1) - np.clip((lung - low) / width, 0, 1))

    assert apart(*presets["default"]) > 0.5
    assert apart(*derived.dicom_windows[0][:2]) < 0.3


def test_a_header_window_is_read_at_when_it_leaves_values_out():
    assert is_reading_window(1000, 800, 0, 4095)  # a clinical window: 600-1400 of 0-4095
    assert is_reading_window(2000, 4000, 0, 4095)  # 0-4000 clips the brightest values
    assert not is_reading_window(15000, 30000, 874, 26479)  # RG1: holds every value
    assert not is_reading_window(2048, 4096, 0, 4095)


def test_16bit_png_gets_full_depth_with_a_percentile_window(resources, tmp_path):
    derived = derive_display_image(resources / "tiny_16bit.png", tmp_path)
    assert derived.depth and derived.value_scale == 1.0 and not derived.monochrome1
    source = np.asarray(Image.open(resources / "tiny_16bit.png"), dtype=float)
    codes = decode_codes(Image.open(tmp_path / derived.depth)).astype(float)
    assert np.array_equal(derived.value_offset + codes, source)
    assert derived.dicom_windows == []
    assert derived.window_presets["default"] == derived.window_presets["auto"]


def test_8bit_png_has_no_full_depth(resources, tmp_path):
    derived = derive_display_image(resources / "tiny_8bit.png", tmp_path)
    assert derived.depth == "" and derived.window_presets == {}


def test_full_depth_is_resampled_with_the_display_size(tmp_path):
    derived = derive_display_image(Path(get_testdata_file("RG1_UNCR.dcm")), tmp_path, max_size=512)
    depth = Image.open(tmp_path / derived.depth)
    assert depth.size == (derived.width, derived.height) and max(depth.size) == 512
    assert len(np.unique(decode_codes(depth))) > 1024
