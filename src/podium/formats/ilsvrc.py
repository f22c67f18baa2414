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
import zlib
from collections.abc import Iterator
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path
from typing import TYPE_CHECKING

from podium.core.errors import TruthError
from podium.core.issues import Issue, IssueLog, plural
from podium.core.lazy import LazyModule
from podium.formats.files import Content, FileProblem, read_bytes, read_mapped
from podium.formats.folders import list_folder
from podium.formats.label_tokens import Labels, label_table
from podium.formats.text import DECIMAL, TRUSTED, TextLimits, numeric_rows, read_text, text_of
from podium.metrics.imagenet import Corner, TruthBox

if TYPE_CHECKING:
    import fractions
    from fractions import Fraction

    import numpy as np
    from numpy.typing import NDArray
else:
    fractions = LazyModule("fractions")  # Task 2's corners: Task 1 never imports it
    np = LazyModule("numpy")


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


def _split(text: str) -> list[str]:
    """The lines of a text without trailing blank lines."""
    lines = text.splitlines()
    while lines and not lines[-1].strip():
        lines.pop()
    return lines


def _truth_error(path: Path, problem: FileProblem) -> TruthError:
    return TruthError(f"truth {path} {problem}", [Issue("truth_text", str(problem), str(path), problem.line)])


def _submission_lines(path: Path, limits: TextLimits, log: IssueLog) -> list[str] | None:
    try:
        return _split(read_text(path, limits))
    except FileProblem as exc:
        log.error("unreadable", str(exc), path, exc.line)
        return None


def submission_limits(n_lines: int, bytes_per_line: int, what: str, whats: str | None = None) -> TextLimits:
    """One line per image or box, ``bytes_per_line`` at most on average, trailing blank lines, 1 MiB to spare;
    ``whats`` is the plural of ``what`` when adding an s is wrong (``"boxes"``)."""
    return TextLimits(
        max_bytes=n_lines * bytes_per_line + (1 << 20),
        max_lines=2 * n_lines + 1000,
        max_line=max(bytes_per_line * 4, 4096),
        needs=plural(n_lines, what, whats),
    )


def read_truth_labels(path: Path) -> NDArray[np.int64]:
    """Labels of each image, one line per image, as a read-only (images, most labels of an image)
    matrix padded with -1; :class:`TruthError` listing every bad line.

    As in the kit, a 0 is padding of a multi-label line, not a label: it is dropped.
    A label outside 1..1000 is kept: it can never be guessed (:func:`warn_labels_outside`).
    The kit's files (one label per line) are parsed from their bytes at C speed
    (:func:`~podium.formats.label_rows.label_rows`), anything else line by line.
    """
    if not path.is_file():
        raise TruthError(f"truth {path} is not a file")
    from podium.formats.label_rows import label_rows  # NumPy's: small clean files take truth_tokens

    try:
        data = read_bytes(path, TRUSTED.max_bytes)
        labels = label_rows(data, 1)
        if labels is not None and labels.all():  # no 0, the kit's padding of a line with more labels
            matrix: NDArray[np.int64] = labels.astype(np.int64)
        else:
            lines = _split(text_of(data, TRUSTED))
            rows = numeric_rows(lines, np.int64)
            if rows is None or rows.shape[1] != 1 or not ((rows > 0) & (rows < LIMIT)).all():
                rows = _padded(_labels_by_line(lines, path))
            matrix = rows
    except FileProblem as exc:
        raise _truth_error(path, exc) from None
    matrix.flags.writeable = False  # shared by every evaluation of the process (podium.formats.truth_cache)
    return matrix


def truth_tokens(path: Path, max_bytes: int) -> Labels | None:
    """The kit's truth, one label in 1..1000 on each line, read without NumPy (:func:`~podium.formats.label_tokens.label_table`);
    ``None`` for any other truth and one of more than ``max_bytes``, which :func:`read_truth_labels` reads."""
    try:
        return label_table(read_mapped(path, max_bytes), 1, N_CLASSES)
    except FileProblem:
        return None


