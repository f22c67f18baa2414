"""The camera-trap table: ``Name<TAB>BBox<TAB>Class``, one row per detected object.

BBox holds four numbers ``xc yc w h`` normalized to [0, 1] (box centre, width,
height), separated by spaces or commas, optionally in brackets or quotes;
Class is 0 or 1 (True/False accepted). Comma or semicolon also work as the
column delimiter when the header says so, and the box may be four columns
(``Name, xc, yc, w, h, Class``). A photo without animals is, in the truth, a
row with empty BBox and Class; in a submission it may have such a row or none.
"""

from __future__ import annotations

import csv
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np
from numpy.typing import NDArray

from podium.accel.jit import kernels_loaded
from podium.core.issues import IssueLog, plural
from podium.formats.arrow_tables import DECIMAL_RE2, clean_columns, filled, numbers, string_array, strings
from podium.formats.files import FileProblem
from podium.formats.text import DECIMAL, TRUSTED, TextLimits, TextSpans, read_text
from podium.metrics.detection_boxes import Boxes

if TYPE_CHECKING:
    from podium.formats.detection_scan import ScannedRows

TOLERANCE = 1e-9
BOX_HEADERS = ({"bbox", "box", "bounding_box"},)
COORDINATE_HEADERS = (
    {"xc", "x", "x_c", "xcenter", "x_center"},
    {"yc", "y", "y_c", "ycenter", "y_center"},
    {"w", "width"},
    {"h", "height"},
)
CLASSES = {"0": 0, "1": 1, "false": 0, "true": 1}
CLASS_VALUES = {**CLASSES, "False": 0, "True": 1, "FALSE": 0, "TRUE": 1}  # as written, for the clean tables
SCAN_COLD_CHARACTERS = 20_000_000  # see _scan_pays
_BOX_PUNCTUATION = str.maketrans(dict.fromkeys("[](){}\"',;", " "))


@dataclass(frozen=True)
class Table:
    """Boxes of a table, and the photo names in order of first appearance."""

    boxes: Boxes  # its texts are TextSpans
    photos: list[str]  # index -> name (the truth's list of every test photo)
    names: TextSpans  # the same names, as the compiled scan looks them up

    @classmethod
    def of(cls, boxes: Boxes, photos: list[str]) -> Table:
        """The table with its names encoded as spans."""
        return cls(boxes, photos, TextSpans.of(photos))

    def restricted(self, photos: NDArray[np.int64]) -> Table:
        """The rows of ``photos`` (ascending indices) in file order, the photos numbered anew in their order."""
        number = np.full(len(self.photos), -1, dtype=np.int64)
        number[photos] = np.arange(len(photos))
        rows = np.flatnonzero(number[self.boxes.photo] >= 0)
        assert isinstance(self.boxes.texts, TextSpans)
        boxes = Boxes(
            number[self.boxes.photo[rows]], self.boxes.xywh[rows], self.boxes.cls[rows], self.boxes.texts.take(rows)
        )
        return Table(boxes, [self.photos[i] for i in photos.tolist()], self.names.take(photos))


@dataclass(frozen=True)
class _Layout:
    delimiter: str
    four_columns: bool


def _layout(header: str) -> _Layout | None:
    for delimiter in ("\t", ";", ","):
        fields = [f.strip().strip('"').lower() for f in header.split(delimiter)]
        if len(fields) == 3 and fields[0] == "name" and fields[1] in BOX_HEADERS[0] and fields[2] == "class":
            return _Layout(delimiter, False)
        if (
            len(fields) == 6
            and fields[0] == "name"
            and fields[5] == "class"
            and all(f in s for f, s in zip(fields[1:5], COORDINATE_HEADERS))
        ):
            return _Layout(delimiter, True)
    return None


def read_table(path: Path, log: IssueLog, truth: Table | None) -> Table | None:
    """Parse and check a table; ``None`` when it has errors (all logged with their lines).

    Reading a submission, ``truth`` is the truth's table: a row naming a photo
    not in it is an error. Without it (reading the truth), every name is a
    photo. A row with empty BBox and Class names a photo without detections.
    Clean tab-separated rows are read by a compiled scan
    (:mod:`podium.formats.detection_scan`) where it pays (:func:`_scan_pays`),
    else by pyarrow (:func:`_read_clean`); any other table row by row, which names
    every problem. All three give the same rows.
    """
    errors_before = log.error_count
    try:
        text = read_text(path, TRUSTED if truth is None else submission_limits(truth.names))
    except FileProblem as exc:
        log.error("unreadable", str(exc), path, exc.line)
        return None
    header = _header(text)
    if header is None:
        if truth is not None:
            return Table.of(_no_boxes(), [])
        log.error("empty", "is empty; the first line is the header Name, BBox, Class", path)
        return None
    header_line, header_text, body = header
    layout = _layout(header_text)
    if layout is None:
        log.error(
            "header",
            "the first line must be the header Name<TAB>BBox<TAB>Class (or Name, xc, yc, w, h, Class)",
            path,
            header_line + 1,
        )
        return None
    first = header_line + 2
    tabs = layout == _Layout("\t", False)
    scanned = _scanned(body, truth) if tabs and _scan_pays(body) else None
    photos: TextSpans | list[str] | None  # reading the truth: its photos, as the scan found them or as a list
    if scanned is not None and _valid(scanned.xywh):
        boxes = Boxes(scanned.photo, scanned.xywh, scanned.cls, scanned.texts)
        line_numbers: Sequence[int] | NDArray[np.int64] = scanned.lines + (first - 1)
        photos = scanned.photos
    elif (clean := _read_clean(body, first, truth) if tabs else None) is not None:
        boxes, line_numbers, photos = clean
    else:
        known = {} if truth is None else {name: i for i, name in enumerate(truth.photos)}
        boxes, line_numbers = _read_rows(body.splitlines(), first, layout, known, truth is None, path, log)
        photos = list(known)
    if log.error_count > errors_before:
        return None
    _warn_outside_frame(boxes.xywh, line_numbers, path, log)
    if truth is not None:
        return Table(boxes, truth.photos, truth.names)
    assert photos is not None  # the scan gives the names it found when none were known
    return Table(boxes, photos.tolist(), photos) if isinstance(photos, TextSpans) else Table.of(boxes, photos)


