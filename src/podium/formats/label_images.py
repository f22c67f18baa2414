"""Instance label images (GlaS): PNG, BMP or TIFF, 8, 16 or 32-bit integers.

0 is background and every other value one object. Labels are never cast to 8
bits. Files of a truth folder and a submission folder pair by stem, after one
of a set of suffixes (``_anno``, ``_seg``, ...) is removed, so that
``testA_1_anno.bmp`` pairs with ``testA_1_seg.png``.
"""

from __future__ import annotations

import io
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
from numpy.typing import NDArray
from PIL import Image

from podium.core.issues import Issue
from podium.formats import png, png_rows
from podium.formats.folders import list_folder, stem_of
from podium.metrics.arrays import native

EXTENSIONS = (".png", ".bmp", ".tif", ".tiff")
DEFAULT_SUFFIXES = ("_anno", "_seg", "_mask", "_pred", "_label")
LABEL_MODES = {
    "L": "8-bit",
    "P": "palette",
    "1": "1-bit",
    "I;16": "16-bit",
    "I;16B": "16-bit",
    "I;16L": "16-bit",
    "I": "32-bit",
}
MAX_BYTES_PER_PIXEL = 16  # generous bound for any of these formats, metadata included


@dataclass
class LabelFolder:
    """Label images of a folder by stem, and what could not be used."""

    files: dict[str, Path] = field(default_factory=dict)
    problems: list[Issue] = field(default_factory=list)  # errors
    ignored: list[str] = field(default_factory=list)  # names that are not label images


def paired_stem(path: Path, suffixes: tuple[str, ...]) -> str | None:
    """``testA_1_anno.bmp`` -> ``testA_1``; ``None`` for a file that is not a label image."""
    stem = stem_of(path, EXTENSIONS)
    if stem is None:
        return None
    for suffix in suffixes:
        if suffix and stem.endswith(suffix) and len(stem) > len(suffix):
            return stem[: -len(suffix)]
    return stem


def list_label_images(folder: Path, suffixes: tuple[str, ...], truth: bool = False) -> LabelFolder:
    """Every label image of ``folder`` by stem; two files with one stem are a problem.

    Hard links are refused in a submission, not in the (organizer's) ``truth``.
    """
    result = LabelFolder()
    listing = list_folder(folder, refuse_hard_links=not truth)
    result.problems.extend(Issue("not_a_file", why, str(path)) for path, why in listing.refused)
    result.ignored.extend(p.name for p in listing.folders)
    for path in listing.files:
        stem = paired_stem(path, suffixes)
        if stem is None:
            result.ignored.append(path.name)
        elif stem in result.files:
            result.problems.append(
                Issue(
                    "ambiguous_stem",
                    f"pairs with the same image as {result.files[stem].name} (stem {stem!r})",
                    str(path),
                )
            )
        else:
            result.files[stem] = path
    return result


def read_label_image(path: Path, shape: tuple[int, int] | None = None) -> NDArray[np.integer]:
    """A single-channel integer label image; ``shape``, when given, is checked before decoding.

    A plain grayscale PNG is decoded by :mod:`~podium.formats.png_rows`, any other PNG by libpng.
    """
    limit = MAX_BYTES_PER_PIXEL * shape[0] * shape[1] + (1 << 20) if shape else png.MAX_FILE_BYTES
    try:
        data = png.read_bytes(path, limit)
        if data.startswith(png.SIGNATURE):
            header = png.parse_header(data)
            _check_shape(header.shape, shape)
            if not ((header.color_type == 0 and header.bit_depth in (8, 16)) or header.color_type == 3):
                raise png.ImageError(f"is {header.describe()}; a label image has one channel of 8 or 16-bit integers")
            plain = png_rows.decode_gray(data, header)
            return png.decode(data, header) if plain is None else plain
        return _read_with_pillow(data, shape)
    except png.ImageError as exc:
        raise exc.at(path) from None


def _read_with_pillow(data: bytes, shape: tuple[int, int] | None) -> NDArray[np.integer]:
    try:
        image = Image.open(io.BytesIO(data))
    except Exception:
        raise png.ImageError("is not a PNG, BMP or TIFF image") from None
    with image:
        if image.format not in ("BMP", "TIFF", "DIB"):
            raise png.ImageError(f"is a {image.format} image; label images are PNG, BMP or TIFF")
        png.check_pixels(image.width, image.height)
        _check_shape((image.height, image.width), shape)
        if image.mode == "F":
            raise png.ImageError("holds floating-point data; labels must be integers")
        if image.mode not in LABEL_MODES:
            raise png.ImageError(f"is a {image.mode} image; a label image has a single channel of integers")
        try:
            labels = np.asarray(image)
        except Exception as exc:
            raise png.ImageError(
                f"does not decode ({str(exc).splitlines()[0][:100] if str(exc) else type(exc).__name__})"
            ) from None
    if labels.dtype == bool:
        labels = labels.astype(np.uint8)
    labels = native(labels)  # I;16B decodes big-endian
    if labels.dtype.kind == "i" and labels.size and labels.min() < 0:
        raise png.ImageError("holds negative label values")
    return labels


def _check_shape(actual: tuple[int, int], expected: tuple[int, int] | None) -> None:
    if expected is not None and actual != expected:
        raise png.ImageError(f"is {actual[1]}x{actual[0]}, but the truth image is {expected[1]}x{expected[0]}")
