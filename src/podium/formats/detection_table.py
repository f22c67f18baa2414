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
from itertools import repeat
from pathlib import Path

import numpy as np

from podium.formats.files import FileProblem
from podium.formats.text import DECIMAL, TextLimits, numeric_rows, read_text
from podium.issues import IssueLog, plural
from podium.metrics.detection_points import Boxes

TOLERANCE = 1e-9
BOX_HEADERS = ({"bbox", "box", "bounding_box"},)
COORDINATE_HEADERS = ({"xc", "x", "x_c", "xcenter", "x_center"}, {"yc", "y", "y_c", "ycenter", "y_center"}, {"w", "width"}, {"h", "height"})
CLASSES = {"0": 0, "1": 1, "false": 0, "true": 1}
CLASS_VALUES = {**CLASSES, "False": 0, "True": 1, "FALSE": 0, "TRUE": 1}  # as written, for the fast path
_BOX_PUNCTUATION = str.maketrans(dict.fromkeys("[](){}\"',;", " "))


@dataclass(frozen=True)
class Table:
    """Boxes of a table, and the photo names in order of first appearance."""

    boxes: Boxes
    photos: list[str]  # index -> name (the truth's list of every test photo)

    def restricted(self, photos: np.ndarray) -> Table:
        """The rows of ``photos`` (ascending indices) in file order, the photos numbered anew in their order."""
        number = np.full(len(self.photos), -1, dtype=np.int64)
        number[photos] = np.arange(len(photos))
        rows = np.flatnonzero(number[self.boxes.photo] >= 0)
        texts = [self.boxes.texts[k] for k in rows.tolist()]
        boxes = Boxes(number[self.boxes.photo[rows]], self.boxes.xywh[rows], self.boxes.cls[rows], texts)
        return Table(boxes, [self.photos[i] for i in photos.tolist()])


@dataclass(frozen=True)
class _Layout:
    delimiter: str
    four_columns: bool


def _layout(header: str) -> _Layout | None:
    for delimiter in ("\t", ";", ","):
        fields = [f.strip().strip('"').lower() for f in header.split(delimiter)]
        if len(fields) == 3 and fields[0] == "name" and fields[1] in BOX_HEADERS[0] and fields[2] == "class":
            return _Layout(delimiter, False)
        if len(fields) == 6 and fields[0] == "name" and fields[5] == "class" and all(f in s for f, s in zip(fields[1:5], COORDINATE_HEADERS)):
            return _Layout(delimiter, True)
    return None


def read_table(path: Path, log: IssueLog, photos: dict[str, int] | None) -> Table | None:
    """Parse and check a table; ``None`` when it has errors (all logged with their lines).

    ``photos`` maps known photo names to indices (the truth's); a submission
    row naming another photo is an error. Without it (reading the truth),
    every name is a photo. A row with empty BBox and Class names a photo without detections.
    """
    errors_before = log.error_count
    try:
        text = read_text(path, TextLimits() if photos is None else submission_limits(photos))
    except FileProblem as exc:
        log.error("unreadable", str(exc), path, exc.line)
        return None
    lines = text.splitlines()
    header_line = next((i for i, line in enumerate(lines) if line.strip()), None)
    if header_line is None:
        if photos is not None:
            return Table(_no_boxes(), [])
        log.error("empty", "is empty; the first line is the header Name, BBox, Class", path)
        return None
    layout = _layout(lines[header_line])
    if layout is None:
        log.error("header", "the first line must be the header Name<TAB>BBox<TAB>Class (or Name, xc, yc, w, h, Class)", path, header_line + 1)
        return None
    known = dict(photos) if photos is not None else {}
    body = lines[header_line + 1 :]
    table = _read_clean(body, header_line + 2, layout, known, photos is None)
    if table is None:
        table = _read_rows(body, header_line + 2, layout, known, photos is None, path, log)
    if table is None or log.error_count > errors_before:
        return None
    boxes, line_numbers = table
    _warn_outside_frame(boxes.xywh, line_numbers, path, log)
    return Table(boxes, list(known))


