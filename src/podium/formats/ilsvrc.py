"""Files of the ILSVRC 2012 development kit and of its submissions.

- Ground truth: one line per validation image, in file-name order, holding one
  (or more) ILSVRC2012_IDs.
- ``meta.mat``: the ``synsets`` table (ILSVRC2012_ID, WNID, words, ...); IDs
  1..1000 are the leaf classes, NOT in sorted-WNID order.
- Boxes: PASCAL-VOC XML files ``ILSVRC2012_val_NNNNNNNN.xml`` in a folder or in
  the official archive (.tgz/.tar, read as a stream, never extracted); objects
  name WNIDs and have inclusive pixel corners.
- Submissions: one line per image, matched by line; up to 5 guesses, most
  confident first (Task 1: labels; Task 2: ``label xmin ymin xmax ymax``).
"""

from __future__ import annotations

import io
import re
import tarfile
import xml.etree.ElementTree as ElementTree
import zlib
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import numpy as np
from numpy.typing import NDArray

from podium.errors import TruthError
from podium.formats.text import read_text
from podium.issues import Issue, IssueLog, plural

MAX_GUESSES = 5
N_CLASSES = 1000
LIMIT = 2**31  # class ids and pixel coordinates beyond this are not plausible and would overflow
_VAL_XML = re.compile(r"ILSVRC2012_val_(\d{8})\.xml$")


@dataclass(frozen=True)
class Synsets:
    """The 1000 leaf classes of meta.mat."""

    wnid_of_id: dict[int, str]  # ILSVRC2012_ID -> WNID

    @property
    def id_of_wnid(self) -> dict[str, int]:
        return {w: i for i, w in self.wnid_of_id.items()}

    def id_of_sorted_index(self) -> NDArray[np.int64]:
        """ILSVRC2012_ID of each 0-based index in sorted-WNID order (the frameworks' label space)."""
        return np.array([self.id_of_wnid[w] for w in sorted(self.wnid_of_id.values())], dtype=np.int64)


def read_meta(path: Path) -> Synsets:
    """The leaf synsets of ``meta.mat``; :class:`TruthError` if unusable."""
    from scipy.io import loadmat

    try:
        synsets = loadmat(path, squeeze_me=True)["synsets"]
        pairs = {int(s["ILSVRC2012_ID"]): str(s["WNID"]) for s in synsets if int(s["num_children"]) == 0}
    except Exception as exc:  # scipy raises many types on a wrong file
        raise TruthError(f"meta {path} is not the kit's meta.mat ({type(exc).__name__}: {exc})") from None
    if sorted(pairs) != list(range(1, N_CLASSES + 1)):
        raise TruthError(f"meta {path} does not hold the 1000 leaf classes with IDs 1..1000")
    return Synsets(pairs)


def _text_lines(path: Path) -> list[str]:
    """The lines of a text file without trailing blank lines; ValueError if it is not text."""
    lines = read_text(path).splitlines()
    while lines and not lines[-1].strip():
        lines.pop()
    return lines


def _lines(path: Path, what: str) -> list[str]:
    try:
        return _text_lines(path)
    except ValueError as exc:
        raise TruthError(f"{what} {path} {exc}") from None


def _submission_lines(path: Path, log: IssueLog) -> list[str] | None:
    try:
        return _text_lines(path)
    except ValueError as exc:
        log.error("unreadable", str(exc), path)
        return None


def read_truth_labels(path: Path) -> list[list[int]]:
    """Labels of each image, one line per image; :class:`TruthError` listing every bad line."""
    if not path.is_file():
        raise TruthError(f"truth {path} is not a file")
    labels, problems = [], []
    for number, line in enumerate(_lines(path, "truth"), start=1):
        try:
            values = [int(t) for t in line.split()]
        except ValueError:
            values = []
        if not values or not all(0 <= v < LIMIT for v in values):
            problems.append(Issue("truth_line", f"must hold one or more integer class IDs from 0 to {LIMIT - 1}", str(path), number))
        labels.append(values)
    if problems or not labels:
        raise TruthError(f"truth {path} is not usable", problems or [Issue("truth_empty", "is empty", str(path))])
    return labels


def truth_matrix(labels: list[list[int]]) -> NDArray[np.int64]:
    """(images, most labels of an image) padded with -1."""
    width = max(len(x) for x in labels)
    matrix = np.full((len(labels), width), -1, dtype=np.int64)
    for i, values in enumerate(labels):
        matrix[i, : len(values)] = values
    return matrix


