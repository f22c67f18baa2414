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
from typing import TYPE_CHECKING, overload

from podium.core.lazy import LazyModule
from podium.formats.files import FileProblem, at_most, read_bytes

if TYPE_CHECKING:
    import numpy as np
    from numpy.typing import NDArray
else:
    np = LazyModule("numpy")


MAX_BYTES = 256 << 20  # a participant's text file, unless its reader states its own bound
MAX_LINES = 2_000_000
TRUSTED_MAX_BYTES = 1 << 30  # an organizer's text file: 1 GiB, 40 million face-clustering rows
MAX_LINE = 65_536  # characters; below csv's field limit of 131,072
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
    return decode_text(read_text_bytes(path, limits))


def text_of(data: bytes, limits: TextLimits = TextLimits()) -> str:
    """The bytes of a file already read as text, within ``limits`` but for its byte count (:func:`read_text` after reading)."""
    return decode_text(checked_lines(data, limits))


def read_text_bytes(path: Path, limits: TextLimits) -> bytes:
    """The file's bytes within ``limits`` (its size, lines and line lengths), not decoded yet: a
    reader that hands clean bytes to a library decodes (:func:`decode_text`) only what it does not."""
    return checked_lines(read_bytes(path, limits.max_bytes, limits.needs), limits)


def checked_lines(data: bytes, limits: TextLimits) -> bytes:
    """``data`` if its lines are within ``limits`` (their count and lengths); :class:`FileProblem` otherwise."""
    newlines = data.count(b"\n") if limits.max_lines is not None else 0
    if limits.max_lines is not None and newlines > limits.max_lines:
        raise FileProblem(f"has {newlines + 1:,} lines; {at_most(limits.needs)} {limits.max_lines:,}")
    _check_line_lengths(data, limits.max_line)
    return data


def decode_text(data: bytes) -> str:
    """UTF-8 text (a BOM dropped) without NUL bytes; :class:`FileProblem` naming the line otherwise."""
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
    ``None``, and the caller's line-by-line reader then names the problem. Doubles are read by
    NumPy's integer reader where every number is an integer (the ILSVRC kit's labels and corners:
    six to eight times its float reader), unless one of them is a negative zero, which ``float``
    reads as ``-0.0``; else by its float reader, correctly rounded as ``float`` is.

    >>> numeric_rows(["1 2", "3 4"], np.int64).tolist(), numeric_rows(["1 2", "3"], np.int64), numeric_rows(["1", ""], np.int64)
    ([[1, 2], [3, 4]], None, None)
    >>> numeric_rows(["7 -0", "0.25 1e3"], np.float64).tolist(), numeric_rows(["7 -0"], np.float64).tolist()
    ([[7.0, -0.0], [0.25, 1000.0]], [[7.0, -0.0]])
    """
    if not lines:
        return None
    if dtype is np.float64:
        integers = numeric_rows(lines, np.int64)
        if integers is not None and (integers.all() or not any("-" in line for line in lines)):
            return integers.astype(np.float64)  # a double rounds an integer as float rounds its digits
    try:
        values = np.loadtxt(lines, dtype=dtype, comments=None, ndmin=2)
    except (ValueError, OverflowError):
        return None
    return values if len(values) == len(lines) else None


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
