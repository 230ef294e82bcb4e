"""Derive, once per image, what the browser shows: an 8-bit display PNG, a thumbnail and, for
sources deeper than 8 bits, a full-depth PNG the viewer windows itself.

The full-depth PNG holds the modality-LUT output at its real depth as 16-bit codes, high byte in
red and low byte in green (blue 0): browsers decode an 8-bit RGB PNG exactly, while 16-bit PNGs
are cut to 8 bits on the way to a canvas or a WebGL texture. The stored value of a code is
`value_offset + value_scale * code`; the scale is 1 (exact) whenever the values are integers
spanning at most 65,536 steps, which covers every 8-16-bit radiograph.

Files are written under MEDIA_ROOT with their content hash in the name, so they can be cached
forever and are written only once.
"""

from __future__ import annotations

import hashlib
import io
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
from PIL import Image as PILImage

from readerstudy.imaging.decode import DisplayPixels, display_pixels
from readerstudy.imaging.sources import DEFAULT_MAX_PIXELS, Source
from readerstudy.vocabulary import WindowPreset

# Window presets, in the order of their shortcut keys (Shift+1 ... Shift+5): the vocabulary's.
WINDOW_PRESETS: tuple[tuple[str, str], ...] = tuple(WindowPreset.choices)
# Radiograph values are not calibrated like CT Hounsfield units, so presets cannot be fixed
# numbers: each is a percentile range of the image's own histogram, ordered by attenuation
# (first = darkest on screen). "default" is the DICOM window, or "auto" when there is none.
PRESET_PERCENTILES: dict[str, tuple[float, float]] = {
    "soft": (35.0, 99.0),
    "lung": (5.0, 75.0),
    "bone": (25.0, 99.9),
    "auto": (5.0, 99.5),
}
CODE_MAX = 65535


@dataclass(frozen=True)
class DerivedImage:
    display: str  # path relative to the media root
    thumbnail: str
    width: int
    height: int
    bits_stored: int
    depth: str = ""  # full-depth PNG (R = high, G = low byte of the code); "" for 8-bit sources
    value_offset: float | None = None
    value_scale: float | None = None
    value_min: float | None = None
    value_max: float | None = None
    monochrome1: bool = False
    dicom_windows: list[list] = field(default_factory=list)  # [[center, width, explanation]]
    window_presets: dict[str, list[float]] = field(default_factory=dict)  # name -> [c, w]

    def image_fields(self) -> dict:
        """The readerstudy.Image fields this derivation sets."""
        return {
            "display": self.display,
            "thumbnail": self.thumbnail,
            "width": self.width,
            "height": self.height,
            "bits_stored": self.bits_stored,
            "depth": self.depth,
            "value_offset": self.value_offset,
            "value_scale": self.value_scale,
            "value_min": self.value_min,
            "value_max": self.value_max,
            "monochrome1": self.monochrome1,
            "dicom_windows": self.dicom_windows,
            "window_presets": self.window_presets,
        }


def _fit(img: PILImage.Image, max_size: int) -> PILImage.Image:
    if max(img.size) <= max_size:
        return img
    copy = img.copy()
    copy.thumbnail((max_size, max_size), PILImage.Resampling.LANCZOS)
    return copy


def _write_hashed(img: PILImage.Image, media_root: Path, folder: str) -> str:
    buffer = io.BytesIO()
    # zlib level 3: measured on the RG1 chest (1955 x 1841, 15-bit), the full-depth PNG in a
    # quarter of level 6's time for 5 % more bytes (display PNG: a quarter, 12 %). Each X-ray is
    # derived once at study creation and read many times, but 4x on 10,000 X-rays is hours.
    img.save(buffer, format="PNG", optimize=False, compress_level=3)
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


def _sample(values: np.ndarray, limit: int = 1_000_000) -> np.ndarray:
    step = max(1, int(np.ceil(np.sqrt(values.size / limit))))
    return values[::step, ::step].ravel()


def _window(low: float, high: float, minimum: float) -> list[float]:
    return [float((low + high) / 2), float(max(high - low, minimum))]