def read_guesses(path: Path, n_images: int, group: int, log: IssueLog) -> NDArray[np.float64] | None:
    """Guesses per image: an (images, 5, group) array padded with NaN.

    ``group`` is 1 (labels) or 5 (label and box corners). Lines past the fifth
    guess are cut, with one warning that counts them.
    """
    lines = _submission_lines(path, log)
    if lines is None:
        return None
    errors_before = log.error_count
    if len(lines) != n_images:
        log.error("line_count", f"has {plural(len(lines), 'line')}; the ground truth has {plural(n_images, 'image')} (one line each, in order)", path)
    full = _full_lines(lines, group)
    if full is not None:
        return full if log.error_count == errors_before else None
    guesses = np.full((len(lines), MAX_GUESSES, group), np.nan)
    cut = 0
    what = "an integer label" if group == 1 else "numbers: label xmin ymin xmax ymax"
    for number, line in enumerate(lines, start=1):
        tokens = line.replace(",", " ").split()
        if len(tokens) % group:
            log.error("malformed", f"has {len(tokens)} numbers; guesses are groups of {group} ({what})", path, number)
            continue
        if len(tokens) > MAX_GUESSES * group:
            cut += 1
            tokens = tokens[: MAX_GUESSES * group]
        try:
            values = np.array([float(t) for t in tokens]).reshape(-1, group)
        except ValueError:
            bad = next(t for t in tokens if not _is_number(t))
            log.error("not_a_number", f"{bad!r} is not a number ({what})", path, number)
            continue
        labels = values[:, 0]
        if not np.isfinite(values).all() or (labels != np.round(labels)).any():
            log.error("not_an_integer", f"labels must be integers and numbers finite; got {line.strip()[:80]!r}", path, number)
            continue
        guesses[number - 1, : len(values)] = values
    if cut:
        log.warning("extra_guesses", f"{plural(cut, 'line')} had more than 5 guesses; only the first 5 count, as in the kit", path)
    labels = guesses[..., 0]
    outside = np.isfinite(labels) & ((labels < 1) | (labels > N_CLASSES))
    if outside.any():
        first = int(np.flatnonzero(outside.any(axis=1))[0]) + 1
        log.warning("label_range", f"{plural(int(outside.sum()), 'label')} outside 1..1000 never match (first at line {first})", path, first)
    return guesses if log.error_count == errors_before else None


def _full_lines(lines: list[str], group: int) -> NDArray[np.float64] | None:
    """The common case at C speed: every line has exactly five valid guesses; else ``None``."""
    text = " ".join(lines)
    if "," in text or any(len(line.split()) != MAX_GUESSES * group for line in lines):
        return None
    try:
        values = np.array(text.split(), dtype=np.float64).reshape(len(lines), MAX_GUESSES, group)
    except ValueError:
        return None
    labels = values[..., 0]
    if not np.isfinite(values).all() or (labels != np.round(labels)).any() or (labels < 1).any() or (labels > N_CLASSES).any():
        return None  # the line-by-line path names the problem
    return values


def _is_number(token: str) -> bool:
    try:
        float(token)
    except ValueError:
        return False
    return True


def read_val_boxes(source: Path, n_images: int, id_of_wnid: dict[str, int]) -> list[list[tuple[int, int, int, int, int]]]:
    """Boxes ``(class id, xmin, ymin, xmax, ymax)`` of each validation image, by file name.

    ``source`` is a folder of XML files or the .tgz/.tar archive (streamed).
    A missing XML for an image of the ground truth is a truth error.
    """
    boxes: list[list[tuple[int, int, int, int, int]] | None] = [None] * n_images
    problems: list[Issue] = []

    def add(name: str, data: bytes) -> None:
        match = _VAL_XML.search(name)
        if not match:
            return
        index = int(match.group(1)) - 1
        if 0 <= index < n_images:
            try:
                boxes[index] = _parse_xml(data, id_of_wnid)
            except ValueError as exc:
                problems.append(Issue("truth_xml", str(exc), name))

    if source.is_dir():
        for path in sorted(source.rglob("*.xml")):
            add(path.name, path.read_bytes())
    else:
        try:
            for name, data in _archive_files(source):
                if name.endswith(".xml"):
                    add(name, data)
        except (tarfile.TarError, OSError, EOFError, zlib.error) as exc:
            raise TruthError(f"boxes {source} is not a readable .tar/.tgz archive or folder ({exc})") from None
    missing = [i + 1 for i, b in enumerate(boxes) if b is None]
    if missing:
        problems.append(Issue("truth_missing_xml", f"{plural(len(missing), 'image')} have no box file, e.g. ILSVRC2012_val_{missing[0]:08d}.xml", str(source)))
    if problems:
        raise TruthError(f"boxes {source} are not usable", problems)
    return boxes  # type: ignore[return-value]


