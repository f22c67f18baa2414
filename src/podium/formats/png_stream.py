"""The image data of a plain grayscale PNG, read without libpng: chunks checked, stream inflated, rows
unfiltered by the compiled extension :mod:`podium.formats._png_sums` (``_png_sums.c``).

A plain file is grayscale of 8 or 16 bits, not interlaced, IHDR first and once, every chunk's CRC
right, the IDAT chunks consecutive and followed by IEND, the stream inflating to exactly the rows the
header promises, and every row's filter type one of the five; ``strict`` readers also want no chunk
but IHDR, IDAT and IEND (libpng refuses some damaged ancillary chunks that give no pixel, so a reader
that must refuse what libpng refuses leaves those files to it). Anything else gets ``None``, and the
caller reads the file its own way (libpng, :func:`podium.formats.png.decode`), whose checks and
messages then apply. When this way gives pixels or sums, libpng gives the same (the tests compare
them on random images of every filter type and size, and on damaged copies).

The stream is inflated by libdeflate (``imagecodecs.deflate_decode``, in one call into a buffer of
the rows' exact size: 1.7 ms a 2000x2000 probability map, where libpng's zlib takes 7 and zlib-ng
2.2). libpng then spends 8 to 9 ms undoing the filters: 97% of a probability map's rows are
Paeth-filtered, whose every byte waits for the one to its left. The extension decodes sixteen rows
at once along a diagonal (its comment says how): 3.4 ms, and the fuzzy-jaccard sums of a map are
taken a block of rows at a time as they are decoded, the map never written whole (:func:`map_sums`).

This module is the one place that chooses: when the extension was not built (no C compiler where
podium was installed), :func:`extension_built` is false, :func:`decode_gray` and :func:`map_sums`
give ``None`` and each caller keeps its pure path (docs/install.md).
"""

from __future__ import annotations

import struct
import zlib
from collections.abc import Callable
from typing import Any

import imagecodecs
import numpy as np
from numpy.typing import NDArray

from podium.formats.png import PngHeader

try:
    from podium.formats import _png_sums
except ImportError:  # podium installed without a C compiler: the callers' pure paths
    _png_sums = None  # type: ignore[assignment]

Unfilter = Callable[[NDArray[np.uint8], NDArray[np.uint8], int], bool]
ONLY_IMAGE_CHUNKS = (b"IHDR", b"IDAT", b"IEND")
LIBPNG_MAX_SIDE = 1_000_000  # libpng refuses a wider or taller image (its default user limits)


def extension_built() -> bool:
    """Whether :mod:`podium.formats._png_sums` is there (``podium`` was installed with a C compiler)."""
    return _png_sums is not None


def image_data(data: bytes, strict: bool = False) -> bytes | None:
    """The content of the IDAT chunks, joined; ``None`` unless the chunks are as the module says."""
    view, parts, at, idat_ended = memoryview(data), [], 8, False
    while at + 12 <= len(data):
        length, kind = struct.unpack_from(">I4s", data, at)
        end = at + 12 + length
        if end > len(data) or zlib.crc32(view[at + 4 : end - 4]) != struct.unpack_from(">I", data, end - 4)[0]:
            return None
        if (kind == b"IHDR") != (at == 8) or (kind == b"IHDR" and length != 13):
            return None
        if strict and kind not in ONLY_IMAGE_CHUNKS:
            return None
        if kind == b"IDAT":
            if idat_ended:
                return None
            parts.append(view[at + 8 : end - 4])
        else:
            idat_ended = bool(parts)
        if kind == b"IEND":
            return b"".join(parts) if parts else None
        if not kind[0] & 0x20 and kind not in ONLY_IMAGE_CHUNKS:  # another critical chunk (PLTE for gray is an error)
            return None
        at = end
    return None


def inflate(data: bytes, header: PngHeader, out: bytearray | None = None, strict: bool = False) -> Any:
    """The inflated rows of a plain file (each row: its filter type, then its bytes), in ``out``
    when it is given (a buffer of exactly ``height * (stride + 1)`` bytes); ``None`` for another file."""
    if header.color_type != 0 or header.bit_depth not in (8, 16) or data[26:29] != b"\0\0\0":
        return None
    if max(header.width, header.height) > LIBPNG_MAX_SIDE:
        return None
    compressed = image_data(data, strict)
    size = header.height * (header.width * header.bit_depth // 8 + 1)
    if compressed is None or not _window_fits(compressed, size):
        return None
    if out is not None and len(out) != size:
        raise ValueError(f"out holds {len(out)} bytes, not the {size} of the rows")
    try:
        raw = imagecodecs.deflate_decode(compressed, out=size if out is None else out)
    except Exception:  # a damaged stream, or more data than the rows hold: libpng says which
        return None
    return raw if len(raw) == size else None


def _window_fits(stream: bytes, size: int) -> bool:
    """Whether the zlib header's window (CINFO) holds every distance the stream may use: 32 KiB, or no
    less than the rows. libdeflate and zlib-ng read a distance beyond a smaller declared window; zlib,
    so libpng, refuses it ("invalid distance too far back")."""
    return bool(stream) and (stream[0] >> 4 == 7 or size <= 1 << ((stream[0] >> 4) + 8))


def decode_gray(
    data: bytes, header: PngHeader, strict: bool = False, unfilter: Unfilter | None = None
) -> NDArray[np.uint8] | NDArray[np.uint16] | None:
    """The gray values of a plain 8 or 16-bit grayscale PNG already checked by
    :func:`~podium.formats.png.parse_header`; ``None`` for any other file.

    ``unfilter`` undoes the rows' filters (:func:`podium.formats.png_rows.unfilter`'s arguments); the
    extension does it when none is given, and ``None`` is returned if it is not built.
    """
    if unfilter is None and _png_sums is None:
        return None
    raw = inflate(data, header, strict=strict)
    if raw is None:
        return None
    step = header.bit_depth // 8
    rows = np.empty((header.height, header.width * step), np.uint8)
    if unfilter is not None:
        done = unfilter(np.frombuffer(raw, np.uint8), rows, step)
    else:
        done = _png_sums.unfilter(raw, rows, rows.shape[1], step)
    if not done:
        return None
    return rows.view(">u2").astype(np.uint16) if step == 2 else rows


def map_sums(
    data: bytes,
    header: PngHeader,
    truth: NDArray[Any],
    value: int,
    roi: NDArray[np.bool_] | None,
    out: bytearray,
) -> tuple[int, int, int, int] | None:
    """``(n, Σ P over the truth, Σ P over the ROI, largest P)`` of a plain 8-bit grayscale map ``P`` of
    ``truth``'s shape with only IHDR, IDAT and IEND chunks, the truth being ``truth == value`` (uint8,
    uint16 or bool) inside ``roi`` (``None``: every pixel); its rows are inflated into ``out``
    (``height * (width + 1)`` bytes) and decoded a block at a time. ``None`` for any other file, or
    when the extension is not built.
    """
    if _png_sums is None or header.bit_depth != 8 or header.shape != truth.shape:
        return None
    raw = inflate(data, header, out, strict=True)
    if raw is None:
        return None
    inside = None if roi is None else np.ascontiguousarray(roi)
    found: tuple[int, int, int, int] | None = _png_sums.class_sums(
        raw, header.width, np.ascontiguousarray(truth), value, inside
    )
    return found