def _labels_by_line(lines: list[str], path: Path) -> list[list[int]]:
    labels: list[list[int]] = []
    problems = IssueLog()  # keeps the first 50 and counts the rest
    for number, line in enumerate(lines, start=1):
        try:
            values = [int(t) for t in line.split()]
        except ValueError:
            values = []
        if not values or not all(0 <= v < LIMIT for v in values):
            problems.error("truth_line", f"must hold one or more integer class IDs from 0 to {LIMIT - 1}", path, number)
        elif not any(values):
            problems.error(
                "truth_line", "holds only 0, which the kit reads as padding: the image has no label", path, number
            )
        labels.append([v for v in values if v])
    if problems.error_count or not labels:
        raise TruthError(
            f"truth {path} is not usable", problems.errors or [Issue("truth_empty", "is empty", str(path))]
        )
    return labels


def _padded(labels: list[list[int]]) -> NDArray[np.int64]:
    """(images, most labels of an image) padded with -1."""
    width = max(len(x) for x in labels)
    matrix = np.full((len(labels), width), -1, dtype=np.int64)
    for i, values in enumerate(labels):
        matrix[i, : len(values)] = values
    return matrix


def warn_labels_outside(labels: NDArray[np.int64], path: Path, log: IssueLog) -> None:
    """A warning in ``log`` when truth lines hold a label outside 1..1000, which no guess can match."""
    outside = np.flatnonzero((labels > N_CLASSES).any(axis=1))
    if outside.size:
        first = int(outside[0]) + 1
        log.warning(
            "truth_label_range",
            f"{plural(outside.size, 'line')} of the truth hold a label outside 1..{N_CLASSES}, which no guess can match (first at line {first})",
            path,
            first,
        )


@dataclass(frozen=True)
class Guesses:
    """A submission's guesses: (images, 5, group) padded with NaN, and its lines as written
    (``written``: the lines, or the file's ASCII bytes they are split from when first asked for)."""

    values: NDArray[np.float64]
    written: list[str] | bytes

    @cached_property
    def lines(self) -> list[str]:
        """The lines as written, without trailing blank lines."""
        return self.written if isinstance(self.written, list) else _split(self.written.decode("utf-8-sig"))

    def exact_corners(self, image: int, guess: int) -> list[Fraction]:
        """The box of guess ``guess`` of ``image`` as written, in exact rational numbers."""
        tokens = self.lines[image].replace(",", " ").split()
        return [fractions.Fraction(t) for t in tokens[5 * guess + 1 : 5 * guess + 5]]

    def rows(self, images: NDArray[np.int64]) -> Guesses:
        """The guesses of ``images`` (indices), in that order."""
        return Guesses(self.values[images], [self.lines[i] for i in images.tolist()])


def read_guesses(path: Path, n_images: int, group: int, log: IssueLog) -> Guesses | None:
    """Guesses per image, or ``None`` when the file is rejected.

    ``group`` is 1 (labels) or 5 (label and box corners). Lines past the fifth
    guess are cut, with one warning that counts them.
    """
    limits = submission_limits(n_images, 64 * group, "image")
    try:
        data = read_bytes(path, limits.max_bytes, limits.needs)
        clean = _clean_labels(data, n_images, limits) if group == 1 else None
        if clean is not None:
            return Guesses(clean, data)
        lines = _split(text_of(data, limits))
    except FileProblem as exc:
        log.error("unreadable", str(exc), path, exc.line)
        return None
    errors_before = log.error_count
    if len(lines) != n_images:
        log.error(
            "line_count",
            f"has {plural(len(lines), 'line')}; the ground truth has {plural(n_images, 'image')} (one line each, in order)",
            path,
        )
    full = _full_lines(lines, group)
    if full is not None:
        return Guesses(full, lines) if log.error_count == errors_before else None
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
            log.error(
                "not_an_integer", f"labels must be integers and numbers finite; got {line.strip()[:80]!r}", path, number
            )
            continue
        guesses[number - 1, : len(values)] = values
    if cut:
        log.warning(
            "extra_guesses",
            f"{plural(cut, 'line')} had more than 5 guesses; only the first 5 count, as in the kit",
            path,
        )
    labels = guesses[..., 0]
    outside = np.isfinite(labels) & ((labels < 1) | (labels > N_CLASSES))
    if outside.any():
        first = int(np.flatnonzero(outside.any(axis=1))[0]) + 1
        log.warning(
            "label_range",
            f"{plural(int(outside.sum()), 'label')} outside 1..1000 never match (first at line {first})",
            path,
            first,
        )
    return Guesses(guesses, lines) if log.error_count == errors_before else None