def window_presets(result: DisplayPixels, scale: float) -> dict[str, list[float]]:
    """Preset windows [center, width] in stored units, from the image's histogram."""
    sample = _sample(result.values).astype(np.float64)
    attenuation = -sample if result.monochrome1 else sample
    presets: dict[str, list[float]] = {}
    for name, (low_pct, high_pct) in PRESET_PERCENTILES.items():
        low, high = np.percentile(attenuation, [low_pct, high_pct])
        if result.monochrome1:
            low, high = -high, -low
        presets[name] = _window(float(low), float(high), scale)
    header = result.windows[0] if result.windows else None
    value_min, value_max = float(result.values.min()), float(result.values.max())
    if header and is_reading_window(header.center, header.width, value_min, value_max):
        presets["default"] = [header.center, header.width]
    else:
        presets["default"] = presets["auto"]
    return {name: presets[name] for name, _ in WINDOW_PRESETS}


def is_reading_window(center: float, width: float, value_min: float, value_max: float) -> bool:
    """Whether a header window is one to read at: it leaves some of the image's values outside.

    A window holding every value is a placeholder for "the whole range", not a choice: RG1's
    W 30000 / L 15000 spans 0-30000 while its values are 874-26479, most of them in a
    quarter of that, so the image opens washed out. Such an image opens at "auto" instead; the
    header window stays in `dicom_windows`."""
    low, high = center - width / 2, center + width / 2
    return low > value_min or high < value_max


def full_depth_codes(
    values: np.ndarray, size: tuple[int, int]
) -> tuple[np.ndarray, float, float, float, float]:
    """Resample to `size` and quantise to 16-bit codes: (codes, offset, scale, min, max)."""
    value_min, value_max = float(values.min()), float(values.max())
    span = value_max - value_min
    integral = bool(np.all(np.mod(_sample(values), 1) == 0))
    scale = 1.0 if span == 0 or (integral and span <= CODE_MAX) else span / CODE_MAX
    resized = values.astype(np.float32)
    if (resized.shape[1], resized.shape[0]) != size:
        img = PILImage.fromarray(resized).resize(size, PILImage.Resampling.LANCZOS)
        resized = np.asarray(img)
    codes = np.clip(np.rint((resized - value_min) / scale), 0, CODE_MAX).astype(np.uint16)
    return codes, value_min, scale, value_min, value_max


def encode_codes(codes: np.ndarray) -> PILImage.Image:
    """16-bit codes as an 8-bit RGB image: R = high byte, G = low byte, B = 0."""
    rgb = np.zeros((*codes.shape, 3), dtype=np.uint8)
    rgb[..., 0] = codes >> 8
    rgb[..., 1] = codes & 0xFF
    return PILImage.fromarray(rgb)


def decode_codes(img: PILImage.Image) -> np.ndarray:
    """The inverse of encode_codes (what the viewer does on the GPU)."""
    rgb = np.asarray(img.convert("RGB")).astype(np.uint16)
    return (rgb[..., 0] << 8) | rgb[..., 1]


def derive_display_image(
    source: Source,
    media_root: Path,
    *,
    max_size: int = 2048,
    thumb_size: int = 256,
    max_pixels: int = DEFAULT_MAX_PIXELS,
) -> DerivedImage:
    result = display_pixels(source, max_pixels=max_pixels)
    img = PILImage.fromarray(result.pixels)
    display = _fit(img, max_size)
    thumb = _fit(img, thumb_size)
    derived = DerivedImage(
        display=_write_hashed(display, media_root, "display"),
        thumbnail=_write_hashed(thumb, media_root, "thumbs"),
        width=display.width,
        height=display.height,
        bits_stored=result.bits_stored,
        dicom_windows=[[w.center, w.width, w.explanation] for w in result.windows],
    )
    if result.values is None:
        return derived
    codes, offset, scale, value_min, value_max = full_depth_codes(result.values, display.size)
    return DerivedImage(
        **{
            **derived.image_fields(),
            "depth": _write_hashed(encode_codes(codes), media_root, "depth"),
            "value_offset": offset,
            "value_scale": scale,
            "value_min": value_min,
            "value_max": value_max,
            "monochrome1": result.monochrome1,
            "window_presets": window_presets(result, scale),
        }
    )