def _scan_pays(body: str) -> bool:
    """Whether the compiled scan is worth its start. In a process that has not run a kernel yet,
    Numba takes about a second to load, which the scan repays from about ``SCAN_COLD_CHARACTERS``
    (450,000 rows; measured as commands: benchmarks/README.md, camera-traps); once loaded, the
    scan pays on any table."""
    return len(body) >= SCAN_COLD_CHARACTERS or kernels_loaded()


def _scanned(body: str, truth: Table | None) -> ScannedRows | None:
    """The compiled scan's rows (imported here: Numba loads only in a process that scans)."""
    from podium.formats.detection_scan import scan_rows

    return scan_rows(body.encode(), None if truth is None else truth.names)


def _header(text: str) -> tuple[int, str, str] | None:
    """The header's index among the lines (the first that is not blank), its text, and the text after it."""
    head, _, rest = text.partition("\n")
    if head.strip() and len(head.splitlines()) == 1:
        return 0, head, rest
    lines = text.splitlines()
    index = next((i for i, line in enumerate(lines) if line.strip()), None)
    return None if index is None else (index, lines[index], "\n".join(lines[index + 1 :]))


def submission_limits(photos: TextSpans) -> TextLimits:
    """What a submission can need: on average 20 detections per photo (each false one costs a
    point), each row its photo name and up to 100 bytes of box and class, and 1 MiB to spare."""
    n = len(photos)
    longest = int((photos.ends - photos.starts).max(initial=0))  # in UTF-8 bytes
    rows = 20 * n + 1000
    return TextLimits(max_bytes=rows * (longest + 100) + (1 << 20), max_lines=rows, needs=plural(n, "photo"))


def _read_clean(body: str, first: int, truth: Table | None) -> tuple[Boxes, NDArray[np.int64], TextSpans] | None:
    """Tab-separated rows ``name<TAB>xc yc w h<TAB>class`` that are all valid, read by pyarrow
    (:mod:`podium.formats.arrow_tables`): the boxes, their lines, and the photos (the truth's, or
    reading the truth, its names in order of first appearance).

    ``None`` whenever anything is unusual; the row-by-row path then names every problem.
    """
    columns = clean_columns(body.encode(), "\t", 3)
    if columns is None:
        return None
    import pyarrow as pa
    import pyarrow.compute as pc

    names, box_texts, class_texts = (
        pc.ascii_trim_whitespace(c) for c in columns
    )  # as str.strip: no other control character is left
    if truth is None:
        encoded = pc.dictionary_encode(names)  # the names in order of first appearance
        photos, photo_of_row = encoded.dictionary, encoded.indices
    else:
        photos = string_array(truth.photos)
        photo_of_row = pc.index_in(names, value_set=photos)
    if photo_of_row.null_count or not pc.all(filled(names), min_count=0).as_py():
        return None  # a photo not in the truth, or a row without a name
    boxed = filled(box_texts)
    if not pc.all(boxed, min_count=0).as_py():  # photos without animals: empty BBox and Class
        if pc.any(pc.and_(pc.invert(boxed), filled(class_texts))).as_py():
            return None
        photo_of_row, box_texts, class_texts = (pc.filter(c, boxed) for c in (photo_of_row, box_texts, class_texts))
    box = DECIMAL_RE2
    classes = pc.index_in(class_texts, value_set=string_array(list(CLASS_VALUES)))
    if (
        classes.null_count
        or not pc.all(pc.match_substring_regex(box_texts, f"^{box} {box} {box} {box}$"), min_count=0).as_py()
    ):
        return None
    values = numbers(pc.cast(pc.list_flatten(pc.split_pattern(box_texts, " ")), pa.float64()))
    xywh = values.reshape(-1, 4)
    if not _valid(xywh):
        return None
    class_of = np.array(list(CLASS_VALUES.values()), dtype=np.int8)
    boxes = Boxes(
        numbers(photo_of_row).astype(np.int64),
        xywh,
        class_of[numbers(classes)],
        strings(box_texts),
    )
    return boxes, np.flatnonzero(numbers(boxed)) + first, strings(photos)