def guess_tokens(path: Path, n_images: int) -> tuple[Labels, Content] | None:
    """A clean Task 1 submission, five labels in 1..1000 on each of the ``n_images`` lines, read without NumPy
    (:func:`~podium.formats.label_tokens.label_table`), and its bytes (mapped: :func:`~podium.formats.files.read_mapped`);
    ``None`` for any other file, which :func:`read_guesses` reads and whose problems it names. Such a file gives it
    no issue."""
    limits = submission_limits(n_images, 64, "image")
    try:
        data = read_mapped(path, limits.max_bytes, limits.needs)
    except FileProblem:
        return None
    tokens = label_table(data, MAX_GUESSES, N_CLASSES)
    return None if tokens is None or len(tokens) != MAX_GUESSES * n_images else (tokens, data)


def _clean_labels(data: bytes, n_images: int, limits: TextLimits) -> NDArray[np.float64] | None:
    """Task 1's common case, parsed from the bytes: a line of five labels in 1..1000 for each image; else ``None``."""
    from podium.formats.label_rows import label_rows

    labels = label_rows(data, MAX_GUESSES)
    if (
        labels is None
        or len(labels) != n_images
        or (limits.max_lines is not None and data.endswith(b"\n" * (limits.max_lines - n_images + 2)))  # so many
        # trailing line feeds that the file has more lines than allowed
        or not (labels.all() and int(labels.max()) <= N_CLASSES)
    ):
        return None
    return labels.astype(np.float64)[:, :, None]


def _full_lines(lines: list[str], group: int) -> NDArray[np.float64] | None:
    """The common case at C speed: every line has exactly five valid guesses; else ``None``.

    The kit's integer labels and corners take :func:`~podium.formats.text.numeric_rows`' integer
    way (the kit's 50,000 lines: 5 ms against 38 for Task 1, 32 against 188 for Task 2).
    """
    values = numeric_rows(lines, np.float64)
    if values is None or values.shape[1] != MAX_GUESSES * group:
        return None
    values = values.reshape(len(lines), MAX_GUESSES, group)
    labels = values[..., 0]
    if (
        not ((labels >= 1) & (labels <= N_CLASSES)).all()  # NaN fails both
        or (group > 1 and not np.isfinite(values[..., 1:]).all())
        or (labels != np.round(labels)).any()
    ):
        return None  # the line-by-line path names the problem
    return values


def _is_number(token: str) -> bool:
    try:
        float(token)
    except ValueError:
        return False
    return True


MAX_XML_BYTES = 1 << 20  # a VOC box file is about 1 kB
ARCHIVE_BYTES_PER_IMAGE = 4096  # the official archive inflates to about 1.2 kB per image


def read_val_boxes(source: Path, n_images: int, id_of_wnid: dict[str, int]) -> list[list[TruthBox]]:
    """Boxes ``(class id, xmin, ymin, xmax, ymax)`` of each validation image, by file name.

    ``source`` is a folder of XML files or the .tgz/.tar archive, inflated in
    memory up to a bound set by the number of images (never extracted). Links
    and special files are refused by name; each unusable XML is named with what
    is wrong with it; a missing XML for an image of the ground truth is a truth error.
    """
    boxes: list[list[TruthBox] | None] = [None] * n_images
    problems: list[Issue] = []
    broken = 0

    def add(name: str, data: bytes) -> None:
        nonlocal broken
        match = _VAL_XML.search(name)
        if not match:
            return
        index = int(match.group(1)) - 1
        if 0 <= index < n_images:
            try:
                boxes[index] = _parse_xml(data, id_of_wnid)
            except ValueError as exc:
                problems.append(Issue("truth_xml", str(exc), name))
                broken += 1

    if source.is_dir() and not source.is_symlink():
        for path, why in _xml_files(source):
            if why:
                problems.append(Issue("truth_xml", why, str(path)))
                broken += bool(_VAL_XML.search(path.name))
                continue
            try:
                add(str(path), read_bytes(path, MAX_XML_BYTES))
            except FileProblem as exc:
                problems.append(Issue("truth_xml", str(exc), str(path)))
                broken += 1
    else:
        limit = (1 << 26) + ARCHIVE_BYTES_PER_IMAGE * n_images
        for name, data in _archive_files(source, limit):
            if name.endswith(".xml"):
                add(name, data)
    missing = [i + 1 for i, b in enumerate(boxes) if b is None]
    if len(missing) > broken:
        problems.append(
            Issue(
                "truth_missing_xml",
                f"{plural(len(missing) - broken, 'image')} {'has' if len(missing) - broken == 1 else 'have'} no box file, "
                f"e.g. ILSVRC2012_val_{missing[0]:08d}.xml",
                str(source),
            )
        )
    if problems:
        raise TruthError(f"boxes {source} are not usable", problems)
    return boxes  # type: ignore[return-value]


