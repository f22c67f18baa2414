"""Files of the pixel-level (fuzzy Jaccard) challenge.

Truth folder, one of two layouts:

- ``labels``: ``classes.txt`` (line i names the class of label value i, from 1)
  and one single-channel label image ``<stem>.png`` per test image (8 or 16-bit
  grayscale, or palette indices); 0 is background.
- ``masks``: one folder per class, ``<class>/<stem>.png``, 8-bit grayscale
  holding 0 and 100 (the rules' own form); every class has every stem.

Submission folder: ``<class>/<stem>.png``, 8-bit single-channel, integers 0..100,
the size of the truth image.
"""

from __future__ import annotations

import difflib
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
from numpy.typing import NDArray

from podium.core.errors import TruthError
from podium.core.issues import Issue, IssueLog, plural, summarize_names
from podium.formats import png, png_stream
from podium.formats.files import FileProblem
from podium.formats.folders import Listing, list_folder, one_level_down, stem_of
from podium.formats.text import TextLimits, read_text

PNG = (".png",)
CLASSES_FILE = "classes.txt"
MAX_PROBABILITY = 100


@dataclass(frozen=True)
class TruthSet:
    """What the truth folder holds: classes, test images and their files."""

    root: Path
    layout: str  # "labels" or "masks"
    classes: tuple[str, ...]
    files: dict[str, tuple[Path, ...]]  # stem -> (label image,) or one mask per class

    @property
    def stems(self) -> list[str]:
        return list(self.files)


def read_truth(root: Path) -> TruthSet:
    """Find the layout, classes and images of a truth folder; :class:`TruthError` if unusable."""
    if not root.is_dir():
        raise TruthError(f"truth {root} is not a folder")
    listing = list_folder(root, refuse_hard_links=False)
    problems = [Issue("truth_file", why, str(path)) for path, why in listing.refused]
    if (root / CLASSES_FILE).is_file():
        truth = _read_label_layout(root, listing, problems)
    elif listing.folders:
        truth = _read_mask_layout(root, listing, problems)
    else:
        raise TruthError(f"truth {root} has neither {CLASSES_FILE} nor class folders")
    if not truth.files and not problems:
        problems.append(Issue("truth_empty", "no test image (.png) found", str(root)))
    if problems:
        raise TruthError(f"truth {root} is not usable", problems)
    return truth


def _read_label_layout(root: Path, listing: Listing, problems: list[Issue]) -> TruthSet:
    classes = _read_class_names(root / CLASSES_FILE, problems)
    files: dict[str, tuple[Path, ...]] = {}
    for path in listing.files:
        stem = stem_of(path, PNG)
        if stem is not None:
            files[stem] = (path,)
    return TruthSet(root, "labels", classes, files)


CLASS_LIST_LIMITS = TextLimits(
    max_bytes=8 << 20, max_lines=65_536, max_line=4096, needs="65,535 classes (16-bit labels)"
)


def _read_class_names(path: Path, problems: list[Issue]) -> tuple[str, ...]:
    try:
        text = read_text(path, CLASS_LIST_LIMITS)
    except FileProblem as exc:
        problems.append(Issue("truth_classes", str(exc), str(path), exc.line))
        return ()
    lines = [line.strip() for line in text.splitlines()]
    while lines and not lines[-1]:
        lines.pop()
    seen: set[str] = set()
    for number, name in enumerate(lines, start=1):
        why = _bad_class_name(name)
        if name in seen:
            why = f"repeats the class name {name!r}"
        if why:
            problems.append(Issue("truth_classes", why, str(path), number))
        seen.add(name)
    if not lines:
        problems.append(Issue("truth_classes", "names no class", str(path)))
    return tuple(lines)


def _bad_class_name(name: str) -> str | None:
    if not name:
        return "is empty (line i names label value i, so blank lines are not allowed)"
    if name in (".", "..") or any(c in name for c in "/\\\0"):
        return f"{name!r} cannot be a folder name"
    return None


