"""Source radiographs (DICOM, 8/16-bit PNG) to 8-bit display PNGs.

The only module that touches pixels. Display images are derived once, for the sampled cases,
and written under MEDIA_ROOT with their content hash in the name so they can be cached forever.

DICOM follows the standard pipeline: stored values -> modality LUT / rescale -> VOI LUT or
window (full range when the header has neither) -> MONOCHROME1 inverted so bone is bright.
"""

from __future__ import annotations

import hashlib
import io
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pydicom
from PIL import Image as PILImage
from pydicom.pixels import apply_modality_lut, apply_voi_lut

from readerstudy.rexvqa import PNG_SIGNATURE


class ImagingError(ValueError):
    """A source image that cannot be turned into a display image."""


@dataclass(frozen=True)
class DisplayPixels:
    pixels: np.ndarray  # uint8, 2-D, bone bright
    bits_stored: int
    modality: str


@dataclass(frozen=True)
class DerivedImage:
    display: str  # path relative to the media root
    thumbnail: str
    width: int
    height: int
    bits_stored: int


def _is_dicom(path: Path) -> bool:
    with open(path, "rb") as handle:
        head = handle.read(132)
    return head[128:132] == b"DICM"


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


def dicom_display_pixels(path: Path) -> DisplayPixels:
    try:
        ds = pydicom.dcmread(path)
        stored = ds.pixel_array
    except Exception as exc:  # pydicom raises many types for broken files
        raise ImagingError(f"{path}: cannot read DICOM pixel data ({exc})") from exc
    photometric = str(ds.get("PhotometricInterpretation", "MONOCHROME2")).upper()
    if photometric not in {"MONOCHROME1", "MONOCHROME2"}:
        raise ImagingError(f"{path}: {photometric} is not a greyscale radiograph")
    if stored.ndim != 2:
        raise ImagingError(f"{path}: expected one 2-D frame, got shape {stored.shape}")
    values = apply_modality_lut(stored, ds)
    has_voi = bool(ds.get("VOILUTSequence")) or (
        "WindowCenter" in ds and "WindowWidth" in ds and float(_first(ds.WindowWidth)) > 0
    )
    if has_voi:
        low, high = _voi_output_range(ds, values)
        values = apply_voi_lut(values, ds, prefer_lut=True)
    else:
        low, high = float(values.min()), float(values.max())
    pixels = _scale_to_uint8(values, low, high)
    if photometric == "MONOCHROME1":
        pixels = 255 - pixels
    return DisplayPixels(pixels, int(ds.get("BitsStored", 8)), str(ds.get("Modality", "")))


def _first(value: object) -> object:
    return value[0] if isinstance(value, pydicom.multival.MultiValue) else value


def png_display_pixels(path: Path) -> DisplayPixels:
    try:
        with PILImage.open(path) as img:
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
    except (OSError, SyntaxError) as exc:
        raise ImagingError(f"{path}: cannot read PNG ({exc})") from exc
    if bits == 8:
        return DisplayPixels(values.astype(np.uint8), 8, "")
    # 16-bit PNG: no window in the file, so the full range of the data is shown.
    return DisplayPixels(_scale_to_uint8(values, float(values.min()), float(values.max())), 16, "")


def display_pixels(path: Path) -> DisplayPixels:
    path = Path(path)
    if _is_dicom(path):
        return dicom_display_pixels(path)
    with open(path, "rb") as handle:
        if handle.read(8) != PNG_SIGNATURE:
            raise ImagingError(f"{path} is neither a PNG nor a DICOM file")
    return png_display_pixels(path)


def _fit(img: PILImage.Image, max_size: int) -> PILImage.Image:
    if max(img.size) <= max_size:
        return img
    copy = img.copy()
    copy.thumbnail((max_size, max_size), PILImage.Resampling.LANCZOS)
    return copy


def _write_hashed(img: PILImage.Image, media_root: Path, folder: str) -> str:
    buffer = io.BytesIO()
    img.save(buffer, format="PNG", optimize=False, compress_level=6)
    data = buffer.getvalue()
    digest = hashlib.sha256(data).hexdigest()
    relative = f"{folder}/{digest[:2]}/{digest}.png"
    target = media_root / relative
    if not target.exists():
        target.parent.mkdir(parents=True, exist_ok=True)
        tmp = target.with_suffix(".tmp")
        tmp.write_bytes(data)
        tmp.replace(target)
    return relative


def derive_display_image(
    source: Path, media_root: Path, *, max_size: int = 2048, thumb_size: int = 256
) -> DerivedImage:
    result = display_pixels(source)
    img = PILImage.fromarray(result.pixels, mode="L")
    display = _fit(img, max_size)
    thumb = _fit(img, thumb_size)
    return DerivedImage(
        display=_write_hashed(display, media_root, "display"),
        thumbnail=_write_hashed(thumb, media_root, "thumbs"),
        width=display.width,
        height=display.height,
        bits_stored=result.bits_stored,
    )