def _xml_files(folder: Path) -> Iterator[tuple[Path, str | None]]:
    """Every ``.xml`` below ``folder``, sorted, with ``None``; links and special files with why they are refused."""
    stack = [folder]
    while stack:
        current = stack.pop()
        listing = list_folder(current, refuse_hard_links=False)
        yield from listing.refused
        yield from ((path, None) for path in listing.files if path.name.endswith(".xml"))
        stack.extend(reversed(listing.folders))


def _archive_files(path: Path, limit: int) -> Iterator[tuple[str, bytes]]:
    """``(name, content)`` of the regular files of a .tar or .tgz, read in memory, never extracted.

    A gzip stream is inflated in pieces and refused once it passes ``limit``
    bytes. Plain ustar members are read straight from their 512-byte headers (the
    tarfile module spends 60 µs on each of 50,000 small files); anything else
    (long names, pax headers, base-256 sizes) goes through the tarfile module.
    :class:`TruthError` for every archive that cannot be read.
    """
    try:
        data = _inflate(read_bytes(path, limit), limit)
    except FileProblem as exc:
        raise TruthError(f"boxes {path} {exc}") from None
    except zlib.error as exc:
        raise TruthError(f"boxes {path} is not a readable .tgz archive ({exc})") from None
    if data is None:
        raise TruthError(
            f"boxes {path} inflates to more than {limit >> 20} MiB, far more than box files for this test set take"
        )
    offset, members = 0, []
    while offset + 512 <= len(data):
        header = data[offset : offset + 512]
        if header == bytes(512):
            break
        kind, size_field = header[156:157], header[124:136].strip(b"\0 ")
        if (
            kind not in (b"0", b"\0", b"5")
            or header[257:262] != b"ustar"
            or not size_field.isdigit()
            or b"8" in size_field
            or b"9" in size_field
        ):
            yield from _tarfile_members(data, path)
            return
        size = int(size_field or b"0", 8)
        prefix = header[345:500].split(b"\0", 1)[0]
        name = header[:100].split(b"\0", 1)[0]
        if offset + 512 + size > len(data):
            raise TruthError(f"boxes {path} is a truncated tar archive (member {name.decode('utf-8', 'replace')!r})")
        if kind != b"5":
            members.append(
                (
                    (prefix + b"/" + name if prefix else name).decode("utf-8", "replace"),
                    data[offset + 512 : offset + 512 + size],
                )
            )
        offset += 512 + (size + 511) // 512 * 512
    if not members and data[:512] != bytes(512):
        raise TruthError(f"boxes {path} is not a .tar/.tgz archive or a folder of XML files")
    yield from members


def _inflate(data: bytes, limit: int) -> bytes | None:
    """``data`` inflated if it is gzip, in pieces; ``None`` once it passes ``limit`` bytes."""
    if data[:2] != b"\x1f\x8b":
        return data
    inflater = zlib.decompressobj(wbits=31)
    pieces, total = [], 0
    chunk = data
    while chunk:
        piece = inflater.decompress(chunk, 1 << 24)
        total += len(piece)
        if total > limit:
            return None
        pieces.append(piece)
        chunk = inflater.unconsumed_tail
        if inflater.eof:
            break
    return b"".join(pieces)


def _tarfile_members(data: bytes, path: Path) -> Iterator[tuple[str, bytes]]:
    import tarfile  # Task 1 reads no archive

    try:
        with tarfile.open(fileobj=io.BytesIO(data), mode="r:") as archive:
            for member in archive:
                if member.isfile() and member.size <= MAX_XML_BYTES:
                    handle = archive.extractfile(member)
                    if handle is not None:
                        yield member.name, handle.read()
    except (tarfile.TarError, OSError, EOFError, ValueError) as exc:
        raise TruthError(f"boxes {path} is not a readable tar archive ({exc})") from None


