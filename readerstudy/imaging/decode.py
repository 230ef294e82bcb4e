"""Decode a checked source into display values and, when it has them, full-depth values.

DICOM follows the standard pipeline: stored values -> modality LUT / rescale -> VOI LUT or
window (full range when the header has neither) -> MONOCHROME1 inverted so bone is bright.
That gives the 8-bit display picture. The modality-LUT output itself is kept too, at its real
depth, for sources with more than 8 bits: the viewer windows it in the browser.
RGB/YBR sources (secondary captures of a radiograph) are shown as grey (luminance).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pydicom
from pydicom.pixels import apply_modality_lut, apply_voi_lut

from readerstudy.imaging.sources import (
    COLOUR,
    DEFAULT_MAX_PIXELS,
    ImagingError,
    Source,
    _describe,
    check_source,
    open_png,
    open_source,
)


@dataclass(frozen=True)
class Window:
    """A DICOM window (centre/width) in the units of the modality-LUT output."""

    center: float
    width: float
    explanation: str = ""


@dataclass(frozen=True)
class DisplayPixels:
    pixels: np.ndarray  # uint8, 2-D, bone bright: the 8-bit display picture
    bits_stored: int
    modality: str
    values: np.ndarray | None = None  # float32 modality-LUT output, for sources > 8 bits
    monochrome1: bool = False  # high values are dark (the viewer inverts `values`)
    windows: tuple[Window, ...] = ()
    transfer_syntax: str = ""


def _scale_to_uint8(values: np.ndarray, low: float, high: float) -> np.ndarray:
    values = values.astype(np.float64)
    if high <= low:
        return np.zeros(values.shape, dtype=np.uint8)
    scaled = (values - low) / (high - low)
    return np.clip(np.rint(scaled * 255.0), 0, 255).astype(np.uint8)


def _voi_output_range(ds: pydicom.Dataset, modality_values: np.ndarray) -> tuple[float, float]:
    """The value range the VOI step maps onto, mirroring pydicom's own conventions."""
    if ds.get("VOILUTSequence"):
        lut = ds.VOILUTSequence[0]
        data = np.asarray(
            lut.LUTData if not isinstance(lut.LUTData, bytes) else np.frombuffer(lut.LUTData, "<u2")
        )
        return float(data.min()), float(data.max())
    if ds.get("ModalityLUTSequence"):
        bits = int(ds.ModalityLUTSequence[0].LUTDescriptor[2])
        return 0.0, float(2**bits - 1)
    bits = int(ds.BitsStored)
    if int(ds.get("PixelRepresentation", 0)) == 0:
        low, high = 0.0, float(2**bits - 1)
    else:
        low, high = float(-(2 ** (bits - 1))), float(2 ** (bits - 1) - 1)
    slope, intercept = ds.get("RescaleSlope"), ds.get("RescaleIntercept")
    if slope is not None and intercept is not None:
        low, high = low * float(slope) + float(intercept), high * float(slope) + float(intercept)
    return low, high


def _as_list(value: object) -> list:
    if value is None:
        return []
    if isinstance(value, pydicom.multival.MultiValue | list | tuple):
        return list(value)
    return [value]


def dicom_windows(ds: pydicom.Dataset) -> tuple[Window, ...]:
    """The header's windows; a VOI LUT (no centre/width) gives the input range it covers."""
    centers, widths = _as_list(ds.get("WindowCenter")), _as_list(ds.get("WindowWidth"))
    names = _as_list(ds.get("WindowCenterWidthExplanation"))
    windows = []
    for index, (center, width) in enumerate(zip(centers, widths, strict=False)):
        try:
            c, w = float(center), float(width)
        except (TypeError, ValueError):
            continue
        if w > 0 and np.isfinite(c) and np.isfinite(w):
            name = str(names[index]) if index < len(names) else ""
            windows.append(Window(c, w, name))
    if not windows and ds.get("VOILUTSequence"):
        descriptor = ds.VOILUTSequence[0].LUTDescriptor
        entries, first = int(descriptor[0]) or 65536, float(descriptor[1])
        explanation = str(ds.VOILUTSequence[0].get("LUTExplanation", "VOI LUT"))
        windows.append(Window(first + entries / 2, float(entries), explanation))
    return tuple(windows)


