"""pyarrow's way into the clean tables (:mod:`podium.formats.arrow_tables`) against the row-by-row readers.

Whenever pyarrow gives rows they must be the rows the csv reader gives, bit for bit, with the same
warnings; on anything else it must step aside, and the row-by-row reader names every problem.
Odd but valid tables (quoted fields, CRLF, a BOM, no final newline, exponents, huge and duplicate
ids, empty lines) and tables damaged byte by byte are read both ways.
"""

from __future__ import annotations

import os
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


# face-clustering: the truth and a submission read by pyarrow and by the csv module row by row.

FACE_NAMES = ["face_1.jpg", "face_2.jpg", "a b.jpg", "café.jpg", "日本.jpg", "x.y.jpg", "b\xa0c.jpg", "z,1.jpg"]
FACE_DAMAGE = [",", '"', " ", "\t", "\n", "\r", "\r\n", "\n\n", "\x0b", "\xa0", "\u2028", "\ufeff", "0", "1.0", "é"]


def _face_both(
    truth_path: Path, submission_path: Path, monkeypatch: pytest.MonkeyPatch
) -> tuple[tuple[object, ...], tuple[object, ...], bool]:
    """The truth and the submission read with pyarrow allowed at any size and row by row (pyarrow
    never), each as (truth problems or names and identities, clusters, issues); and whether
    pyarrow gave the rows of every file read."""
    from podium.core.errors import TruthError
    from podium.formats import clustering_csv

    taken: list[bool] = []
    original = clustering_csv._read_clean

    def spied(data: bytes) -> object:
        rows = original(data)
        taken.append(rows is not None)
        return rows

    def read(arrow_bytes: int) -> tuple[object, ...]:
        with monkeypatch.context() as patch:
            patch.setattr(clustering_csv, "ARROW_BYTES", arrow_bytes)
            patch.setattr(clustering_csv, "_read_clean", spied)
            try:
                truth = clustering_csv.read_truth(truth_path)
            except TruthError as exc:
                return ("truth", str(exc), [(i.code, i.message, i.line) for i in exc.issues])
            log = IssueLog()
            clusters = clustering_csv.read_submission(submission_path, truth, "ignore", log)
            return (
                truth.names,
                truth.identity.tolist(),
                truth.stems,
                truth.ascending,
                clustering_csv.submission_limits(truth),
                None if clusters is None else clusters.tolist(),
                [(i.code, i.message, i.line) for i in log.errors + log.warnings],
            )

    fast = read(0)
    fast_taken = bool(taken) and all(taken)
    return fast, read(1 << 62), fast_taken


def _face_files(rng: np.random.Generator, tmp_path: Path, damage: int, odd: bool) -> tuple[Path, Path]:
    """A valid truth and submission (with ``odd``, names that need quotes or hold Unicode's spaces),
    then ``damage`` characters inserted or replaced."""
    pool = FACE_NAMES if odd else [n for n in FACE_NAMES if "," not in n and "\xa0" not in n]
    names = [str(n) for n in rng.permutation(pool)[: int(rng.integers(1, len(pool) + 1))]]
    names = [f'"{n}"' if "," in n else n for n in names]  # a comma in a name is quoted
    if rng.random() < 0.5:
        names.sort()
    identities = [f"p{rng.integers(0, 3)}" if rng.random() < 0.5 else str(rng.integers(0, 3)) for _ in names]
    pad = lambda: str(rng.choice(["", " ", "\t", "  "]))
    header = "image,identity\n" if rng.random() < 0.3 else ""
    truth = header + "".join(f"{pad()}{n}{pad()},{pad()}{i}{pad()}\n" for n, i in zip(names, identities))
    clusters = np.unique(rng.integers(0, 4, len(names)), return_inverse=True)[1] + 1
    written = [n.replace(".jpg", "") if rng.random() < 0.4 and "," not in n else n for n in names]
    order = rng.permutation(len(names)) if rng.random() < 0.3 else np.arange(len(names))
    submission = "".join(f"{written[k]}, {'0' * int(rng.integers(0, 2))}{clusters[k]}\n" for k in order)
    if rng.random() < 0.2:
        submission = submission.rstrip("\n")
    if rng.random() < 0.2:
        submission = submission.replace("\n", "\r\n")
    if rng.random() < 0.2:
        submission = "\ufeff" + submission
    for _ in range(damage):
        target = int(rng.integers(0, 2))
        text = [truth, submission][target]
        at = int(rng.integers(0, len(text) + 1))
        text = text[:at] + str(rng.choice(FACE_DAMAGE)) + text[at + int(rng.integers(0, 2)) :]
        truth, submission = (text, submission) if target == 0 else (truth, text)
    truth_path, submission_path = tmp_path / "truth.csv", tmp_path / "team.csv"
    truth_path.write_bytes(truth.encode() + (b"\xff" if damage and rng.random() < 0.05 else b""))
    submission_path.write_text(submission, encoding="utf-8")
    return truth_path, submission_path


