"""Plain grayscale PNGs (label images) decoded without libpng: 7 to 9 times faster on GlaS's.

A label image is long runs of equal values. libpng spends its time on them in zlib's inflate,
which copies a run a byte at a time, and in undoing the rows' filters; here the stream is
inflated by libdeflate and the filters are undone by the compiled extension
(:mod:`podium.formats.png_stream`), or, where podium was installed without a C compiler, by
Numba's compiled loop :func:`unfilter`. Only a plain file takes this way (as
:mod:`~podium.formats.png_stream` says): anything else gets ``None`` from :func:`decode_gray`,
and the caller decodes the file with libpng (:func:`podium.formats.png.decode`), whose checks
and messages then apply. When this way gives pixels, libpng gives the same (the tests compare
them on random images with every filter type, and on damaged copies).
"""

from __future__ import annotations

import io

import numpy as np
from numpy.typing import NDArray
from PIL import Image

from podium.accel.jit import compiled
from podium.formats import png_stream
from podium.formats.png import PngHeader, parse_header


def decode_gray(data: bytes, header: PngHeader) -> NDArray[np.uint8] | NDArray[np.uint16] | None:
    """The gray values of a plain 8 or 16-bit grayscale PNG already checked by
    :func:`~podium.formats.png.parse_header`; ``None`` for any other file."""
    return png_stream.decode_gray(data, header, unfilter=None if png_stream.extension_built() else unfilter)


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
        png_stream.decode_gray(data, parse_header(data), unfilter=unfilter)  # Numba's loop, even beside the extension
