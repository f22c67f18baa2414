"""ILSVRC's files parsed from their bytes (``formats.label_rows``) give what the line-by-line readers give.

Random files, clean and damaged as users damage them (duplicates, labels out of range, blank lines,
CRLF, no final line feed, a BOM, extra or missing guesses, words, signs, tabs): the fast path either
declines or returns the row reader's numbers, and a submission read and scored through it has the same
values, lines, problems and scores as with the fast path switched off.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from pathlib import Path
from typing import TypeVar

import numpy as np
import pytest

from podium import evaluate
from podium.challenges import ilsvrc2012
from podium.core.errors import TruthError
from podium.core.issues import IssueLog
from podium.formats import ilsvrc
from podium.formats import label_rows as label_rows_module
from podium.formats.label_rows import label_rows

SEEDS = range(40)
T = TypeVar("T")


def _by_rows(data: bytes, width: int) -> list[list[int]] | None:
    """The clean shape, restated line by line: what :func:`label_rows` must return."""
    text = data.removeprefix(b"\xef\xbb\xbf").rstrip(b"\n")
    if not text:
        return None
    rows = []
    for line in text.split(b"\n"):
        tokens = line.split(b" ")
        if len(tokens) != width or not all(t.isdigit() and t.isascii() and 1 <= len(t) <= 4 for t in tokens):
            return None
        rows.append([int(t) for t in tokens])
    return rows


def _token(rng: np.random.Generator) -> str:
    """A label, usually in 1..1000; sometimes 0, padded with zeros, too long, a word or a signed number."""
    roll = rng.random()
    if roll < 0.85:
        return str(int(rng.integers(1, 1001)))
    return str(rng.choice(["0", "0007", "1001", "99999", "12345678", "x", "+5", "-3", "2.0", "1e3", "", "٣"]))


def _file(rng: np.random.Generator, n: int, width: int, damaged: bool) -> bytes:
    """``n`` lines of ``width`` labels; when ``damaged``, a few of the ways users write them otherwise."""
    lines = [[_token(rng) if damaged else str(int(rng.integers(1, 1001))) for _ in range(width)] for _ in range(n)]
    if n > 1 and rng.random() < 0.3:
        lines[1] = list(lines[0])  # a duplicated line
    separator, end = " ", "\n"
    if damaged:
        for _ in range(int(rng.integers(1, 4))):
            i = int(rng.integers(0, n))
            kind = rng.integers(0, 6)
            if kind == 0:
                lines[i] = lines[i][: int(rng.integers(0, width))]  # fewer guesses, or a blank line
            elif kind == 1:
                lines[i] = lines[i] + [str(int(rng.integers(1, 1001)))]  # an extra column
            elif kind == 2:
                lines.insert(i, [])  # a blank line inside
            elif kind == 3:
                separator = str(rng.choice(["  ", "\t", ", "]))
            elif kind == 4:
                end = "\r\n"
            else:
                lines[i] = [" ", *lines[i]]  # a leading space
    text = end.join(separator.join(line) for line in lines)
    text += str(rng.choice(["", end, end * 3])) if damaged else end
    data = text.encode()
    return b"\xef\xbb\xbf" + data if damaged and rng.random() < 0.2 else data


@pytest.mark.parametrize("seed", SEEDS)
@pytest.mark.parametrize("width", [1, 5])
def test_label_rows_is_the_row_reader_or_declines(seed: int, width: int) -> None:
    rng = np.random.default_rng(seed)
    data = _file(rng, int(rng.integers(1, 40)), width, damaged=seed % 4 != 0)
    parsed = label_rows(data, width)
    expected = _by_rows(data, width)
    assert (parsed.tolist() if parsed is not None else None) == expected, data[:200]
    if seed % 4 == 0:
        assert parsed is not None, "a clean file takes the fast path"


def test_label_rows_all_lengths_and_values() -> None:
    """Every label of 1 to 4 digits, leading zeros too, first, inside and last on its line."""
    tokens = [f"{v:0{w}d}" for v in range(10_000) for w in range(len(str(v)), 5)]
    padded = tokens + ["1"] * (-len(tokens) % 5)
    data = "\n".join(" ".join(padded[i : i + 5]) for i in range(0, len(padded), 5)).encode()
    assert label_rows(data, 5).ravel().tolist() == [int(t) for t in padded]  # type: ignore[union-attr]


def _both(monkeypatch: pytest.MonkeyPatch, call: Callable[[], T]) -> tuple[T, T]:
    """What ``call`` returns with the fast paths, then with them switched off (every file read line by line)."""
    fast = call()
    with monkeypatch.context() as patch:
        patch.setattr(label_rows_module, "label_rows", lambda *args: None)
        patch.setattr(ilsvrc2012, "SMALL_BYTES", -1)  # nor read as tokens without NumPy (test_label_tokens.py)
        return fast, call()


def _read(path: Path, n: int) -> tuple[ilsvrc.Guesses | None, IssueLog]:
    log = IssueLog()
    return ilsvrc.read_guesses(path, n, 1, log), log


def _truth(path: Path) -> object:
    try:
        return ilsvrc.read_truth_labels(path).tolist()
    except TruthError as exc:
        return str(exc), exc.issues


@pytest.mark.parametrize("seed", SEEDS)
def test_guesses_and_truth_through_the_fast_path_are_the_row_readers(
    seed: int, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    rng = np.random.default_rng(seed)
    n = int(rng.integers(1, 40))
    path = tmp_path / "guesses.txt"
    path.write_bytes(_file(rng, n, 5, damaged=seed % 3 != 0))
    (fast, fast_log), (slow, slow_log) = _both(monkeypatch, lambda: _read(path, n))
    assert fast_log.errors == slow_log.errors and fast_log.warnings == slow_log.warnings
    assert (fast is None) == (slow is None)
    if fast is not None and slow is not None:
        np.testing.assert_array_equal(fast.values, slow.values)
        assert fast.lines == slow.lines
    truth = tmp_path / "truth.txt"
    truth.write_bytes(_file(rng, n, 1, damaged=seed % 3 == 1))
    fast_truth, slow_truth = _both(monkeypatch, lambda: _truth(truth))
    assert fast_truth == slow_truth


@pytest.mark.parametrize("seed", range(8))
def test_scores_through_the_fast_path_are_the_row_readers(
    seed: int, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """podium.evaluate: the same status, scores and problems with the fast path as without it, and with
    a clean file the scores of the NumPy script of the rule (benchmarks/peers/ilsvrc2012_cls.py)."""
    rng = np.random.default_rng(seed)
    n = int(rng.integers(5, 60))
    truth, submission = tmp_path / "truth.txt", tmp_path / "submission.txt"
    truth.write_text("".join(f"{int(v)}\n" for v in rng.integers(1, 1001, n)))
    submission.write_bytes(_file(rng, n, 5, damaged=seed % 2 == 1))

    def scored() -> tuple[object, ...]:
        result = evaluate("ilsvrc2012-cls", truth, submission)
        return result.status, result.scores, result.errors, result.warnings

    results = _both(monkeypatch, scored)
    assert results[0] == results[1]
    if seed % 2 == 0:
        labels = np.loadtxt(truth, dtype=np.int64)
        guesses = np.loadtxt(submission, dtype=np.int64, ndmin=2)
        right = np.cumsum(guesses == labels[:, None], axis=1) > 0
        for k in range(1, 6):
            assert math.isclose(results[0][1][f"error@{k}"], float(1 - right[:, k - 1].mean()), rel_tol=1e-12)


def test_trailing_line_feeds_past_the_line_limit_are_refused_as_before(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Three images, then more blank lines than a file for three images may hold: the same refusal either way."""
    path = tmp_path / "guesses.txt"
    path.write_bytes(b"1 2 3 4 5\n" * 3 + b"\n" * 1004)
    (fast, fast_log), (slow, slow_log) = _both(monkeypatch, lambda: _read(path, 3))
    assert fast is None and slow is None and fast_log.errors == slow_log.errors
    assert "lines" in fast_log.errors[0].message
    path.write_bytes(b"1 2 3 4 5\n" * 3 + b"\n" * 1003)  # 1,006 line feeds: the most a file for 3 images may hold
    assert isinstance(_read(path, 3)[0], ilsvrc.Guesses)