def _archive_files(path: Path) -> Iterator[tuple[str, bytes]]:
    """``(name, content)`` of the regular files of a .tar or .tgz, read in memory, never extracted.

    Plain ustar members are read straight from their 512-byte headers (the
    tarfile module spends 60 µs on each of 50,000 small files); anything else
    (long names, pax headers) goes through the tarfile module.
    """
    data = path.read_bytes()
    if data[:2] == b"\x1f\x8b":
        data = zlib.decompress(data, wbits=31)
    offset, members = 0, []
    while offset + 512 <= len(data):
        header = data[offset : offset + 512]
        if header == bytes(512):
            break
        kind = header[156:157]
        if kind not in (b"0", b"\0", b"5") or header[257:262] != b"ustar":
            yield from _tarfile_members(data)
            return
        size = int(header[124:136].strip(b"\0 ") or b"0", 8)
        prefix = header[345:500].split(b"\0", 1)[0]
        name = header[:100].split(b"\0", 1)[0]
        if kind != b"5":
            members.append(((prefix + b"/" + name if prefix else name).decode("utf-8", "replace"), data[offset + 512 : offset + 512 + size]))
        offset += 512 + (size + 511) // 512 * 512
    yield from members


def _tarfile_members(data: bytes) -> Iterator[tuple[str, bytes]]:
    with tarfile.open(fileobj=io.BytesIO(data), mode="r:") as archive:
        for member in archive:
            if member.isfile():
                handle = archive.extractfile(member)
                if handle is not None:
                    yield member.name, handle.read()


_OBJECT = re.compile(
    rb"<object>.*?<name>\s*([^<]*?)\s*</name>.*?<bndbox>\s*<xmin>\s*([^<]*?)\s*</xmin>\s*<ymin>\s*([^<]*?)\s*</ymin>"
    rb"\s*<xmax>\s*([^<]*?)\s*</xmax>\s*<ymax>\s*([^<]*?)\s*</ymax>\s*</bndbox>.*?</object>",
    re.S,
)


def _parse_xml(data: bytes, id_of_wnid: dict[str, int]) -> list[tuple[int, int, int, int, int]]:
    """Objects of a VOC XML: a regular expression for the usual layout, ElementTree for any other."""
    found = _OBJECT.findall(data)
    if len(found) == data.count(b"<object>"):
        return [_object(name.decode(), [c.decode() for c in corners], id_of_wnid) for name, *corners in found]
    return _parse_xml_tree(data, id_of_wnid)


def _object(wnid: str, corners: list[str | None], id_of_wnid: dict[str, int]) -> tuple[int, int, int, int, int]:
    if wnid not in id_of_wnid:
        raise ValueError(f"names {wnid!r}, not a WNID of the 1000 classes")
    try:
        x1, y1, x2, y2 = (int(float(c)) for c in corners)  # type: ignore[arg-type]
    except (TypeError, ValueError, OverflowError):
        raise ValueError(f"has a box without integer corners: {corners}") from None
    if not all(-LIMIT < v < LIMIT for v in (x1, y1, x2, y2)):
        raise ValueError(f"has a box corner out of range: {corners}")
    return id_of_wnid[wnid], x1, y1, x2, y2


def _parse_xml_tree(data: bytes, id_of_wnid: dict[str, int]) -> list[tuple[int, int, int, int, int]]:
    try:
        root = ElementTree.fromstring(data)
    except ElementTree.ParseError as exc:
        raise ValueError(f"is not well-formed XML ({exc})") from None
    return [
        _object((obj.findtext("name") or "").strip(), [obj.findtext(f"bndbox/{k}") for k in ("xmin", "ymin", "xmax", "ymax")], id_of_wnid)
        for obj in root.iter("object")
    ]


def read_confidences(path: Path, n_boxes: int, n_classes: int, log: IssueLog) -> NDArray[np.float64] | None:
    """Task 3: one line per test box, one real confidence per class (ascending class id)."""
    lines = _submission_lines(path, log)
    if lines is None:
        return None
    errors_before = log.error_count
    if len(lines) != n_boxes:
        log.error("line_count", f"has {plural(len(lines), 'line')}; the truth has {plural(n_boxes, 'box', 'boxes')}", path)
    scores = np.zeros((len(lines), n_classes))
    for number, line in enumerate(lines, start=1):
        tokens = line.replace(",", " ").split()
        if len(tokens) != n_classes:
            log.error("columns", f"has {len(tokens)} values; one confidence per class ({n_classes}) is required", path, number)
            continue
        try:
            row = [float(t) for t in tokens]
        except ValueError:
            bad = next(t for t in tokens if not _is_number(t))
            log.error("not_a_number", f"{bad!r} is not a number", path, number)
            continue
        if not np.isfinite(row).all():
            log.error("not_finite", "confidences must be finite numbers (no NaN or inf)", path, number)
            continue
        scores[number - 1] = row
    return scores if log.error_count == errors_before else None