@pytest.mark.parametrize("seed", range(300))
def test_face_clustering_pyarrow_equals_the_row_reader(
    seed: int, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Valid files (a third of the seeds) and files damaged once or twice give the same truth,
    clusters and issues (codes, messages, lines) both ways."""
    rng = np.random.default_rng(seed)
    fast, slow, _ = _face_both(*_face_files(rng, tmp_path, seed % 3, odd=seed % 4 == 3), monkeypatch)
    assert fast == slow


def test_face_clustering_damage_mostly_leaves_pyarrow(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The files above test something: the valid ones without odd names are read by pyarrow, and damage
    sends some to the row reader while pyarrow still reads others."""
    taken: dict[int, list[bool]] = {0: [], 1: []}
    for seed in range(80):
        rng = np.random.default_rng(seed)
        damage = seed % 2
        truth_path, submission_path = _face_files(rng, tmp_path, damage, odd=False)
        _, _, arrow = _face_both(truth_path, submission_path, monkeypatch)
        taken[damage].append(arrow)
    assert sum(taken[0]) == 40 and 5 <= sum(taken[1]) <= 35, (sum(taken[0]), sum(taken[1]))


FACE_TRUTH = "image,identity\nface_1.jpg,p1\nface_2.jpg,p2\nface_3.jpg,p1\nface_4.jpg,p3\n"
FACE_ROWS = "face_1, 1\nface_2, 2\nface_3, 1\nface_4, 3\n"


@pytest.mark.parametrize(
    ("truth", "submission", "arrow"),
    [
        (FACE_TRUTH, FACE_ROWS, True),
        (FACE_TRUTH.replace("\n", "\r\n"), "\ufeff" + FACE_ROWS.replace("\n", "\r\n"), True),  # CRLF, a BOM
        (FACE_TRUTH, FACE_ROWS.rstrip("\n"), True),  # no final newline
        (FACE_TRUTH.replace("face_2", "café 日本"), FACE_ROWS.replace("face_2", " café 日本\t"), True),
        (FACE_TRUTH.replace("face_2", "face_2\xa0"), FACE_ROWS.replace("face_2", "face_2\xa0"), False),  # str.strip's
        (FACE_TRUTH.replace("face_2", '"a,b"'), FACE_ROWS.replace("face_2", '"a,b"'), False),  # quoted comma
        (FACE_TRUTH, FACE_ROWS.replace("face_2,", '"face_2",'), False),
        (FACE_TRUTH, FACE_ROWS.replace("face_3, 1\n", "face_3, 1\n\n"), False),  # an empty line: numbering
        (FACE_TRUTH, FACE_ROWS.replace("face_3", "face_2"), True),  # a duplicate, named with its lines
        (FACE_TRUTH, FACE_ROWS.replace("face_4, 3\n", ""), True),  # a missing image
        (FACE_TRUTH, FACE_ROWS.replace(", 3\n", ", 3, x\n"), False),  # an extra column
        (FACE_TRUTH, FACE_ROWS.replace(", 3\n", ", 3.0\n"), True),  # not an integer
        (FACE_TRUTH, FACE_ROWS.replace(", 3\n", ", 0\n"), True),
        (FACE_TRUTH, FACE_ROWS.replace("face_4, 3\nface_3, 1\n", "face_3, 1\nface_4, 3\n"), True),
        (FACE_TRUTH.replace("p3", "p1"), FACE_ROWS.replace(", 3", ", 1"), True),
        (FACE_TRUTH.replace("face_4.jpg,p3", "face_4.jpg,"), FACE_ROWS, True),  # an empty identity
        (FACE_TRUTH.replace("face_4", "face_1"), FACE_ROWS, True),  # a repeated truth image
    ],
)
def test_face_clustering_odd_but_valid_files_read_alike(
    truth: str, submission: str, arrow: bool, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "truth.csv").write_text(truth, encoding="utf-8", newline="")
    (tmp_path / "team.csv").write_text(submission, encoding="utf-8", newline="")
    fast, slow, taken = _face_both(tmp_path / "truth.csv", tmp_path / "team.csv", monkeypatch)
    assert fast == slow and taken == arrow


def test_pyarrow_paths_never_import_pandas(tmp_path: Path) -> None:
    """pyarrow's ``to_numpy`` and ``pa.array`` import pandas where it is installed (1.2 s of CPU in a
    new process): the table readers cross to NumPy by the buffers. A stand-in pandas records any import."""
    fake = tmp_path / "fake" / "pandas"
    fake.mkdir(parents=True)
    marker = tmp_path / "imported"
    (fake / "__init__.py").write_text(f"open({str(marker)!r}, 'w').close()\nraise ImportError('stand-in')\n")
    faces = "".join(f"face_{i}.jpg,p{i % 7}\n" for i in range(50))
    (tmp_path / "truth.csv").write_text(faces)
    (tmp_path / "team.csv").write_text("".join(f"face_{i},{i % 7 + 1}\n" for i in range(50)))
    photos = "Name\tBBox\tClass\n" + "".join(f"IMG_{i}.JPG\t0.5 0.5 0.2 0.2\t{i % 2}\n" for i in range(50))
    (tmp_path / "photos.tsv").write_text(photos)
    script = f"""
import sys
import os
from pathlib import Path
from podium.core.issues import IssueLog
from podium.formats import clustering_csv, detection_table
clustering_csv.ARROW_BYTES = 0
truth = clustering_csv.read_truth(Path({str(tmp_path / "truth.csv")!r}))
assert clustering_csv.read_submission(Path({str(tmp_path / "team.csv")!r}), truth, "strict", IssueLog()) is not None
detection_table._scan_pays = lambda body: False
table = detection_table.read_table(Path({str(tmp_path / "photos.tsv")!r}), IssueLog(), None)
assert table is not None
assert detection_table.read_table(Path({str(tmp_path / "photos.tsv")!r}), IssueLog(), table) is not None
assert "pyarrow" in sys.modules
"""
    import subprocess
    import sys

    env = {**os.environ, "PYTHONPATH": str(fake.parent)}
    subprocess.run([sys.executable, "-c", script], check=True, env=env)
    assert not marker.exists(), "pyarrow imported pandas"
