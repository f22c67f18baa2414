"""The clean rows of a camera-trap table, read by two compiled passes over their bytes.

A clean row is ``name<TAB>xc yc w h<TAB>class``: a photo name (spaces around it are
dropped), four decimals separated by single spaces, and a class written ``0``, ``1``,
``True`` or ``False`` (lower, title or upper case); or ``name<TAB><TAB>``, a photo without
animals. :func:`scan_rows` reads such rows about three times as fast as splitting them into Python
strings (:func:`podium.formats.detection_table._read_clean`), and gives ``None`` as soon as
anything else appears: another column count, a blank line, a quote, a control character or a
line break other than ``\\n`` and ``\\r\\n`` (Python splits lines on more), a space beyond ASCII at
either end of a name, a word, a second space, an unknown photo. The caller then reads the table
another way; when this way gives rows, the row-by-row reader, which names every problem with
its line, gives the same (the tests compare them on random and damaged tables).

Names become photo indices through an open-addressing hash table (FNV-1a over the bytes,
collisions resolved by comparing the bytes), in the order of first appearance, or by lookup in
the names already known (the truth's, when reading a submission).

A decimal ``m / 10^d`` without exponent, whose at most 18 digits spell an integer ``m <= 2^53``,
is divided as doubles, which gives the double ``float()`` gives (``m`` and ``10^d`` are exact
doubles and IEEE division rounds once: Clinger's fast path). Other decimals (an exponent, more
digits, a larger integer) are marked, and the caller reads their rows with ``float()``.

Each kernel states its preconditions and checks them at entry (a ``ValueError`` naming it):
:func:`_scan` the sizes of its outputs and the known names' spans, and, per line, room for one
more row or name; the helpers, called once or a few times a row, that their spans lie in their
arrays. None checks inside its loop over bytes.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray

from podium.accel.jit import compiled
from podium.formats.text import TextSpans

MAX_DIGITS = 18  # digits the int64 mantissa holds without overflow
POWERS_OF_TEN = np.array([float(10**k) for k in range(MAX_DIGITS + 1)])  # each an exact double (up to 10^22 are)
EXACT_MANTISSA = 1 << 53  # every integer up to it is an exact double
_DIGIT = np.array([k - 48 if 48 <= k <= 57 else -1 for k in range(256)], np.int64)  # a byte's digit, or -1
UNICODE_SPACES = (
    "\x85\xa0\u1680" + "".join(map(chr, range(0x2000, 0x200B))) + "\u2028\u2029\u202f\u205f\u3000"
)  # str.isspace beyond ASCII
_SPACE_BYTES = np.array(
    [list(c.encode().ljust(3, b"\0")) for c in UNICODE_SPACES], np.uint8
)  # UTF-8, 2 or 3 bytes, padded
_SPACE_WIDTHS = np.array([len(c.encode()) for c in UNICODE_SPACES], np.int64)
_FNV_OFFSET, _FNV_PRIME = np.uint64(0xCBF29CE484222325), np.uint64(0x100000001B3)
_CLASSES = (
    b"0",
    b"1",
    b"false",
    b"true",
    b"False",
    b"True",
    b"FALSE",
    b"TRUE",
)  # detection_table.CLASS_VALUES' spellings
_CLASS_TEXT = np.frombuffer(b"".join(_CLASSES), np.uint8)
_CLASS_ENDS = np.cumsum([len(c) for c in _CLASSES])
_CLASS_VALUE = np.array([0, 1, 0, 1, 0, 1, 0, 1], np.int8)


@dataclass(frozen=True)
class ScannedRows:
    """The rows with a box, in file order, and the photos when the names were new."""

    photo: NDArray[np.int64]
    xywh: NDArray[np.float64]  # (rows, 4)
    cls: NDArray[np.int8]
    texts: TextSpans  # each box's decimal text
    lines: NDArray[np.int64]  # each row's line, 1 for the first line scanned
    photos: TextSpans | None  # read without known names: every name, in order of first appearance


def scan_rows(body: bytes, known: TextSpans | None) -> ScannedRows | None:
    """The clean rows of ``body`` (the lines after the header, UTF-8); ``None`` unless every line is clean.

    With ``known`` (distinct names, numbered in their order), a name not in it makes the table
    unclean; without, every name is a photo.
    """
    data = np.frombuffer(body, np.uint8)
    if not _plain_lines(data):
        return None
    capacity = body.count(b"\n") + 1
    photo = np.empty(capacity, np.int64)
    xywh = np.empty((capacity, 4), np.float64)
    cls = np.empty(capacity, np.int8)
    spans = np.empty((capacity, 2), np.int64)
    lines = np.empty(capacity, np.int64)
    inexact = np.zeros(capacity, np.bool_)
    if known is None:
        names, name_spans, n_known = data, np.empty((capacity, 2), np.int64), 0
    else:
        names, name_spans, n_known = (
            np.frombuffer(known.data, np.uint8),
            np.stack([known.starts, known.ends], axis=1),
            len(known),
        )
    rows, n_names = _scan(data, names, name_spans, n_known, known is None, photo, xywh, cls, spans, lines, inexact)
    if rows < 0:
        return None
    texts = TextSpans(body, spans[:rows, 0].copy(), spans[:rows, 1].copy())
    rereads = np.flatnonzero(inexact[:rows])
    if rereads.size:  # by Python's float(), exact for any decimal
        xywh[rereads] = np.array(" ".join(texts.take(rereads).tolist()).split(), dtype=np.float64).reshape(-1, 4)
    photos = (
        None if known is not None else TextSpans(body, name_spans[:n_names, 0].copy(), name_spans[:n_names, 1].copy())
    )
    return ScannedRows(photo[:rows].copy(), xywh[:rows].copy(), cls[:rows].copy(), texts, lines[:rows].copy(), photos)


@compiled
def _plain_lines(data: NDArray[np.uint8]) -> bool:  # pragma: no cover - compiled
    """No quote, no control character but tabs and line ends ``\\n`` or ``\\r\\n`` (a ``\\r`` may end
    the data), and none of the other line breaks of ``str.splitlines`` (U+0085, U+2028, U+2029).
    Any bytes: no precondition."""
    n = data.size
    for i in range(n):
        byte = data[i]
        if byte == 34:  # a quote: the csv module would unquote a name, and no box or class holds one
            return False
        if byte < 32:
            if byte != 9 and byte != 10 and not (byte == 13 and (i + 1 == n or data[i + 1] == 10)):
                return False
        elif byte == 0xC2:
            if i + 1 < n and data[i + 1] == 0x85:
                return False
        elif byte == 0xE2 and i + 2 < n and data[i + 1] == 0x80 and (data[i + 2] == 0xA8 or data[i + 2] == 0xA9):
            return False
    return True


@compiled
def _hash(data: NDArray[np.uint8], start: int, end: int) -> np.uint64:  # pragma: no cover - compiled
    """FNV-1a of ``data[start:end]``; checked: ``0 <= start <= end <= data.size``."""
    if start < 0 or end < start or end > data.size:
        raise ValueError("_hash: the span is outside the data")
    h = _FNV_OFFSET
    for i in range(start, end):
        h = (h ^ np.uint64(data[i])) * _FNV_PRIME
    return h


@compiled
def _same(
    a: NDArray[np.uint8], a_start: int, a_end: int, b: NDArray[np.uint8], b_start: int, b_end: int
) -> bool:  # pragma: no cover - compiled
    """Whether ``a[a_start:a_end]`` and ``b[b_start:b_end]`` hold the same bytes; checked: both spans within their arrays."""
    if a_start < 0 or a_end < a_start or a_end > a.size or b_start < 0 or b_end < b_start or b_end > b.size:
        raise ValueError("_same: a span is outside its array")
    if a_end - a_start != b_end - b_start:
        return False
    for i in range(a_end - a_start):  # noqa: SIM110 (Numba compiles no generator)
        if a[a_start + i] != b[b_start + i]:
            return False
    return True


@compiled
def _decimal(data: NDArray[np.uint8], at: int, stop: int) -> tuple[float, bool, int]:  # pragma: no cover - compiled
    """The decimal starting at ``at`` (``[+-]?(digits[.digits] | .digits)([eE][+-]?digits)?``, as
    :data:`podium.formats.text.DECIMAL`): its value, whether that value is exact (else NaN), and
    where it ends; the end is -1 when no decimal starts there. Exact means at most
    ``MAX_DIGITS`` digits (so at most 18 places) spelling at most 2^53, and no exponent.
    Checked: ``0 <= at`` and ``stop <= data.size``."""
    if at < 0 or stop > data.size:
        raise ValueError("_decimal: the span is outside the data")
    negative = False
    if at < stop and (data[at] == 43 or data[at] == 45):
        negative = data[at] == 45
        at += 1
    mantissa, first, places = 0, at, 0
    while at < stop and _DIGIT[data[at]] >= 0:
        mantissa = mantissa * 10 + _DIGIT[data[at]]
        at += 1
    digits = at - first
    if at < stop and data[at] == 46:
        at += 1
        dot = at
        while at < stop and _DIGIT[data[at]] >= 0:
            mantissa = mantissa * 10 + _DIGIT[data[at]]
            at += 1
        places = at - dot
        digits += places
    if digits == 0:
        return np.nan, False, -1
    exact = digits <= MAX_DIGITS and mantissa <= EXACT_MANTISSA
    if at < stop and (data[at] == 101 or data[at] == 69):
        at += 1
        if at < stop and (data[at] == 43 or data[at] == 45):
            at += 1
        if not (at < stop and _DIGIT[data[at]] >= 0):
            return np.nan, False, -1
        while at < stop and _DIGIT[data[at]] >= 0:
            at += 1
        exact = False
    if not exact:
        return np.nan, False, at
    value = mantissa / POWERS_OF_TEN[places]
    return (-value if negative else value), True, at


@compiled
def _class(data: NDArray[np.uint8], start: int, end: int) -> int:  # pragma: no cover - compiled
    """The class ``data[start:end]`` spells (0 or 1), or -1 (:func:`_same` checks the span)."""
    for c in range(_CLASS_ENDS.size):
        first = _CLASS_ENDS[c - 1] if c > 0 else 0
        if _same(data, start, end, _CLASS_TEXT, first, _CLASS_ENDS[c]):
            return int(_CLASS_VALUE[c])
    return -1


@compiled
def _edge_space(data: NDArray[np.uint8], start: int, end: int) -> bool:  # pragma: no cover - compiled
    """Whether ``data[start:end]`` (UTF-8) starts or ends with a space beyond ASCII, which ``str.strip`` drops;
    checked: a span of at least one byte within ``data``."""
    if start < 0 or end <= start or end > data.size:
        raise ValueError("_edge_space: the span is empty or outside the data")
    if data[start] < 128 and data[end - 1] < 128:
        return False
    for k in range(_SPACE_WIDTHS.size):
        width = _SPACE_WIDTHS[k]
        fits = end - start >= width
        if fits and (
            _same(data, start, start + width, _SPACE_BYTES[k], 0, width)
            or _same(data, end - width, end, _SPACE_BYTES[k], 0, width)
        ):
            return True
    return False


@compiled
def _name_slots(
    names: NDArray[np.uint8], spans: NDArray[np.int64], n_names: int, capacity: int
) -> NDArray[np.int64]:  # pragma: no cover - compiled
    """The hash table of the first ``n_names`` names (``names[spans[i, 0]:spans[i, 1]]``, all distinct): -1 or a name's number.
    Checked: ``capacity`` a power of two above ``n_names`` (else the probing would never end), ``spans`` holding them."""
    if capacity < 1 or capacity & (capacity - 1) or capacity <= n_names or n_names < 0 or n_names > spans.shape[0]:
        raise ValueError("_name_slots: capacity must be a power of two above the names' count")
    slots = np.full(capacity, -1, np.int64)
    for name in range(n_names):
        slot = _hash(names, spans[name, 0], spans[name, 1]) & np.uint64(capacity - 1)
        while slots[slot] >= 0:
            slot = (slot + np.uint64(1)) & np.uint64(capacity - 1)
        slots[slot] = name
    return slots


@compiled
def _find(
    slots: NDArray[np.int64],
    names: NDArray[np.uint8],
    spans: NDArray[np.int64],
    data: NDArray[np.uint8],
    start: int,
    end: int,
) -> tuple[int, np.uint64]:  # pragma: no cover - compiled
    """The number of the name ``data[start:end]``, or -1 with the free slot where it would go.
    Checked: ``slots`` a power of two in size; that one is free is :func:`_scan`'s promise (it
    makes twice as many slots as names)."""
    if slots.size < 1 or slots.size & (slots.size - 1):
        raise ValueError("_find: the table's size must be a power of two")
    mask = np.uint64(slots.size - 1)
    slot = _hash(data, start, end) & mask
    while slots[slot] >= 0:
        name = slots[slot]
        if _same(names, spans[name, 0], spans[name, 1], data, start, end):
            return name, slot
        slot = (slot + np.uint64(1)) & mask
    return -1, slot


@compiled
def _scan(
    data: NDArray[np.uint8],
    names: NDArray[np.uint8],
    name_spans: NDArray[np.int64],
    n_names: int,
    new_names: bool,
    photo: NDArray[np.int64],
    xywh: NDArray[np.float64],
    cls: NDArray[np.int8],
    spans: NDArray[np.int64],
    lines: NDArray[np.int64],
    inexact: NDArray[np.bool_],
) -> tuple[int, int]:  # pragma: no cover - compiled
    """Fill the outputs row by row; ``(rows with a box, names)``, or ``(-1, 0)`` at the first unclean line.

    ``names`` is ``data`` itself when names are new (their spans are then filled in), else the known names.

    Checked at entry: the outputs of one length, ``0 <= n_names <= len(name_spans)``, the known
    names' spans inside ``names``; and before each row and new name is written, room for it.
    """
    rows_room = photo.size
    if (
        xywh.shape[0] != rows_room
        or xywh.shape[1] != 4
        or cls.size != rows_room
        or spans.shape[0] != rows_room
        or spans.shape[1] != 2
        or lines.size != rows_room
        or inexact.size != rows_room
        or name_spans.shape[1] != 2
        or n_names < 0
        or n_names > name_spans.shape[0]
        or (new_names and names.size != data.size)
    ):
        raise ValueError("_scan: the output arrays disagree in size")
    if n_names and (
        name_spans[:n_names, 0].min() < 0
        or name_spans[:n_names, 1].max() > names.size
        or (name_spans[:n_names, 1] < name_spans[:n_names, 0]).any()
    ):
        raise ValueError("_scan: a known name's span is outside the names")
    n = data.size
    capacity = 1
    while capacity < 2 * (n_names + (photo.size if new_names else 0)):
        capacity *= 2
    slots = _name_slots(names, name_spans, n_names, capacity)
    rows, line, at = 0, 0, 0
    last_start, last_end, last = 0, 0, -1  # the previous row's name: rows of a photo are usually together
    while at < n:
        line += 1
        tab1, tab2, stop = -1, -1, at
        while stop < n and data[stop] != 10:  # a third tab falls in the class, which it spoils
            if data[stop] == 9:
                if tab1 < 0:
                    tab1 = stop
                elif tab2 < 0:
                    tab2 = stop
            stop += 1
        end = stop - 1 if stop > at and data[stop - 1] == 13 else stop
        if tab2 < 0:
            return -1, 0
        start, name_end = at, tab1
        while start < name_end and data[start] == 32:
            start += 1
        while name_end > start and data[name_end - 1] == 32:
            name_end -= 1
        if start == name_end or _edge_space(data, start, name_end):
            return -1, 0
        if last < 0 or not _same(data, last_start, last_end, data, start, name_end):
            last, slot = _find(slots, names, name_spans, data, start, name_end)
            if last < 0:
                if not new_names:
                    return -1, 0
                if n_names >= name_spans.shape[0]:
                    raise ValueError("_scan: no room for another name")
                last = n_names
                name_spans[last, 0], name_spans[last, 1] = start, name_end
                slots[slot] = last
                n_names += 1
            last_start, last_end = start, name_end
        at = stop + 1
        if tab2 == tab1 + 1:  # no box: a photo without animals, if the class is empty too
            if end != tab2 + 1:
                return -1, 0
            continue
        if rows >= rows_room:
            raise ValueError("_scan: no room for another row")
        position = tab1 + 1
        for c in range(4):
            if c > 0:
                if position >= tab2 or data[position] != 32:
                    return -1, 0
                position += 1
            value, exact, position = _decimal(data, position, tab2)
            if position < 0:
                return -1, 0
            xywh[rows, c] = value
            if not exact:
                inexact[rows] = True
        cls[rows] = _class(data, tab2 + 1, end)
        if position != tab2 or cls[rows] < 0:
            return -1, 0
        photo[rows] = last
        spans[rows, 0], spans[rows, 1] = tab1 + 1, tab2
        lines[rows] = line
        rows += 1
    return rows, n_names


def compile_kernels() -> None:
    """Compile the scan (or load it from Numba's cache) on a two-line table, one row of each kind."""
    scan_rows(b"a\t0.5 0.5 1e-1 0.25\t1\r\nb\t\t", None)
