"""Reading a participant's text file within bounds set by the test set.

A submission can never need more bytes or lines than its test set calls for,
so every reader states those bounds (:class:`TextLimits`) and a file that
exceeds them is refused before it is split or parsed: memory stays bounded by
the test set, not by the file. The checks, in order, each naming what is wrong:

- the path is a regular file (:func:`podium.formats.files.read_bytes`);
- at most ``max_bytes`` bytes and ``max_lines`` lines;
- no line longer than ``max_line`` characters (this also keeps every CSV field
  under the ``csv`` module's own field limit);
- UTF-8 (a BOM is dropped) without NUL bytes.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from podium.formats.files import FileProblem, at_most, read_bytes

MAX_BYTES = 256 << 20  # any text podium reads, the organizer's included
MAX_LINES = 2_000_000
MAX_LINE = 65_536  # characters; below csv's field limit of 131,072
DECIMAL = re.compile(r"[+-]?(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][+-]?[0-9]+)?")  # a plain decimal, as Fraction reads it exactly


@dataclass(frozen=True)
class TextLimits:
    """The most a file may hold; ``needs`` says what for, in messages (e.g. "50,000 images")."""

    max_bytes: int = MAX_BYTES
    max_lines: int = MAX_LINES
    max_line: int = MAX_LINE
    needs: str = ""


def read_text(path: Path, limits: TextLimits = TextLimits()) -> str:
    """The file as text, within ``limits``; :class:`FileProblem` with a plain reason otherwise."""
    data = read_bytes(path, limits.max_bytes, limits.needs)
    newlines = data.count(b"\n")
    if newlines > limits.max_lines:
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
