"""Reading PNG files safely and fast.

The header (IHDR) is read and checked before any pixel is decoded, so that a
wrong size, channel count or bit depth gets a precise message, and a file
claiming a huge size is never inflated. Pixels are decoded with imagecodecs
(libpng), the fastest general candidate measured in
``benchmarks/png_decoders.py``; palette images are decoded with Pillow, which
keeps their indices (imagecodecs expands them to RGB).
"""

from __future__ import annotations

import io
import logging
import struct
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import imagecodecs
import numpy as np
from numpy.typing import NDArray
from PIL import Image

from podium.formats import files

SIGNATURE = b"\x89PNG\r\n\x1a\n"
MAX_PIXELS = 50_000_000  # a larger image is refused before decoding: its arrays alone would take gigabytes
MAX_FILE_BYTES = 4 * MAX_PIXELS + (1 << 20)  # an image file of unknown expected size (16-bit data, twice over)

COLOR_TYPES = {
    0: ("grayscale", 1),
    2: ("RGB", 3),
    3: ("palette (indexed colour)", 1),
    4: ("grayscale with alpha", 2),
    6: ("RGBA", 4),
}

# Signatures of files that are often sent by mistake under a .png name.
_OTHER_FORMATS = (
    (b"\xff\xd8\xff", "JPEG"),
    (b"II*\x00", "TIFF"),
    (b"MM\x00*", "TIFF"),
    (b"BM", "BMP"),
    (b"\x93NUMPY", "NumPy .npy"),
    (b"GIF8", "GIF"),
)


class ImageError(Exception):
    """A file that is not a readable image of the expected kind (message is plain text)."""

    def __init__(self, message: str, path: Path | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.path = path

    def at(self, path: Path) -> ImageError:
        """The same problem, naming ``path``."""
        return ImageError(self.message, path)


@dataclass(frozen=True)
class PngHeader:
    width: int
    height: int
    bit_depth: int
    color_type: int

    @property
    def shape(self) -> tuple[int, int]:
        return (self.height, self.width)

    @property
    def kind(self) -> str:
        return COLOR_TYPES.get(self.color_type, (f"colour type {self.color_type}", 0))[0]

    @property
    def channels(self) -> int:
        return COLOR_TYPES.get(self.color_type, ("", 0))[1]

    def describe(self) -> str:
        return f"{self.width}x{self.height} {self.bit_depth}-bit {self.kind}"


def read_bytes(path: Path, max_bytes: int) -> bytes:
    """The content of a regular file; refuses links, special files and files over ``max_bytes``."""
    try:
        return files.read_bytes(path, max_bytes, "an image of the expected size")
    except files.FileProblem as exc:
        raise ImageError(str(exc)) from None


def parse_header(data: bytes) -> PngHeader:
    """The IHDR fields of PNG ``data``; :class:`ImageError` if it is not a PNG."""
    if not data.startswith(SIGNATURE):
        for magic, name in _OTHER_FORMATS:
            if data.startswith(magic):
                raise ImageError(f"is a {name} file, not a PNG")
        raise ImageError("is not a PNG file" if data else "is empty")
    if len(data) < 33 or data[12:16] != b"IHDR":
        raise ImageError("is not a valid PNG (no IHDR header)")
    width, height, bit_depth, color_type = struct.unpack(">IIBB", data[16:26])
    if width == 0 or height == 0:
        raise ImageError("is a PNG with no pixels")
    check_pixels(width, height)
    return PngHeader(width, height, bit_depth, color_type)


def check_pixels(width: int, height: int) -> None:
    """Refuse an image of more than :data:`MAX_PIXELS` pixels (podium's limit, in the README)."""
    if width * height > MAX_PIXELS:
        raise ImageError(f"is {width}x{height}, more than the {MAX_PIXELS // 1_000_000} megapixels podium accepts")


def max_png_bytes(shape: tuple[int, int], bytes_per_pixel: int = 2) -> int:
    """A generous upper bound on the file size of a PNG of ``shape``.

    Deflate never expands data by more than a few bytes per 16 KiB block, so
    twice the raw size plus room for metadata chunks is ample.
    """
    height, width = shape
    return 2 * height * (width * bytes_per_pixel + 1) + (1 << 20)


def decode(data: bytes, header: PngHeader, out: NDArray[Any] | None = None) -> NDArray[Any]:
    """Pixels of a PNG already checked by :func:`parse_header`.

    Palette images give their indices; others give the sample values as
    stored, with shape ``(height, width)`` or ``(height, width, channels)``. A
    grayscale image with a tRNS chunk (one gray value marked transparent) gives
    its gray values: the transparency is ignored. An interlaced image decodes right too; the
    warning libpng gives for it, which imagecodecs logs, is dropped (:class:`_InterlaceNotice`).

    ``out``, an array of the shape and type the pixels should have, receives them where it can
    (libpng's images that fit it: the pixels returned are then ``out``): a reader decoding many
    images of one size into one buffer spares the memory of holding them at once.
    """
    try:
        if header.color_type == 3:
            with Image.open(io.BytesIO(data)) as image:
                pixels = np.asarray(image)
        else:
            pixels = _libpng(data, out)
    except Exception as exc:  # decoders raise many types on corrupt data
        raise ImageError(f"does not decode as PNG ({_short(exc)})") from None
    if pixels.shape[:2] != header.shape:
        raise ImageError(f"decodes to {pixels.shape[1]}x{pixels.shape[0]}, not the {header.describe()} its header says")
    channels = 1 if pixels.ndim == 2 else pixels.shape[2]
    if header.channels == 1 and channels == 2 and header.color_type == 0:
        # A tRNS chunk marks one gray value transparent; the decoder adds an alpha channel.
        # The values are what is scored, so the transparency is ignored.
        return pixels[..., 0]
    if channels != header.channels:
        raise ImageError(
            f"decodes to {channels} channels, not the {header.channels} of the {header.describe()} its header says"
        )
    return pixels


def _libpng(data: bytes, out: NDArray[Any] | None) -> NDArray[Any]:
    """The pixels of ``data`` decoded by libpng, into ``out`` where they fit it."""
    if out is not None:
        try:
            pixels: NDArray[Any] = imagecodecs.png_decode(data, out=out)
            return pixels
        except Exception:  # pixels of another shape (a tRNS chunk adds a channel), or a damaged file:
            pass  # decoded again without ``out``, so that what the caller sees is what it always saw
    decoded: NDArray[Any] = imagecodecs.png_decode(data)
    return decoded


class _InterlaceNotice(logging.Filter):
    """Drops libpng's "Interlace handling should be turned on when using png_read_image": imagecodecs
    reads an interlaced image whole without asking libpng to deinterlace, and libpng deinterlaces it
    all the same (the tests compare the pixels), but warns; with logging not set up, Python printed
    that warning on standard error for every interlaced PNG."""

    def filter(self, record: logging.LogRecord) -> bool:
        return "Interlace handling should be turned on" not in record.getMessage()


logging.getLogger("imagecodecs").addFilter(_InterlaceNotice())


def _short(exc: Exception) -> str:
    text = str(exc).strip().splitlines()
    return text[0][:120] if text else type(exc).__name__
