"""Reading a participant's text file within bounds set by the test set.

A submission can never need more bytes or lines than its test set calls for,
so every reader states those bounds (:class:`TextLimits`) and a file that
exceeds them is refused before it is split or parsed: memory stays bounded by
the test set, not by the file. The organizer's files (the truth, its class
lists) are trusted: :data:`TRUSTED` bounds them by bytes alone, which bound
the memory and the time their reading takes, so a test set of any count of
lines up to :data:`TRUSTED_MAX_BYTES` is read. The checks, in order, each
naming what is wrong:

- the path is a regular file (:func:`podium.formats.files.read_bytes`);
- at most ``max_bytes`` bytes and ``max_lines`` lines (``None``: no count);
- no line longer than ``max_line`` characters (this also keeps every CSV field
  under the ``csv`` module's own field limit);
- UTF-8 (a BOM is dropped) without NUL bytes.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import overload

import numpy as np
from numpy.typing import NDArray

from podium.formats.files import FileProblem, at_most, read_bytes

MAX_BYTES = 256 << 20  # a participant's text file, unless its reader states its own bound
MAX_LINES = 2_000_000
TRUSTED_MAX_BYTES = 1 << 30  # an organizer's text file: 1 GiB, 40 million face-clustering rows
MAX_LINE = 65_536  # characters; below csv's field limit of 131,072
FIXED_POINT_BLOCK = 1 << 16  # lines per block of the fixed-point reader
_FIXED_POINT_CHARS = b"0123456789+-. \t\n"  # all a fixed-point table holds
DECIMAL = re.compile(
    r"[+-]?(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][+-]?[0-9]+)?"
)  # a plain decimal, as Fraction reads it exactly


@dataclass(frozen=True)
class TextLimits:
    """The most a file may hold; ``needs`` says what for, in messages (e.g. "50,000 images")."""

    max_bytes: int = MAX_BYTES
    max_lines: int | None = MAX_LINES
    max_line: int = MAX_LINE
    needs: str = ""


TRUSTED = TextLimits(max_bytes=TRUSTED_MAX_BYTES, max_lines=None)
"""The bounds of an organizer's file: its bytes, not a count of lines meant for submissions."""


def read_text(path: Path, limits: TextLimits = TextLimits()) -> str:
    """The file as text, within ``limits``; :class:`FileProblem` with a plain reason otherwise."""
    data = read_bytes(path, limits.max_bytes, limits.needs)
    newlines = data.count(b"\n") if limits.max_lines is not None else 0
    if limits.max_lines is not None and newlines > limits.max_lines:
        raise FileProblem(f"has {newlines + 1:,} lines; {at_most(limits.needs)} {limits.max_lines:,}")
    _check_line_lengths(data, limits.max_line)
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        line = data[: exc.start].count(b"\n") + 1
        raise FileProblem(f"is not UTF-8 text (bad byte at line {line})", line) from None
    if "\0" in text:
        line = text[: text.index("\0")].count("\n") + 1
        raise FileProblem(f"is not a text file (it holds NUL bytes, first at line {line})", line)
    return text


