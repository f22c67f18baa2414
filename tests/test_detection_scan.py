"""The compiled scan of camera-trap tables (:mod:`podium.formats.detection_scan`) against the row-by-row reader.

Whenever the scan gives rows, they must be the rows the csv reader gives, bit for bit; on anything
else it must step aside. Random tables are damaged byte by byte to look for a difference.
"""

from __future__ import annotations

import pickle
from pathlib import Path

import numpy as np
import pytest

from podium.core.issues import IssueLog
from podium.formats import detection_table
from podium.formats.detection_scan import scan_rows
from podium.formats.text import TextSpans

NAMES = ["IMG_0001.JPG", "IMG_0002.JPG", "cam 3/IMG 7.jpg", "café_04.jpg", "ab", "a", "b\xa0c.png", "日本_9.jpg"]
CLASSES = ["0", "1", "True", "false", "FALSE", "TRUE", "False", "true"]
DAMAGE = [
    "\t",
    " ",
    "\r",
    "\n",
    "\r\n",
    "\x0b",
    "\x0c",
    "\x1c",
    "\x1f",
    "\x85",
    "\u2028",
    "\u3000",
    "\xa0",
    '"',
    "'",
    ".",
    "e",
    "E",
    "-",
    "+",
    "0",
    "9",
    "x",
    "é",
    ",",
    ";",
    "[",
    "nan",
    "inf",
    "1e400",
    "True",
    "2",
    "\ufeff",
]


def _number(rng: np.random.Generator) -> str:
    """A coordinate in one of the ways a participant may write it, some at the scan's limits."""
    value = float(rng.uniform(0.05, 0.95))
    forms = [
        f"{value:.4f}",
        f"{value:.{int(rng.integers(0, 23))}f}",
        repr(value),
        f"{value:.6e}",
        f"{value:.3E}",
        f"+{value:.2f}",
        f"{value:.3f}".lstrip("0"),
        "1." if value > 0.5 else "0.",
        "0." + "0" * int(rng.integers(14, 26)) + "1",
        f"0.{int(rng.integers(1, 10))}{'9' * int(rng.integers(13, 20))}",
        "0.9007199254740991",
        "0.9007199254740992",
        "-0.0",
    ]
    return str(rng.choice(forms))


def _table(rng: np.random.Generator, photos: list[str]) -> str:
    rows = []
    for name in photos:
        for _ in range(int(rng.integers(0, 4))):
            rows.append(f"{name}\t{' '.join(_number(rng) for _ in range(4))}\t{rng.choice(CLASSES)}")
        if rng.random() < 0.2:
            rows.append(f"{' ' * int(rng.integers(0, 2))}{name}{' ' * int(rng.integers(0, 2))}\t\t")
    order = rng.permutation(len(rows)) if rng.random() < 0.3 else range(len(rows))
    ending = "\r\n" if rng.random() < 0.2 else "\n"
    return ending.join(["Name\tBBox\tClass", *(rows[i] for i in order)]) + ("" if rng.random() < 0.2 else ending)


def _damaged(rng: np.random.Generator, text: str, times: int) -> str:
    for _ in range(times):
        at = int(rng.integers(min(len("Name\tBBox\tClass\n"), len(text)), len(text) + 1))
        piece = str(rng.choice(DAMAGE))
        text = text[:at] + piece + text[at + int(rng.integers(0, 2)) :]  # an insertion, or a replacement
    return text


def _read_both(
    path: Path, truth: detection_table.Table | None, monkeypatch: pytest.MonkeyPatch, way: str = "_scanned"
) -> tuple[object, object, bool]:
    """The table read the fast ``way`` (the compiled scan, or pyarrow: ``_read_clean``) and row by row,
    and whether that way gave rows."""
    taken: list[object] = []
    original = getattr(detection_table, way)

    def spied(*args: object) -> object:
        taken.append(original(*args))
        return taken[-1]

    fast_log, slow_log = IssueLog(), IssueLog()
    with monkeypatch.context() as patch:
        patch.setattr(detection_table, way, spied)
        patch.setattr(detection_table, "_scan_pays", lambda body: way == "_scanned")
        fast = detection_table.read_table(path, fast_log, truth)
    with monkeypatch.context() as patch:
        patch.setattr(detection_table, "_scanned", lambda *args: None)
        patch.setattr(detection_table, "_read_clean", lambda *args: None)
        slow = detection_table.read_table(path, slow_log, truth)
    assert (fast_log.errors, fast_log.warnings) == (slow_log.errors, slow_log.warnings)
    return _contents(fast), _contents(slow), bool(taken and taken[0] is not None)


def _contents(table: detection_table.Table | None) -> object:
    if table is None:
        return None
    boxes = table.boxes
    assert table.names.tolist() == table.photos
    return (
        boxes.photo.tolist(),
        boxes.xywh.view(np.int64).tolist(),
        boxes.cls.tolist(),
        list(boxes.texts),
        table.photos,
    )  # floats bit for bit