def _luminance(rgb: np.ndarray, bits: int) -> np.ndarray:
    grey = rgb[..., 0] * 0.299 + rgb[..., 1] * 0.587 + rgb[..., 2] * 0.114
    return _scale_to_uint8(grey, 0.0, float(2**bits - 1))


def dicom_display_pixels(source: Source) -> DisplayPixels:
    with open_source(source) as handle:
        try:
            ds = pydicom.dcmread(handle)
            stored = ds.pixel_array
        except Exception as exc:  # pydicom and its codecs raise many types for broken files
            raise ImagingError(
                f"{_describe(source)}: cannot read DICOM pixel data ({exc})"
            ) from exc
    syntax = str(ds.file_meta.get("TransferSyntaxUID", ""))
    photometric = str(ds.get("PhotometricInterpretation", "MONOCHROME2")).upper()
    bits = int(ds.get("BitsStored", 8))
    modality = str(ds.get("Modality", ""))
    if photometric in COLOUR and stored.ndim == 3 and stored.shape[-1] == 3:
        return DisplayPixels(
            _luminance(stored, bits), min(bits, 8), modality, transfer_syntax=syntax
        )
    if photometric not in {"MONOCHROME1", "MONOCHROME2"}:
        raise ImagingError(f"{_describe(source)}: {photometric} is not a greyscale radiograph")
    if stored.ndim != 2:
        raise ImagingError(f"{_describe(source)}: expected one 2-D frame, got {stored.shape}")
    values = apply_modality_lut(stored, ds)
    has_voi = bool(ds.get("VOILUTSequence")) or (
        "WindowCenter" in ds and "WindowWidth" in ds and float(_first(ds.WindowWidth)) > 0
    )
    if has_voi:
        low, high = _voi_output_range(ds, values)
        shown = apply_voi_lut(values, ds, prefer_lut=True)
    else:
        low, high = float(values.min()), float(values.max())
        shown = values
    pixels = _scale_to_uint8(shown, low, high)
    monochrome1 = photometric == "MONOCHROME1"
    if monochrome1:
        pixels = 255 - pixels
    return DisplayPixels(
        pixels,
        bits,
        modality,
        values=np.asarray(values, dtype=np.float32) if bits > 8 else None,
        monochrome1=monochrome1,
        windows=dicom_windows(ds),
        transfer_syntax=syntax,
    )


def _first(value: object) -> object:
    return value[0] if isinstance(value, pydicom.multival.MultiValue) else value


def png_display_pixels(source: Source) -> DisplayPixels:
    with open_source(source) as handle:
        img = open_png(handle, source)
        try:
            img.load()
            mode = img.mode
            if mode in {"I;16", "I;16B", "I;16L", "I"}:
                values = np.asarray(img, dtype=np.int64)
                bits = 16
            elif mode == "L":
                values = np.asarray(img)
                bits = 8
            else:
                values = np.asarray(img.convert("L"))
                bits = 8
        except (OSError, SyntaxError, ValueError) as exc:
            raise ImagingError(f"{_describe(source)}: cannot read PNG ({exc})") from exc
    if bits == 8:
        return DisplayPixels(values.astype(np.uint8), 8, "")
    # 16-bit PNG: no window in the file, so the full range of the data is shown.
    pixels = _scale_to_uint8(values, float(values.min()), float(values.max()))
    return DisplayPixels(pixels, 16, "", values=values.astype(np.float32))


def display_pixels(source: Source, *, max_pixels: int = DEFAULT_MAX_PIXELS) -> DisplayPixels:
    """Check the source from its header (size cap, decoder present), then decode it."""
    info = check_source(source, max_pixels=max_pixels)
    if info.kind == "dicom":
        return dicom_display_pixels(source)
    return png_display_pixels(source)