def _read_mask_layout(root: Path, listing: Listing, problems: list[Issue]) -> TruthSet:
    classes = tuple(folder.name for folder in listing.folders)
    per_class: list[dict[str, Path]] = []
    for folder in listing.folders:
        sub = list_folder(folder, refuse_hard_links=False)
        problems.extend(Issue("truth_file", why, str(path)) for path, why in sub.refused)
        per_class.append({s: p for p in sub.files if (s := stem_of(p, PNG)) is not None})
    all_stems = sorted(set().union(*per_class))
    for name, masks in zip(classes, per_class):
        missing = [s for s in all_stems if s not in masks]
        if missing:
            problems.append(
                Issue("truth_missing_mask", f"has no mask for {summarize_names(missing)}", str(root / name))
            )
    files = {s: tuple(m.get(s, root / c / f"{s}.png") for c, m in zip(classes, per_class)) for s in all_stems}
    return TruthSet(root, "masks", classes, files)


# --- submission -------------------------------------------------------------------------------


def map_submission(root: Path, truth: TruthSet, log: IssueLog) -> dict[tuple[int, str], Path]:
    """``(class index, stem) -> file`` for every usable submission file.

    Rejects folders that are not classes and anything that is not a regular
    file or folder; warns about extra files and about missing images, which
    are scored as all zeros (the rules treat them as all background).
    """
    if not root.is_dir():
        log.error("not_a_folder", "the submission must be a folder of <class>/<stem>.png", root)
        return {}
    class_index = {name: i for i, name in enumerate(truth.classes)}
    wanted = set(truth.files)
    found: dict[tuple[int, str], Path] = {}
    extra: list[str] = []
    listing = list_folder(root)
    if len(listing.folders) == 1 and listing.folders[0].name not in class_index and one_level_down(root, log):
        return {}
    for path, why in listing.refused:
        log.error("not_a_file", why, path)
    extra.extend(path.name for path in listing.files)
    for folder in listing.folders:
        if folder.name not in class_index:
            hint = difflib.get_close_matches(folder.name, truth.classes, n=1)
            advice = f"; did you mean {hint[0]!r}?" if hint else ""
            log.error(
                "unknown_class",
                f"folder {folder.name!r} is not a class (classes: {summarize_names(truth.classes)}){advice}",
                folder,
            )
            continue
        sub = list_folder(folder)
        for path, why in sub.refused:
            log.error("not_a_file", why, path)
        extra.extend(f"{folder.name}/{p.name}" for p in sub.folders)
        for path in sub.files:
            stem = stem_of(path, PNG)
            if stem in wanted:
                found[(class_index[folder.name], stem)] = path
            else:
                extra.append(f"{folder.name}/{path.name}")
    if extra:
        log.warning(
            "extra_files", f"{plural(len(extra), 'file')} ignored (not test images): {summarize_names(extra)}", root
        )
    missing = [f"{c}/{s}.png" for s in truth.files for i, c in enumerate(truth.classes) if (i, s) not in found]
    if missing:
        log.warning(
            "missing_images",
            f"{len(missing):,} of {plural(len(truth.files) * len(truth.classes), 'image')} missing, counted as all zeros: "
            f"{summarize_names(missing)}",
            root,
        )
    return found


# --- pixels -------------------------------------------------------------------------------------


def read_labels(path: Path, n_classes: int, ignore: int | None) -> NDArray[np.integer]:
    """A truth label image; values must be 0..n_classes or ``ignore``."""
    data, header = _open(path, bytes_per_pixel=2)
    if not ((header.color_type == 0 and header.bit_depth in (8, 16)) or header.color_type == 3):
        raise png.ImageError(
            f"is {header.describe()}; a label image must be 8 or 16-bit grayscale or a palette PNG", path
        )
    plain = png_stream.decode_gray(data, header, strict=True)
    labels = _decode(path, data, header) if plain is None else plain
    if int(labels.max()) > n_classes:
        values = np.unique(labels[labels > n_classes])
        bad = [int(v) for v in values if v != ignore]
        if bad:
            raise png.ImageError(
                f"has label values {summarize_names(map(str, bad))} that name no class "
                f"({CLASSES_FILE} names 1..{n_classes})",
                path,
            )
    return labels