@pytest.mark.parametrize("seed", range(600))
def test_scan_equals_the_row_reader_on_damaged_tables(
    seed: int, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    rng = np.random.default_rng(seed)
    photos = [str(n) for n in rng.permutation(NAMES)[: int(rng.integers(1, len(NAMES) + 1))]]
    scanned = read_damaged_both_ways(rng, seed, photos, tmp_path, monkeypatch, "_scanned")
    if seed % 3 == 0:
        assert scanned, "an undamaged table must take the scan"


def read_damaged_both_ways(
    rng: np.random.Generator, seed: int, photos: list[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch, way: str
) -> bool:
    """A random table of ``photos``, damaged for two seeds in three, read both ways (they must agree),
    as the truth for odd seeds; whether the fast ``way`` gave rows."""
    text = _table(rng, photos)
    if seed % 3:
        text = _damaged(rng, text, 1 if seed % 3 == 1 else 3)
    path = tmp_path / "table.tsv"
    path.write_text(text, encoding="utf-8")
    truth = None if seed % 2 else detection_table.Table.of(detection_table._no_boxes(), [*photos, "IMG_9999.JPG"])
    fast, slow, taken = _read_both(path, truth, monkeypatch, way)
    assert fast == slow
    return taken


def test_damage_mostly_leaves_the_scan(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The damaged tables above test something: of 60, some are still read by the scan, most are not."""
    taken = []
    for seed in range(60):
        rng = np.random.default_rng(seed)
        path = tmp_path / f"{seed}.tsv"
        path.write_text(_damaged(rng, _table(rng, NAMES), 1), encoding="utf-8")
        taken.append(_read_both(path, None, monkeypatch)[2])
    assert 5 <= sum(taken) <= 45, sum(taken)


def test_decimals_at_the_limits_are_read_as_float_reads_them() -> None:
    """Mantissas of 2^53 and 2^53 + 1, 18 and 19 digits (an int64 holds 18), exponents, signs; one per row,
    since a row with one decimal the scan does not divide is read again whole."""
    tokens = [
        "9007199254740992",
        "9007199254740993",
        "900719925474099.2",
        "900719925474099.3",
        "0.9007199254740993",
        "0.9007199254740992",
        "123456789012345678",
        "999999999999999999",
        "9999999999999999999",
        "0.000000000000000007",
        "0.0000000000000000007",
        "1e-3",
        "2.5E+1",
        "5e0",
        ".5",
        "5.",
        "-0.0",
        "+0.25",
        "0.1",
        "0.30000000000000004",
        "00000000000000000000.5",
        "1" * 40,
    ]
    rows = [f"{token} 0.5 0.5 0.5" for token in tokens]
    body = "".join(f"p\t{row}\t1\n" for row in rows).encode()
    scanned = scan_rows(body, None)
    assert scanned is not None
    expected = np.array([[float(t) for t in row.split()] for row in rows])
    assert scanned.xywh.view(np.int64).tolist() == expected.view(np.int64).tolist()
    assert list(scanned.texts) == rows and scanned.lines.tolist() == list(range(1, len(rows) + 1))


@pytest.mark.parametrize(
    "body",
    [
        '"a"\t0.5 0.5 0.5 0.5\t1\n',
        'a"\t0.5 0.5 0.5 0.5\t1\n',
        "a\t\t1\n",
        "a\t\t\t\n",
        "a\t0.5 0.5 0.5 0.5\t1\tx\n",
        "a\r\t\t\n",
        "a\rb\t\t\n",
        "a\t0.5 0.5 0.5 0.5\t1\r",
        "a\t0.5 0.5 0.5 0.5\t1\r\n\r\n",
        "\t\t\n",
        "a\t0.5 0.5 0.5\t1\n",
        "a\t0.5 0.5 0.5 0.5 0.5\t1\n",
        "a\t0.5 0.5 0.5 0.5\t 1\n",
        "a\t0.5 0.5 0.5 0.5\ttRuE\n",
        "a\t0.5 0.5 0.5 1.5\t1\n",
        "a\t0.5 0.5 0.5 0\t1\n",
        "a\t0.5 0.5 0.5 0.5\t1\nb\x0bc\t\t\n",
        "a\t0.5 0.5 0.5 0.5\t2\n",
        "a\t0.5,0.5,0.5,0.5\t1\n",
        "a\t\t\nb\t\t\n\nc\t\t\n",
        "a\t\t\n  \n",
        "a\t0.5 0.5 0.5 0.5\t1\t\n",
        " a \t\t\n",
    ],
)
def test_edge_rows_read_alike(body: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Rows at the edge of clean: quotes, empty and extra columns, lone carriage returns, spaces, odd classes."""
    path = tmp_path / "table.tsv"
    path.write_bytes(f"Name\tBBox\tClass\n{body}".encode())
    fast, slow, _ = _read_both(path, None, monkeypatch)
    assert fast == slow


@pytest.mark.parametrize(
    "bad", ["1.2.3", "-", ".", "e5", "1e", "1e+", "0x10", "1_0", "١", "nan", " 0.5", "0.5 ", "0.5  0.5"]
)
def test_what_is_not_a_plain_box_leaves_the_scan(bad: str) -> None:
    assert scan_rows(f"p\t{bad} 0.5 0.5 0.5\t1\n".encode(), None) is None
    assert scan_rows(b"p\t0.5 0.5 0.5 0.5\t1\n", None) is not None


def test_the_scan_knows_the_class_spellings_of_the_str_path() -> None:
    from podium.formats import detection_scan

    spelled = {c.decode(): int(v) for c, v in zip(detection_scan._CLASSES, detection_scan._CLASS_VALUE)}
    assert spelled == detection_table.CLASS_VALUES


def test_names_are_numbered_as_a_dictionary_numbers_them() -> None:
    """3,000 names, read as the truth (first appearance) and looked up as a submission (known names)."""
    rng = np.random.default_rng(7)
    names = [f"site{int(k) % 13}/IMG_{int(k):05d}.JPG" for k in rng.choice(100_000, 3000, replace=False)]
    order = rng.integers(0, len(names), 9000)
    body = "".join(f"{names[k]}\t0.5 0.5 0.25 0.25\t0\n" for k in order).encode()
    truth = scan_rows(body, None)
    assert truth is not None
    first_seen = list(dict.fromkeys(names[k] for k in order))
    assert (
        truth.photos is not None
        and truth.photos.tolist() == first_seen
        and truth.photo.tolist() == [first_seen.index(names[k]) for k in order]
    )
    submission = scan_rows(body, TextSpans.of(names))
    assert submission is not None and submission.photo.tolist() == order.tolist() and submission.photos is None
    assert scan_rows(b"IMG_unknown.JPG\t\t\n", TextSpans.of(names)) is None


def test_text_spans_take_and_pickle() -> None:
    rng = np.random.default_rng(3)
    strings = [
        " ".join(_number(rng) for _ in range(int(rng.integers(0, 5)))) + "é" * int(rng.integers(0, 2))
        for _ in range(200)
    ]
    spans = TextSpans.of(strings)
    rows = rng.integers(0, len(strings), 150)
    part = spans.take(rows)
    assert list(part) == [strings[k] for k in rows] and len(part.data) == sum(len(strings[k].encode()) for k in rows)
    assert list(pickle.loads(pickle.dumps(part))) == list(part) and list(spans[10:20:3]) == strings[10:20:3]
    assert list(spans.take(np.zeros(0, np.int64))) == [] == spans.take(np.zeros(0, np.int64)).tolist()
    assert (
        spans.tolist() == strings
        and part.tolist() == list(part)
        and TextSpans.of(["", "", "é"]).tolist() == ["", "", "é"]
    )


def test_the_spaces_beyond_ascii_are_those_str_strip_drops() -> None:
    from podium.formats.detection_scan import UNICODE_SPACES

    assert "".join(c for c in map(chr, range(128, 0x110000)) if c.isspace()) == UNICODE_SPACES
    for space in UNICODE_SPACES:
        for name in (f"{space}p", f"p{space}"):
            assert scan_rows(f"{name}\t\t\n".encode(), None) is None
        line_break = len(f"p{space}q".splitlines()) > 1
        assert (scan_rows(f"p{space}q\t\t\n".encode(), None) is None) == line_break


def test_the_scan_waits_for_numba_or_a_large_table(tmp_path: Path) -> None:
    """In a new process no kernel has run: a small table is read without importing Numba; once a
    kernel has run, the scan reads any table."""
    import subprocess
    import sys

    (tmp_path / "t.tsv").write_text("Name\tBBox\tClass\na\t0.5 0.5 0.25 0.25\t1\n")
    code = f"""
import sys
from pathlib import Path
import podium.challenges
from podium.formats import detection_table
from podium.core.issues import IssueLog
from podium.accel.jit import kernels_loaded
assert detection_table.read_table(Path({str(tmp_path / "t.tsv")!r}), IssueLog(), None).photos == ["a"]
assert "numba" not in sys.modules and not kernels_loaded() and not detection_table._scan_pays("x" * 1000)
assert detection_table._scan_pays("x" * detection_table.SCAN_COLD_CHARACTERS)
assert detection_table._scanned("a\\t\\t\\n", None) is not None
assert kernels_loaded() and detection_table._scan_pays("x")
"""
    subprocess.run([sys.executable, "-c", code], check=True)
