"""Check a source image before anything decodes it: kind, size, encoding, decodability.

Everything here reads headers only (unless `decode=True`), so an import can check thousands of
files cheaply and refuse the ones that would later fail or exhaust memory: a 20000 x 20000 PNG
is 389 KB on disk and 400 MB decoded; a DICOM says its rows, columns and frames before its
pixels. Sources come as a path (the ReXVQA images root) or as bytes (a DICOMweb instance), and
both go through the same checks.

Paths are opened without blocking and must be regular files: a FIFO or a device in the images
root is refused instead of hanging the import.
"""

from __future__ import annotations

import io
import os
import stat
import struct
import warnings
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import BinaryIO

import pydicom
from PIL import Image as PILImage
from pydicom.errors import InvalidDicomError
from pydicom.pixels import get_decoder

PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"
DEFAULT_MAX_PIXELS = 100_000_000
GREY = frozenset({"MONOCHROME1", "MONOCHROME2"})
COLOUR = frozenset({"RGB", "YBR_FULL", "YBR_FULL_422", "YBR_ICT", "YBR_RCT"})
PNG_MODES = frozenset({"1", "L", "LA", "P", "RGB", "RGBA", "I", "I;16", "I;16B", "I;16L"})

Source = bytes | Path | str


class ImagingError(ValueError):
    """A source image that cannot be turned into a display image; the message says why."""


@dataclass(frozen=True)
class SourceInfo:
    """What the header says about a source image."""

    kind: str  # "png" or "dicom"
    width: int
    height: int
    frames: int
    photometric: str  # DICOM photometric interpretation, or the PNG mode
    bits_stored: int
    transfer_syntax: str  # DICOM transfer syntax name; "" for PNG
    view_position: str = ""  # DICOM ViewPosition (PA, AP, LL...); "" for PNG
    modality: str = ""  # DICOM Modality (CR, DX...); "" for PNG

    @property
    def pixels(self) -> int:
        return self.width * self.height * self.frames


def _describe(source: Source) -> str:
    return f"{len(source)}-byte source" if isinstance(source, bytes) else str(source)


@contextmanager
def open_source(source: Source) -> Iterator[BinaryIO]:
    """A binary handle on bytes, or on a path that must be a regular file (never blocks)."""
    if isinstance(source, bytes):
        yield io.BytesIO(source)
        return
    path = os.fspath(source)
    try:
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0))
    except FileNotFoundError as exc:
        raise ImagingError(f"image not found: {path}") from exc
    except OSError as exc:
        raise ImagingError(f"cannot open {path}: {exc.strerror or exc}") from exc
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            raise ImagingError(f"not a regular file: {path}")
        handle = os.fdopen(fd, "rb")
    except BaseException:
        os.close(fd)
        raise
    with handle:
        yield handle


def source_kind(head: bytes) -> str:
    if head.startswith(PNG_SIGNATURE):
        return "png"
    if head[128:132] == b"DICM":
        return "dicom"
    return ""


def check_source(
    source: Source, *, max_pixels: int = DEFAULT_MAX_PIXELS, decode: bool = False
) -> SourceInfo:
    """Refuse a source that cannot become a display image, from its header; return its facts.

    Checks: PNG or DICOM by content; width x height (x frames) within `max_pixels` and within
    Pillow's decompression-bomb limit; one frame; a greyscale or RGB/YBR photometric
    interpretation; for DICOM, pixel data present and a pixel-data decoder installed for its
    transfer syntax. With `decode=True` the (first) frame is decoded too, which catches corrupt
    pixel data at the price of a full decode (~0.7 s for a JPEG 2000 chest radiograph).
    Raises ImagingError naming the source and, for DICOM, the transfer syntax.
    """
    with open_source(source) as handle:
        head = handle.read(132)
        handle.seek(0)
        kind = source_kind(head)
        if kind == "png":
            info = _check_png(handle, source, max_pixels)
        elif kind == "dicom":
            info = _check_dicom(handle, source, max_pixels)
        else:
            raise ImagingError(f"{_describe(source)} is neither a PNG nor a DICOM file")
        if decode:
            handle.seek(0)
            _decode_first_frame(handle, source, info)
    return info


def _check_size(source: Source, width: int, height: int, frames: int, max_pixels: int) -> None:
    if width <= 0 or height <= 0:
        raise ImagingError(f"{_describe(source)}: image size {width} x {height} is empty")
    total = width * height * frames
    if total > max_pixels:
        frames_text = f" x {frames} frames" if frames > 1 else ""
        raise ImagingError(
            f"{_describe(source)}: {width} x {height}{frames_text} = {total:,} pixels exceeds "
            f"the limit of {max_pixels:,} (MAX_IMAGE_PIXELS)"
        )


def open_png(handle: BinaryIO, source: Source) -> PILImage.Image:
    """Pillow's lazy open (header only), with its decompression-bomb guard made an error."""
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("error", PILImage.DecompressionBombWarning)
            return PILImage.open(handle, formats=["PNG"])
    except (PILImage.DecompressionBombError, PILImage.DecompressionBombWarning) as exc:
        raise ImagingError(f"{_describe(source)}: refused as a decompression bomb ({exc})") from exc
    except (OSError, SyntaxError, ValueError) as exc:
        raise ImagingError(f"{_describe(source)}: cannot read PNG ({exc})") from exc


