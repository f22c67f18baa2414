"""The table readers' fast paths against the plain reader: ``float`` (or ``int``) of each field of
``line.split()``, bit for bit, on random and adversarial text.

:func:`podium.formats.text.numeric_rows` may refuse a table (``None``: its caller then reads it
line by line and names the problem), but whatever it returns must be what the plain reader
reads: the same shape, the same doubles, the sign of a zero included.
"""

from __future__ import annotations

import numpy as np
import pytest

from podium.formats import text


def _plain(lines: list[str], parse: type[float] | type[int]) -> np.ndarray | None:
    """The plain reader: every field of every line through ``parse``; ``None`` for a blank or
    ragged line or a field ``parse`` refuses."""
    try:
        rows = [[parse(field) for field in line.split()] for line in lines]
    except (ValueError, OverflowError):
        return None
    if not rows or len({len(row) for row in rows}) != 1 or not rows[0]:
        return None
    try:
        return np.array(rows, dtype=np.float64 if parse is float else np.int64)
    except OverflowError:
        return None


def _same(got: np.ndarray, expected: np.ndarray) -> bool:
    """Equal shapes and bits (``-0.0`` differs from ``0.0``; any NaN equals any NaN)."""
    if got.shape != expected.shape or got.dtype != expected.dtype:
        return False
    if got.dtype == np.float64:
        nan = np.isnan(got)
        if not np.array_equal(nan, np.isnan(expected)):
            return False
        return np.array_equal(got[~nan].view(np.uint64), expected[~nan].view(np.uint64))
    return np.array_equal(got, expected)


ODD_TOKENS = [
    "-0.0",
    "-0",
    "+0.00",
    "-.0",
    "0.",
    "-0.",
    ".5",
    "5.",
    "+.5",
    "-.5",
    ".",
    "-.",
    "+",
    "-",
    ".+5",
    "5.+",
    "1.2.3",
    "1e3",
    "1E-3",
    "-1.5e+2",
    "1.5e",
    "inf",
    "-Infinity",
    "nan",
    "-nan",
    "1e400",
    "-1e-400",
    "1_0",
    "1_0.5",
    "0x10",
    "١٢",
    "１",
    "9007199254740991",
    "9007199254740992",
    "-9223372036854775808",
    "9223372036854775808",
    "0." + "0" * 21 + "7",
    "0." + "0" * 22 + "7",
    "007.50",
    "-007",
    "1,5",
    "--1",
    "+-1",
]
SEPARATORS = [" ", "  ", "\t", " \t ", "\x1f", "\xa0", "\u2003", "   "]


def _number(rng: np.random.Generator, places: int) -> str:
    """A decimal with ``places`` fraction digits (an integer if 0), a random sign, sometimes padded with zeros."""
    digits = "".join(map(str, rng.integers(0, 10, int(rng.integers(1, 8)))))
    sign = str(rng.choice(["", "", "-", "+"]))
    if not places:
        return sign + digits
    return f"{sign}{digits}.{''.join(map(str, rng.integers(0, 10, places)))}"


def _adversarial_lines(rng: np.random.Generator) -> list[str]:
    """A table that is nearly fixed-point: one count of places, then some numbers with one place
    fewer or more, padding and tabs, odd tokens, odd blanks, signs and zeros."""
    places = int(rng.choice([0, 1, 2, 3, 4, int(rng.integers(5, 24))]))
    width = int(rng.integers(1, 6))
    rows = []
    for _ in range(int(rng.integers(1, 40))):
        fields = []
        for _ in range(width):
            roll = rng.random()
            if roll < 0.08:
                fields.append(str(rng.choice(ODD_TOKENS)))
            elif roll < 0.16:
                fields.append(_number(rng, max(0, places + int(rng.choice([-1, 1])))))
            elif roll < 0.22:
                fields.append(
                    ("-" if rng.random() < 0.5 else "")
                    + "0" * int(rng.integers(1, 3))
                    + ("." + "0" * places if places else "")
                )
            else:
                fields.append(_number(rng, places))
        separators = rng.choice(SEPARATORS[:2] if rng.random() < 0.5 else SEPARATORS, size=width + 1)
        line = "".join(str(s) + f for s, f in zip(separators, fields, strict=False))
        if rng.random() < 0.3:
            line += str(separators[-1])
        rows.append(line if rng.random() < 0.5 else line.lstrip())
    if rng.random() < 0.05:
        rows.insert(int(rng.integers(0, len(rows) + 1)), "")
    return rows


@pytest.mark.parametrize("dtype", [np.float64, np.int64])
@pytest.mark.parametrize("seed", range(6))
def test_numeric_rows_read_what_float_reads(seed: int, dtype: type[np.float64] | type[np.int64]) -> None:
    """400 adversarial tables a seed: each read is refused or equal to
    the plain reader's, bit for bit."""
    rng = np.random.default_rng(seed)
    for _ in range(400):
        lines = _adversarial_lines(rng)
        got = text.numeric_rows(lines, dtype)
        if got is not None:
            expected = _plain(lines, float if dtype is np.float64 else int)
            assert expected is not None and _same(got, expected), (lines, got, expected)


@pytest.mark.parametrize(
    ("lines", "expected"),
    [
        (["1.50 2.5  3.00"], [[1.5, 2.5, 3.0]]),  # a number with fewer places, then two blanks
        (["1.50 2.5", " 3.00 4.00"], [[1.5, 2.5], [3.0, 4.0]]),  # the same at a line's end
        (["1.00 2.5 \t3.00"], [[1.0, 2.5, 3.0]]),
        (["179.00 179.0  12.00"], [[179.0, 179.0, 12.0]]),  # aligned columns
        (["-0.00 1.00", "0.00 -0.00"], [[-0.0, 1.0], [0.0, -0.0]]),
        (["-0 3", "+0 -4"], [[-0.0, 3.0], [0.0, -4.0]]),
        (["9007199254740993 -7"], [[9007199254740992.0, -7.0]]),  # past 2^53: rounded as float rounds it
        (["99999999999999999999 1"], [[1e20, 1.0]]),  # past 2^63: the float reader
    ],
)
def test_padded_and_mixed_decimals_read_as_written(lines: list[str], expected: list[list[float]]) -> None:
    """The misreads of 0.8.5's fixed-point path (``2.5`` beside ``1.50`` read as 0.25; ``-0.00`` as +0)."""
    got = text.numeric_rows(lines, np.float64)
    assert got is not None and _same(got, np.array(expected))