def submission_limits(photos: dict[str, int]) -> TextLimits:
    """What a submission can need: on average 20 detections per photo (each false one costs a
    point), each row its photo name and up to 100 bytes of box and class, and 1 MiB to spare."""
    n = len(photos)
    longest = max(map(len, map(str.encode, photos)), default=0)
    rows = 20 * n + 1000
    return TextLimits(max_bytes=rows * (longest + 100) + (1 << 20), max_lines=rows, needs=plural(n, "photo"))


def _read_clean(
    lines: list[str], first: int, layout: _Layout, known: dict[str, int], new_photos: bool
) -> tuple[Boxes, Sequence[int]] | None:
    """The fast path: tab-separated rows ``name<TAB>xc yc w h<TAB>class`` that are all valid.

    ``None`` whenever anything is unusual; the row-by-row path then names every problem.
    """
    if layout != _Layout("\t", False) or list(map(str.count, lines, repeat("\t"))).count(2) != len(lines):
        return None
    parts = "\t".join(lines).split("\t")
    names, box_texts, class_texts = list(map(str.strip, parts[0::3])), parts[1::3], parts[2::3]
    if not all(names):
        return None
    if new_photos:
        for name in dict.fromkeys(names):  # each name once, in the order of first appearance
            known.setdefault(name, len(known))
    photo_of_row = list(map(known.get, names, repeat(-1)))
    if -1 in photo_of_row:
        return None
    kept: Sequence[int] = range(len(lines))
    if "" in box_texts:  # photos without animals: empty BBox and Class
        kept = [i for i, b in enumerate(box_texts) if b]
        if any(class_texts[i] for i, b in enumerate(box_texts) if not b):
            return None
        box_texts = [box_texts[i] for i in kept]
        class_texts = [class_texts[i] for i in kept]
        photo_of_row = [photo_of_row[i] for i in kept]
    joined = " ".join(box_texts)
    if not joined.isascii() or any(c in joined for c in "[](){}\"',;\n_") or list(map(str.count, box_texts, repeat(" "))).count(3) != len(box_texts):
        return None
    xywh = numeric_rows(box_texts, np.float64) if box_texts else np.zeros((0, 4))
    if xywh is None or xywh.shape[1] != 4:  # the checks above left four numbers between single spaces, or this
        return None
    classes = list(map(CLASS_VALUES.get, class_texts, repeat(-1)))
    if -1 in classes or not _valid(xywh):
        return None
    boxes = Boxes(np.array(photo_of_row, dtype=np.int64), xywh, np.array(classes, dtype=np.int8), box_texts)
    return boxes, [first + i for i in kept] if isinstance(kept, list) else range(first, first + len(lines))


def _valid(xywh: np.ndarray) -> bool:
    return bool(
        np.isfinite(xywh).all()
        and (xywh >= -TOLERANCE).all()
        and (xywh <= 1 + TOLERANCE).all()
        and (xywh[:, 2:] > 0).all()
    )


def _read_rows(
    lines: list[str], first: int, layout: _Layout, known: dict[str, int], new_photos: bool, path: Path, log: IssueLog
) -> tuple[Boxes, list[int]] | None:
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
    return Boxes(np.array(photo, dtype=np.int64), xywh, np.array(classes, dtype=np.int8), texts), line_numbers


def _no_boxes() -> Boxes:
    return Boxes(np.zeros(0, np.int64), np.zeros((0, 4)), np.zeros(0, np.int8), [])



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


def _warn_outside_frame(xywh: np.ndarray, lines: Sequence[int], path: Path, log: IssueLog) -> None:
    xc, yc, w, h = xywh.T
    outside = (xc - w / 2 < -TOLERANCE) | (xc + w / 2 > 1 + TOLERANCE) | (yc - h / 2 < -TOLERANCE) | (yc + h / 2 > 1 + TOLERANCE)
    if outside.any():
        first = lines[int(np.flatnonzero(outside)[0])]
        log.warning(
            "outside_frame",
            f"{plural(int(outside.sum()), 'box', 'boxes')} stick out of the frame (first at line {first}); scored as given",
            path,
            first,
        )


def _delimiter_name(delimiter: str) -> str:
    return {"\t": "tabs", ";": "semicolons", ",": "commas"}[delimiter]