_TAG = re.compile(rb"<(name|xmin|ymin|xmax|ymax)>([^<]*)</\1>")  # no nested repetition: linear time
_FIELDS = (b"name", b"xmin", b"ymin", b"xmax", b"ymax")


def _parse_xml(data: bytes, id_of_wnid: dict[str, int]) -> list[TruthBox]:
    """Objects of a VOC XML file.

    The usual layout (each ``<object>`` with ``<name>`` and ``<bndbox>`` corners
    in order, no entities, no DOCTYPE) is read by a linear scan of its tags; any
    other goes to ElementTree. A DOCTYPE (with it, entity expansion and external
    entities) is refused: VOC files have none.
    """
    if b"<!DOCTYPE" in data or b"<!ENTITY" in data:
        raise ValueError("declares a DOCTYPE or entities; box files are plain XML")
    if b"&" not in data and b"<!" not in data and data.lstrip().startswith((b"<annotation>", b"<?xml")):
        tags = _TAG.findall(data)
        fields = [tag for tag, _ in tags]
        n = data.count(b"<object>")
        if len(tags) == 5 * n and fields == list(_FIELDS) * n:
            return [
                _object(
                    tags[k + 0][1].decode("utf-8", "replace").strip(),
                    [t.decode("ascii", "replace") for _, t in tags[k + 1 : k + 5]],
                    id_of_wnid,
                )
                for k in range(0, len(tags), 5)
            ]
    return _parse_xml_tree(data, id_of_wnid)


def _object(wnid: str, corners: list[str | None], id_of_wnid: dict[str, int]) -> TruthBox:
    if wnid not in id_of_wnid:
        raise ValueError(f"names {wnid[:40]!r}, not a WNID of the 1000 classes")
    values = [_corner(c) for c in corners]
    if None in values:
        raise ValueError(
            f"has a box corner that is not a number: {[c if c is None else c.strip()[:40] for c in corners]}"
        )
    if not all(-LIMIT < v < LIMIT for v in values):  # type: ignore[operator]
        raise ValueError(f"has a box corner out of range: {[c.strip()[:40] for c in corners]}")  # type: ignore[union-attr]
    x1, y1, x2, y2 = values
    return id_of_wnid[wnid], x1, y1, x2, y2  # type: ignore[return-value]


def _corner(text: str | None) -> Corner | None:
    """A corner as written: an integer, or the exact value of a decimal such as 10.9 (the kit uses it as is)."""
    text = (text or "").strip()
    if text.isascii() and text.isdigit() and len(text) < 12:
        return int(text)
    if len(text) <= 40 and DECIMAL.fullmatch(text):
        value = fractions.Fraction(text)
        return int(value) if value.denominator == 1 else value
    return None


def _parse_xml_tree(data: bytes, id_of_wnid: dict[str, int]) -> list[TruthBox]:
    import xml.etree.ElementTree as ElementTree  # Task 2's truth only: 10 ms a Task 1 process does not pay

    try:
        root = ElementTree.fromstring(data)
    except ElementTree.ParseError as exc:
        raise ValueError(f"is not well-formed XML ({exc})") from None
    if root.tag != "annotation":
        raise ValueError(f"is not a VOC annotation (its root element is <{root.tag[:40]}>, not <annotation>)")
    return [
        _object(
            (obj.findtext("name") or "").strip(),
            [obj.findtext(f"bndbox/{k}") for k in ("xmin", "ymin", "xmax", "ymax")],
            id_of_wnid,
        )
        for obj in root.iter("object")
    ]


def read_confidences(path: Path, n_boxes: int, n_classes: int, log: IssueLog) -> NDArray[np.float64] | None:
    """Task 3: one line per test box, one real confidence per class (ascending class id)."""
    lines = _submission_lines(path, submission_limits(n_boxes, 32 * n_classes + 64, "box", "boxes"), log)
    if lines is None:
        return None
    errors_before = log.error_count
    if len(lines) != n_boxes:
        log.error(
            "line_count", f"has {plural(len(lines), 'line')}; the truth has {plural(n_boxes, 'box', 'boxes')}", path
        )
    scores = np.zeros((len(lines), n_classes))
    for number, line in enumerate(lines, start=1):
        tokens = line.replace(",", " ").split()
        if len(tokens) != n_classes:
            log.error(
                "columns", f"has {len(tokens)} values; one confidence per class ({n_classes}) is required", path, number
            )
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
