"""Plain grayscale PNGs (label images) decoded without libpng: 7 to 9 times faster on GlaS's.

A label image is long runs of equal values. libpng spends its time on them in zlib's
inflate, which copies a run a byte at a time, and in undoing the rows' filters; here the
stream is inflated by zlib-ng (``imagecodecs.zlibng_decode``: 12 times zlib on the GlaS
fixture's files) and the filters are undone by a compiled loop (:func:`unfilter`). On
noisy images, where libpng's time goes to the Paeth filter, this way is slower (0.6 to 0.75
times libpng's speed on the fuzzy-jaccard benchmark's maps: ``benchmarks/png_decoders.py``), so
only label images are read this way.

Only a plain file takes this way: grayscale of 8 or 16 bits, not interlaced, IHDR first and
once, every chunk's CRC right, the IDAT chunks consecutive and followed by IEND, the stream
inflating to exactly the rows the header promises, and every row's filter type one of the
five. Anything else gets ``None`` from :func:`decode_gray`, and the caller decodes the file
with libpng (:func:`podium.formats.png.decode`), whose checks and messages then apply. When
this way gives pixels, libpng gives the same (the tests compare them on random images with
every filter type, and on damaged copies).
"""

from __future__ import annotations

import io
import struct
import zlib

import imagecodecs
import numpy as np
from numpy.typing import NDArray
from PIL import Image

from podium.accel.jit import compiled
from podium.formats.png import PngHeader, parse_header


def decode_gray(data: bytes, header: PngHeader) -> NDArray[np.uint8] | NDArray[np.uint16] | None:
    """The gray values of a plain 8 or 16-bit grayscale PNG already checked by
    :func:`~podium.formats.png.parse_header`; ``None`` for any other file."""
    if header.color_type != 0 or header.bit_depth not in (8, 16) or data[26:29] != b"\0\0\0":
        return None
    compressed = _image_data(data)
    if compressed is None:
        return None
    bytes_per_pixel = header.bit_depth // 8
    stride = header.width * bytes_per_pixel
    size = header.height * (stride + 1)
    try:
        raw = imagecodecs.zlibng_decode(compressed, out=size)
    except Exception:  # a damaged stream, or more data than the rows hold: libpng says which
        return None
    if len(raw) != size:
        return None
    rows = np.empty((header.height, stride), np.uint8)
    if not unfilter(np.frombuffer(raw, np.uint8), rows, bytes_per_pixel):
        return None
    return rows.view(">u2").astype(np.uint16) if bytes_per_pixel == 2 else rows


def _image_data(data: bytes) -> bytes | None:
    """The content of the IDAT chunks, joined; ``None`` unless the chunks are as the module says."""
    view, parts, at, idat_ended = memoryview(data), [], 8, False
    while at + 12 <= len(data):
        length, kind = struct.unpack_from(">I4s", data, at)
        end = at + 12 + length
        if end > len(data) or zlib.crc32(view[at + 4 : end - 4]) != struct.unpack_from(">I", data, end - 4)[0]:
            return None
        if (kind == b"IHDR") != (at == 8) or (kind == b"IHDR" and length != 13):
            return None
        if kind == b"IDAT":
            if idat_ended:
                return None
            parts.append(view[at + 8 : end - 4])
        else:
            idat_ended = bool(parts)
        if kind == b"IEND":
            return b"".join(parts) if parts else None
        if not kind[0] & 0x20 and kind not in (b"IHDR", b"IDAT"):  # another critical chunk (PLTE for gray is an error)
            return None
        at = end
    return None


@compiled
def unfilter(raw: NDArray[np.uint8], rows: NDArray[np.uint8], step: int) -> bool:  # pragma: no cover - compiled
    """Undo the PNG filters of ``raw`` (each row: its filter type, then its bytes) into ``rows``;
    ``step`` is the bytes per pixel. False if a row's filter type is not 0 to 4. Preconditions,
    checked (``ValueError``): ``step >= 1`` and ``raw`` holds ``height * (stride + 1)`` bytes.

    With ``x`` a filtered byte, ``a`` the decoded byte ``step`` to the left, ``b`` the one
    above and ``c`` the one above ``a`` (each 0 outside the image), the decoded byte is,
    modulo 256 (PNG specification, section 9): 0 None ``x``; 1 Sub ``x + a``; 2 Up ``x + b``;
    3 Average ``x + ⌊(a + b) / 2⌋``; 4 Paeth ``x + p``, where ``p`` is whichever of ``a``,
    ``b``, ``c`` is nearest to ``a + b - c``, in that order on ties.

    >>> rows = np.empty((2, 3), np.uint8)
    >>> unfilter(np.array([1, 5, 1, 1, 2, 1, 1, 1], np.uint8), rows, 1), rows.tolist()
    (True, [[5, 6, 7], [6, 7, 8]])
    """
    height, stride = rows.shape
    if step < 1 or raw.size != height * (stride + 1):
        raise ValueError("unfilter: step must be at least 1 and raw must hold height * (stride + 1) bytes")
    zeros = np.zeros(stride, np.uint8)
    at = 0
    for y in range(height):
        kind = raw[at]
        line = raw[at + 1 : at + 1 + stride]
        at += stride + 1
        row = rows[y]
        up = rows[y - 1] if y else zeros
        if kind == 0:
            row[:] = line
        elif kind == 1 and step == 1:  # a prefix sum: the running value kept in a register
            left = 0
            for x in range(stride):
                left = (left + line[x]) & 255
                row[x] = left
        elif kind == 1:
            row[:step] = line[:step]
            for x in range(step, stride):
                row[x] = (np.int64(line[x]) + row[x - step]) & 255
        elif kind == 2:
            for x in range(stride):
                row[x] = (np.int64(line[x]) + up[x]) & 255
        elif kind == 3:
            for x in range(step):
                row[x] = (np.int64(line[x]) + (up[x] >> 1)) & 255
            for x in range(step, stride):
                row[x] = (np.int64(line[x]) + ((np.int64(row[x - step]) + up[x]) >> 1)) & 255
        elif kind == 4 and step == 1:  # a and c kept in registers
            a = c = np.int64(0)
            for x in range(stride):
                b = np.int64(up[x])
                a = (line[x] + _paeth(a, b, c)) & 255
                row[x] = a
                c = b
        elif kind == 4:
            for x in range(step):
                row[x] = (np.int64(line[x]) + up[x]) & 255  # a = c = 0: the nearest is b
            for x in range(step, stride):
                row[x] = (line[x] + _paeth(np.int64(row[x - step]), np.int64(up[x]), np.int64(up[x - step]))) & 255
        else:
            return False
    return True


@compiled
def _paeth(a: np.int64, b: np.int64, c: np.int64) -> np.int64:  # pragma: no cover - compiled
    """Whichever of ``a``, ``b``, ``c`` is nearest to ``a + b - c``, in that order on ties (no array: no precondition)."""
    pa, pb, pc = abs(b - c), abs(a - c), abs(a + b - c - c)
    return a if pa <= pb and pa <= pc else (b if pb <= pc else c)


def compile_kernels() -> None:
    """Compile :func:`unfilter` (or load it from Numba's cache) by decoding a tiny 8 and 16-bit image."""
    for mode in ("L", "I;16"):
        buffer = io.BytesIO()
        Image.new(mode, (2, 2)).save(buffer, "PNG")
        data = buffer.getvalue()
        decode_gray(data, parse_header(data))
