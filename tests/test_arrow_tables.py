"""pyarrow's way into the clean tables (:mod:`podium.formats.arrow_tables`) against the row-by-row readers.

Whenever pyarrow gives rows they must be the rows the csv reader gives, bit for bit, with the same
warnings; on anything else it must step aside, and the row-by-row reader names every problem.
Odd but valid tables (quoted fields, CRLF, a BOM, no final newline, exponents, huge and duplicate
ids, empty lines) and tables damaged byte by byte are read both ways.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from podium.core.issues import IssueLog
from podium.formats import detection_table
from test_detection_scan import NAMES, _damaged, _read_both, _table, read_damaged_both_ways


def _camera_both(
    path: Path, truth: detection_table.Table | None, monkeypatch: pytest.MonkeyPatch
) -> tuple[object, object, bool]:
    """The table read by pyarrow and row by row (the compiled scan left out), and whether pyarrow gave rows."""
    return _read_both(path, truth, monkeypatch, "_read_clean")


@pytest.mark.parametrize("seed", range(300))
def test_camera_traps_pyarrow_equals_the_row_reader_on_damaged_tables(
    seed: int, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    rng = np.random.default_rng(seed)
    read_damaged_both_ways(rng, seed, _photos(rng, ascii_only=seed % 4 < 2), tmp_path, monkeypatch, "_read_clean")


def _photos(rng: np.random.Generator, ascii_only: bool) -> list[str]:
    names = [name for name in NAMES if name.isascii()] if ascii_only else NAMES
    return [str(n) for n in rng.permutation(names)[: int(rng.integers(1, len(names) + 1))]]


def test_damage_mostly_leaves_pyarrow(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The damaged tables above test something: of 60 ASCII ones with positive widths, some are still read by pyarrow, most are not."""
    taken = []
    for seed in range(60):
        rng = np.random.default_rng(seed)
        path = tmp_path / f"{seed}.tsv"
        text = _table(rng, _photos(rng, ascii_only=True)).replace("-0.0", "0.5")
        path.write_text(_damaged(rng, text, 1), encoding="utf-8")
        taken.append(_camera_both(path, None, monkeypatch)[2])
    assert 5 <= sum(taken) <= 45, sum(taken)


CAMERA_ROWS = "IMG_1.JPG\t0.5 0.5 0.25 0.25\t1\nIMG_2.JPG\t\t\nIMG_1.JPG\t2.5e-1 0.75 1E-1 .5\tTrue\nIMG_3.JPG\t0.30000000000000004 +0.5 0.9007199254740993 1.\tfalse\n"


@pytest.mark.parametrize(
    ("body", "arrow"),
    [
        (CAMERA_ROWS, True),  # exponents, signs, 17 digits, duplicate photos, an empty photo
        (CAMERA_ROWS.rstrip("\n"), True),  # no final newline
        (CAMERA_ROWS.replace("\n", "\r\n"), True),
        ("\ufeff" + CAMERA_ROWS, True),  # a BOM before the header (read_text drops it)
        (f"{'9' * 400}.jpg\t0.5 0.5 0.25 0.25\t0\n", True),  # a huge id
        (CAMERA_ROWS.replace("IMG_2.JPG", '"IMG_2.JPG"'), False),  # quoted: the csv module unquotes
        (CAMERA_ROWS.replace("\nIMG_2", "\n\nIMG_2"), False),  # an empty line: the line numbers after it
        (CAMERA_ROWS.replace("IMG_3", "ÉTÉ_3"), False),  # beyond ASCII
        (CAMERA_ROWS.replace("0.25 0.25", "0.25  0.25"), False),
        (CAMERA_ROWS.replace("\t1\n", "\ttRuE\n"), False),
        (CAMERA_ROWS.replace("IMG_2.JPG", " IMG_2.JPG ").replace("\t1\n", "\t 1\n"), True),  # spaces around fields
        (CAMERA_ROWS.replace("IMG_2.JPG\t", "IMG_2.JPG\x0b\t"), False),  # a control character str.strip drops
    ],
)
def test_camera_traps_odd_but_valid_tables_read_alike(
    body: str, arrow: bool, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "table.tsv"
    header, _, rows = body.rpartition("\ufeff")
    ending = "\r\n" if "\r" in rows else "\n"
    path.write_bytes(f"{header}Name\tBBox\tClass{ending}{rows}".encode())
    fast, slow, taken = _camera_both(path, None, monkeypatch)
    assert fast == slow and taken == arrow
    if fast is None:  # the control character breaks the line for str.splitlines: the row reader names it
        return
    ids = [row.partition("\t")[0].strip().strip('"') for row in rows.splitlines() if row]
    assert fast[-1] == list(dict.fromkeys(ids))  # type: ignore[index]


def test_camera_traps_a_table_outside_the_frame_warns_at_the_same_line(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "table.tsv"
    path.write_text("Name\tBBox\tClass\na\t\t\na\t0.5 0.5 0.2 0.2\t0\nb\t0.05 0.5 0.2 0.2\t1\n")
    fast_log = IssueLog()
    assert detection_table.read_table(path, fast_log, None) is not None
    assert [(w.code, w.line) for w in fast_log.warnings] == [("outside_frame", 4)]
    _camera_both(path, None, monkeypatch)
