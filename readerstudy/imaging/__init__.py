"""Source radiographs (DICOM in any common transfer syntax, 8/16-bit PNG) to what the browser
shows. The only package that touches pixels: the rest of the code calls these functions.

- `sources`: `check_source(bytes | Path)`, header-only checks any import path runs first (kind,
  pixel cap, decodable transfer syntax, one greyscale/colour frame, regular files only).
- `decode`: the DICOM display pipeline and the full-depth modality-LUT values.
- `derive`: the display PNG, the thumbnail and the full-depth PNG, written once by content hash.
"""

from readerstudy.imaging.decode import DisplayPixels, Window, display_pixels
from readerstudy.imaging.derive import (
    WINDOW_PRESETS,
    DerivedImage,
    decode_codes,
    derive_display_image,
)
from readerstudy.imaging.sources import (
    DEFAULT_MAX_PIXELS,
    PNG_SIGNATURE,
    ImagingError,
    SourceInfo,
    check_source,
)

__all__ = [
    "DEFAULT_MAX_PIXELS",
    "PNG_SIGNATURE",
    "WINDOW_PRESETS",
    "DerivedImage",
    "DisplayPixels",
    "ImagingError",
    "SourceInfo",
    "Window",
    "check_source",
    "decode_codes",
    "derive_display_image",
    "display_pixels",
]