def read_mask(path: Path) -> NDArray[np.bool_]:
    """A truth class mask of the rules' form (0 and 100) as a boolean array."""
    data, header = _open(path, bytes_per_pixel=1)
    if (header.color_type, header.bit_depth) != (0, 8):
        raise png.ImageError(f"is {header.describe()}; a class mask must be 8-bit grayscale", path)
    pixels = _decode(path, data, header)
    mask: NDArray[np.bool_] = pixels == MAX_PROBABILITY
    if not np.all(mask | (pixels == 0)):
        values = np.unique(pixels[~mask & (pixels != 0)])
        raise png.ImageError(
            f"holds values {summarize_names(map(str, values.tolist()))}; masks hold only 0 and 100", path
        )
    return mask


def read_probability_map(path: Path, shape: tuple[int, int], out: NDArray[np.uint8] | None = None) -> NDArray[np.uint8]:
    """A submission image: 8-bit grayscale of ``shape`` with values 0..100; decoded into ``out``
    (uint8 of ``shape``) where it can be."""
    data, header = _open(path, bytes_per_pixel=1, shape=shape)
    if header.channels != 1 or header.color_type == 3:
        raise png.ImageError(
            f"is {header.describe()} with {header.channels} channels; a single-channel 8-bit grayscale PNG is required",
            path,
        )
    if header.bit_depth != 8:
        raise png.ImageError(f"is {header.bit_depth}-bit; 8-bit values 0..100 are required", path)
    if header.shape != shape:
        raise png.ImageError(f"is {header.width}x{header.height}, but the truth image is {shape[1]}x{shape[0]}", path)
    pixels = _decode(path, data, header, out)
    if int(pixels.max()) > MAX_PROBABILITY:
        over = pixels > MAX_PROBABILITY
        row, col = np.argwhere(over)[0]
        raise png.ImageError(
            f"has {plural(int(np.count_nonzero(over)), 'value')} above 100 (largest {int(pixels.max())}, "
            f"first at row {row}, column {col}); probabilities are integers 0..100",
            path,
        )
    return pixels


def probability_map_sums(
    path: Path,
    shape: tuple[int, int],
    truth: NDArray[Any],
    value: int,
    roi: NDArray[np.bool_] | None,
    rows: bytearray,
) -> tuple[int, int, int] | None:
    """A submission image's fuzzy-jaccard sums ``(n, Σ P over the truth, Σ P over the ROI)``, the truth
    being ``truth == value`` inside ``roi``, its rows decoded by the compiled extension a block at a
    time into no image (:func:`podium.formats.png_stream.map_sums`; ``rows`` holds the inflated rows,
    ``height * (width + 1)`` bytes). ``None`` for any file :func:`read_probability_map` might refuse,
    or that way does not take: that reader then reads it, with its checks and messages.
    """
    if not png_stream.extension_built():
        return None
    try:
        data = png.read_bytes(path, png.max_png_bytes(shape, 1))
        found = png_stream.map_sums(data, png.parse_header(data), truth, value, roi, rows)
    except png.ImageError:
        return None
    if found is None or found[3] > MAX_PROBABILITY:
        return None
    return found[0], found[1], found[2]


def _open(path: Path, bytes_per_pixel: int, shape: tuple[int, int] | None = None) -> tuple[bytes, png.PngHeader]:
    """Read and parse a PNG, bounding its size by ``shape`` when known."""
    limit = png.max_png_bytes(shape, bytes_per_pixel) if shape else png.MAX_FILE_BYTES
    try:
        data = png.read_bytes(path, limit)
        return data, png.parse_header(data)
    except png.ImageError as exc:
        raise exc.at(path) from None


def _decode(path: Path, data: bytes, header: png.PngHeader, out: NDArray[Any] | None = None) -> NDArray[Any]:
    try:
        return png.decode(data, header, out)
    except png.ImageError as exc:
        raise exc.at(path) from None


def roi_of_labels(labels: NDArray[np.integer], roi: str, ignore: int | None) -> NDArray[np.bool_] | None:
    """Region of interest of a label image (``None`` = every pixel)."""
    kept: NDArray[np.bool_] | None = None if ignore is None else labels != ignore
    if roi == "union":
        inside: NDArray[np.bool_] = labels != 0
        return inside if kept is None else inside & kept
    return kept


def roi_of_masks(masks: Iterable[NDArray[np.bool_]], roi: str) -> NDArray[np.bool_] | None:
    """Region of interest of per-class masks (``None`` = every pixel)."""
    if roi != "union":
        return None
    union: NDArray[np.bool_] = np.logical_or.reduce(list(masks))
    return union