def _check_png(handle: BinaryIO, source: Source, max_pixels: int) -> SourceInfo:
    header = handle.read(24)
    handle.seek(0)
    if header[12:16] != b"IHDR":
        raise ImagingError(f"{_describe(source)}: a PNG must start with its IHDR chunk")
    width, height = struct.unpack(">II", header[16:24])
    _check_size(source, width, height, 1, max_pixels)  # before Pillow reads anything else
    img = open_png(handle, source)
    width, height = img.size
    _check_size(source, width, height, 1, max_pixels)
    if img.mode not in PNG_MODES:
        raise ImagingError(f"{_describe(source)}: PNG mode {img.mode} is not supported")
    if getattr(img, "n_frames", 1) > 1:
        raise ImagingError(f"{_describe(source)}: animated PNGs are not supported")
    bits = 16 if img.mode.startswith("I") else 8
    return SourceInfo("png", width, height, 1, img.mode, bits, "")


def _int(ds: pydicom.Dataset, keyword: str, default: int | None = None) -> int:
    value = ds.get(keyword, default)
    try:
        return int(value)
    except (TypeError, ValueError) as exc:
        raise ImagingError(f"{keyword} {value!r} is not a number") from exc


def _check_dicom(handle: BinaryIO, source: Source, max_pixels: int) -> SourceInfo:
    where = _describe(source)
    try:
        # Large values (the pixel data) are left on disk: only their presence and length count.
        ds = pydicom.dcmread(handle, defer_size=1024)
    except (InvalidDicomError, OSError, ValueError, EOFError, KeyError, TypeError) as exc:
        raise ImagingError(f"{where}: cannot read the DICOM header ({exc})") from exc
    file_meta = getattr(ds, "file_meta", None)
    syntax_uid = file_meta.get("TransferSyntaxUID") if file_meta is not None else None
    if syntax_uid is None:
        raise ImagingError(f"{where}: the DICOM file meta has no transfer syntax")
    syntax = f"{syntax_uid.name} ({syntax_uid})" if syntax_uid.name != syntax_uid else syntax_uid
    where = f"{where} [{syntax}]"
    pixel_tags = ("PixelData", "FloatPixelData", "DoubleFloatPixelData")
    if not any(tag in ds for tag in pixel_tags):
        raise ImagingError(f"{where}: the DICOM file holds no pixel data")
    if "PixelData" not in ds:
        raise ImagingError(f"{where}: float pixel data is not a radiograph")
    try:
        rows, columns = _int(ds, "Rows"), _int(ds, "Columns")
        frames = _int(ds, "NumberOfFrames", 1) or 1
        samples = _int(ds, "SamplesPerPixel", 1)
        bits_allocated = _int(ds, "BitsAllocated")
        bits_stored = _int(ds, "BitsStored", bits_allocated)
    except ImagingError as exc:
        raise ImagingError(f"{where}: {exc}") from exc
    _check_size(source, columns, rows, frames, max_pixels)
    if frames > 1:
        raise ImagingError(
            f"{where}: multi-frame DICOM ({frames} frames) is not supported; "
            "export one radiograph per file"
        )
    photometric = str(ds.get("PhotometricInterpretation", "")).strip().upper()
    if not (photometric in GREY and samples == 1) and not (photometric in COLOUR and samples == 3):
        raise ImagingError(
            f"{where}: photometric interpretation {photometric or '(none)'} with {samples} "
            "sample(s) per pixel is not supported (MONOCHROME1/2, or RGB/YBR shown as grey)"
        )
    if bits_allocated not in (8, 16, 32) or not 1 <= bits_stored <= bits_allocated:
        raise ImagingError(
            f"{where}: bits allocated/stored {bits_allocated}/{bits_stored} are not supported"
        )
    _check_decoder(where, syntax_uid)
    if not syntax_uid.is_compressed:
        element = ds.get_item("PixelData", keep_deferred=True)
        expected = rows * columns * samples * frames * bits_allocated // 8
        length = getattr(element, "length", None)
        if length is not None and length != 0xFFFFFFFF and length < expected:
            raise ImagingError(
                f"{where}: pixel data is {length} bytes, {rows} x {columns} needs {expected}"
            )
        start = getattr(element, "value_tell", None)
        size = handle.seek(0, io.SEEK_END)
        if start is not None and length is not None and start + min(length, expected) > size:
            raise ImagingError(f"{where}: the file is truncated ({size} bytes)")
    return SourceInfo(
        "dicom",
        columns,
        rows,
        frames,
        photometric,
        bits_stored,
        str(syntax),
        view_position=str(ds.get("ViewPosition", "") or ""),
        modality=str(ds.get("Modality", "") or ""),
    )


def _check_decoder(where: str, syntax_uid: pydicom.uid.UID) -> None:
    try:
        decoder = get_decoder(syntax_uid)
    except NotImplementedError as exc:
        raise ImagingError(
            f"{where}: no pixel-data decoder exists for this transfer syntax"
        ) from exc
    if not decoder.is_available:
        missing = "; ".join(decoder.missing_dependencies) or "no plugin installed"
        raise ImagingError(f"{where}: no installed pixel-data decoder ({missing})")


def _decode_first_frame(handle: BinaryIO, source: Source, info: SourceInfo) -> None:
    try:
        if info.kind == "png":
            img = open_png(handle, source)
            img.load()
        else:
            from pydicom.pixels import pixel_array

            pixel_array(handle, index=0)
    except ImagingError:
        raise
    except Exception as exc:  # codecs raise many types for corrupt data
        syntax = f" [{info.transfer_syntax}]" if info.transfer_syntax else ""
        raise ImagingError(
            f"{_describe(source)}{syntax}: cannot decode the pixels ({exc})"
        ) from exc