@dataclass(frozen=True, eq=False)
class TextSpans(Sequence[str]):
    """Strings kept as spans of one UTF-8 buffer, ``data[starts[i]:ends[i]]``, decoded when asked for.

    A column of a large table costs 16 bytes a row and its share of the buffer this way, where
    a Python string costs about 50 bytes more.

    >>> spans = TextSpans.of(["0.5 0.5", "", "1 2"])
    >>> spans.tolist(), spans[-1], spans.take(np.array([2, 0])).tolist()
    (['0.5 0.5', '', '1 2'], '1 2', ['1 2', '0.5 0.5'])
    """

    data: bytes
    starts: NDArray[np.int64]
    ends: NDArray[np.int64]

    @classmethod
    def of(cls, strings: Sequence[str]) -> TextSpans:
        encoded = [s.encode() for s in strings]
        lengths = np.array([len(e) for e in encoded], dtype=np.int64)
        ends = np.cumsum(lengths)
        return cls(b"".join(encoded), ends - lengths, ends)

    def __len__(self) -> int:
        return len(self.starts)

    @overload
    def __getitem__(self, index: int) -> str: ...
    @overload
    def __getitem__(self, index: slice) -> TextSpans: ...
    def __getitem__(self, index: int | slice) -> str | TextSpans:
        if isinstance(index, slice):
            return self.take(np.arange(len(self))[index])
        return self.data[self.starts[index] : self.ends[index]].decode()

    def tolist(self) -> list[str]:
        """Every string: all copied in one gather with a byte UTF-8 never holds (0xFF) after each,
        then split on it."""
        if not len(self):
            return []
        joined, _ = self._gathered(np.arange(len(self)), gap=1)
        return list(map(bytes.decode, joined[:-1].tobytes().split(b"\xff")))

    def take(self, rows: NDArray[np.int64]) -> TextSpans:
        """The strings ``rows``, in a buffer of their own (a part of a table does not keep the whole)."""
        joined, starts = self._gathered(rows, gap=0)
        return TextSpans(joined.tobytes(), starts, starts + (self.ends[rows] - self.starts[rows]))

    def _gathered(self, rows: NDArray[np.int64], gap: int) -> tuple[NDArray[np.uint8], NDArray[np.int64]]:
        """The strings ``rows`` end to end, each followed by ``gap`` bytes 0xFF, and where each starts."""
        lengths = self.ends[rows] - self.starts[rows]
        starts = np.cumsum(lengths + gap, dtype=np.int64) - lengths - gap
        within = np.arange(int(lengths.sum())) - np.repeat(
            np.cumsum(lengths) - lengths, lengths
        )  # each byte's place in its string
        joined = np.full(int(lengths.sum()) + gap * len(lengths), 0xFF, np.uint8)
        joined[np.repeat(starts, lengths) + within] = np.frombuffer(self.data, np.uint8)[
            np.repeat(self.starts[rows], lengths) + within
        ]
        return joined, starts


def numeric_rows(lines: list[str], dtype: type[np.int64] | type[np.float64]) -> np.ndarray | None:
    """The lines as a (lines, numbers) matrix read by NumPy's C reader, when every line holds the
    same count of whitespace-separated numbers of ``dtype``; else ``None``.

    The fast path of the table readers: a blank line, a comma, a word or a ragged line gives
    ``None``, and the caller's line-by-line reader then names the problem.

    >>> numeric_rows(["1 2", "3 4"], np.int64).tolist(), numeric_rows(["1 2", "3"], np.int64), numeric_rows(["1", ""], np.int64)
    ([[1, 2], [3, 4]], None, None)
    """
    if not lines:
        return None
    fixed = _fixed_point_rows(lines) if dtype is np.float64 else None
    if fixed is not None:
        return fixed
    try:
        values = np.loadtxt(lines, dtype=dtype, comments=None, ndmin=2)
    except (ValueError, OverflowError):
        return None
    return values if len(values) == len(lines) else None


def _fixed_point_rows(lines: list[str]) -> NDArray[np.float64] | None:
    """Lines of decimals that all have the same count ``d`` of fraction digits (``0.3307 -1.2500``),
    or of integers (``d = 0``: ``7 12 -3``), read as the integers their signs and digits spell and
    divided by ``10^d``; ``None`` for anything else (an exponent, a blank other than space and
    tab, a number with another count of digits after its dot, a lone dot).

    Exact: an integer below ``2^53`` and ``10^d`` for ``d <= 22`` are both doubles, and IEEE
    division rounds their exact quotient correctly, so ``3307 / 10^4`` is the double nearest to
    0.3307, the one ``float("0.3307")`` gives (Clinger's fast path). Two to eight times as fast
    as NumPy's float reader, because its integer reader is six to eight times faster.

    The lines go in blocks of ``FIXED_POINT_BLOCK`` (each may have its own ``d``), so the
    character arrays stay a few megabytes whatever the file.

    A number's sign is kept when its digits are all zeros: ``-0.00`` reads as ``-0.0``, as
    ``float`` reads it.

    >>> _fixed_point_rows(["0.3307 12.5000", "1.0000 0.0001"]).tolist(), _fixed_point_rows(["3 -4"]).tolist(), _fixed_point_rows(["0.5 0.25"])
    ([[0.3307, 12.5], [1.0, 0.0001]], [[3.0, -4.0]], None)
    >>> _fixed_point_rows(["1.50 2.5  3.00"]), _fixed_point_rows(["-0.00 1.00"]).tolist()
    (None, [[-0.0, 1.0]])
    """
    blocks: list[NDArray[np.float64]] = []
    for start in range(0, len(lines), FIXED_POINT_BLOCK):
        block = _fixed_point_block(lines[start : start + FIXED_POINT_BLOCK])
        if block is None or (blocks and block.shape[1] != blocks[0].shape[1]):
            return None
        blocks.append(block)
    return np.concatenate(blocks) if len(blocks) > 1 else blocks[0]