def _valid(xywh: NDArray[np.float64]) -> bool:
    return bool(
        np.isfinite(xywh).all()
        and (xywh >= -TOLERANCE).all()
        and (xywh <= 1 + TOLERANCE).all()
        and (xywh[:, 2:] > 0).all()
    )


def _read_rows(
    lines: list[str], first: int, layout: _Layout, known: dict[str, int], new_photos: bool, path: Path, log: IssueLog
) -> tuple[Boxes, list[int]]:
    """Row by row with the csv module: quotes, brackets, other delimiters, and every problem named."""
    photo: list[int] = []
    values: list[list[float]] = []
    texts: list[str] = []
    classes: list[int] = []
    line_numbers: list[int] = []
    for number, fields in enumerate(csv.reader(lines, delimiter=layout.delimiter), start=first):
        fields = [f.strip() for f in fields]
        if not any(fields):
            continue
        row = _parse_row(fields, layout)
        if isinstance(row, str):
            log.error("malformed", row, path, number)
            continue
        name, box, cls = row
        if new_photos:
            index = known.setdefault(name, len(known))
        elif name in known:
            index = known[name]
        else:
            log.error("unknown_photo", f"photo {name!r} is not in the test set", path, number)
            continue
        if box is None:
            continue
        problem = _box_problem(box)
        if problem:
            log.error("bad_box", problem, path, number)
            continue
        photo.append(index)
        texts.append(" ".join(box))
        values.append([float(v) for v in box])
        classes.append(cls)
        line_numbers.append(number)
    xywh = np.array(values, dtype=np.float64).reshape(-1, 4)
    return Boxes(
        np.array(photo, dtype=np.int64), xywh, np.array(classes, dtype=np.int8), TextSpans.of(texts)
    ), line_numbers


def _no_boxes() -> Boxes:
    return Boxes(np.zeros(0, np.int64), np.zeros((0, 4)), np.zeros(0, np.int8), TextSpans.of([]))


def _parse_row(fields: list[str], layout: _Layout) -> tuple[str, tuple[str, ...] | None, int] | str:
    """``(name, box text, class)``, ``box`` None for an empty row; a message if malformed."""
    expected = 6 if layout.four_columns else 3
    if len(fields) != expected:
        return f"expected {expected} columns separated by {_delimiter_name(layout.delimiter)}, got {len(fields)}"
    name, cls_text = fields[0], fields[-1]
    if not name:
        return "has no photo name"
    box_text = " ".join(fields[1:-1]) if layout.four_columns else fields[1]
    tokens = tuple(box_text.translate(_BOX_PUNCTUATION).split())
    if not tokens and not cls_text:
        return name, None, 0
    if len(tokens) != 4:
        return f"box {box_text!r} must hold four numbers xc yc w h"
    cls = CLASSES.get(cls_text.lower())
    if cls is None:
        return f"class {cls_text!r} must be 0 or 1 (True/False)"
    return name, tokens, cls


def _box_problem(box: tuple[str, ...]) -> str | None:
    if not all(DECIMAL.fullmatch(v) for v in box):
        if any(v.lower().lstrip("+-") in ("nan", "inf", "infinity") for v in box):
            return f"box {' '.join(box)!r} holds NaN or infinity"
        return f"box {' '.join(box)!r} holds something that is not a number (decimals such as 0.25 or 2.5e-1)"
    values = [float(v) for v in box]
    if not all(np.isfinite(values)):
        return f"box {' '.join(box)!r} holds NaN or infinity"
    if any(v < -TOLERANCE or v > 1 + TOLERANCE for v in values):
        return f"box {' '.join(box)!r} has a coordinate outside [0, 1] (coordinates are normalized)"
    if values[2] <= 0 or values[3] <= 0:
        return f"box {' '.join(box)!r} has a width or height that is not positive"
    return None


def _warn_outside_frame(
    xywh: NDArray[np.float64], lines: Sequence[int] | NDArray[np.int64], path: Path, log: IssueLog
) -> None:
    xc, yc, w, h = xywh.T
    outside = (
        (xc - w / 2 < -TOLERANCE)
        | (xc + w / 2 > 1 + TOLERANCE)
        | (yc - h / 2 < -TOLERANCE)
        | (yc + h / 2 > 1 + TOLERANCE)
    )
    if outside.any():
        first = int(lines[int(np.flatnonzero(outside)[0])])
        log.warning(
            "outside_frame",
            f"{plural(int(outside.sum()), 'box', 'boxes')} stick out of the frame (first at line {first}); scored as given",
            path,
            first,
        )


def _delimiter_name(delimiter: str) -> str:
    return {"\t": "tabs", ";": "semicolons", ",": "commas"}[delimiter]