def _fixed_point_block(lines: list[str]) -> NDArray[np.float64] | None:
    """One block of :func:`_fixed_point_rows`: ``None`` unless every number is a sign and digits
    with either no dot or one dot followed by exactly ``places`` digits (the first number's count)."""
    text = "\n".join(lines)
    if not text.isascii():
        return None
    data = text.encode("ascii")
    if data.translate(None, _FIXED_POINT_CHARS):  # an exponent, a word, a blank other than space and tab
        return None
    chars = np.frombuffer(data, np.uint8)
    blank = (chars == 32) | (chars == 10) | (chars == 9) if b"." in data or b"-" in data else None
    places, digits = 0, lines
    if blank is not None and b"." in data:
        dots = np.flatnonzero(chars == 46)
        following = np.flatnonzero(blank[dots[0] :])
        places = int(following[0]) - 1 if following.size else chars.size - int(dots[0]) - 1
        ends = dots + places + 1  # each dot: ``places`` digits, then a blank or the end
        if places > 22 or ends[-1] > chars.size or not blank[ends[ends < chars.size]].all():
            return None
        for k in range(1, places + 1):  # "2.5 " beside "1.50": not two digits after the dot
            if ((chars[dots + k] - 48) > 9).any():
                return None
        if places == 0 and (dots[0] == 0 or ((chars[dots - 1] - 48) > 9).any()):  # "." or "-." alone: no digit
            return None
        numbers = int(not blank[0]) + int((blank[:-1] & ~blank[1:]).sum())
        if numbers != dots.size:  # a number without a dot (none holds two: its first ends it)
            return None
        digits = text.replace(".", "").split("\n")
    try:
        integers = np.loadtxt(digits, dtype=np.int64, comments=None, ndmin=2)
    except (ValueError, OverflowError):  # a sign out of place
        return None
    if len(integers) != len(lines) or ((integers >= 1 << 53) | (integers <= -(1 << 53))).any():
        return None
    values = integers / 10.0**places
    if blank is not None and b"-" in data and not values.all():  # as float reads it, "-0.00" is -0.0
        starts = np.flatnonzero(~blank & np.concatenate(([True], blank[:-1])))
        values.ravel()[(chars[starts] == 45) & (integers.ravel() == 0)] = -0.0
    return values


def _check_line_lengths(data: bytes, max_line: int) -> None:
    """Refuse a line of more than ``max_line`` characters.

    Lines are measured in bytes first (at C speed); only a line over the limit
    in bytes is decoded to count its characters (UTF-8 has one to four bytes each).
    """
    if len(data) <= max_line:
        return
    ends = np.flatnonzero(np.frombuffer(data, dtype=np.uint8) == 10)
    starts = np.concatenate([[0], ends + 1])
    stops = np.concatenate([ends, [len(data)]])
    for index in np.flatnonzero(stops - starts > max_line).tolist():
        if len(data[starts[index] : stops[index]].decode("utf-8", "replace")) > max_line:
            raise FileProblem(f"line {index + 1:,} is longer than {max_line:,} characters", index + 1)
