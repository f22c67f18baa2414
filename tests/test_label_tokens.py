"""ILSVRC Task 1 read and scored without NumPy (``formats.label_tokens``, ``metrics.imagenet.label_errors``)
gives what NumPy's path gives: the same numbers, result document and messages, on random files clean and
damaged as users damage them (test_label_rows.py's: duplicates, labels out of range, blank lines, CRLF, no
final line feed, a BOM, extra or missing guesses, words, signs, tabs), with trailing spaces besides; and a
command scoring a clean file never imports NumPy. Every test runs both ways: with the compiled reader and
kernel (``podium.formats._label_table``, ``podium.metrics._topk``) and with the plain Python ones, as
podium runs where it was built without a C compiler (test_label_table.py compares the two directly).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from conftest import require
from podium.challenges import ilsvrc2012
from podium.core.errors import TruthError
from podium.formats import label_tokens as label_tokens_module
from podium.formats.label_tokens import label_tokens
from podium.metrics import imagenet
from podium.metrics.imagenet import classification_errors, label_errors
from podium.scoring.engine import evaluate
from podium.synthetic.ilsvrc2012 import write_classification
from test_label_rows import _file

SEEDS = range(60)
PLAIN_PAYS = ilsvrc2012.plain_pays
EXTENSIONS = ("podium.formats._label_table", "podium.metrics._topk")  # None in sys.modules: not importable
LABELS = {str(label).encode() for label in range(1, 1001)}


@pytest.fixture(autouse=True, params=["compiled", "python"])
def way(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> str:
    """The compiled reader and kernel, or the plain Python ones (the extensions set aside, as where podium
    was built without a C compiler); pytest has NumPy loaded, where the plain path does not pay: here it is
    taken by size alone, as in a command (SMALL_BYTES = -1 switches it off)."""
    if request.param == "compiled":
        require_compiled()
    else:
        monkeypatch.setattr(label_tokens_module, "compiled", None)
        monkeypatch.setattr(imagenet, "compiled", None)
    monkeypatch.setattr(ilsvrc2012, "plain_pays", lambda size: size <= ilsvrc2012.SMALL_BYTES)
    return str(request.param)


def require_compiled() -> None:
    """Skip where the extensions were not built (no C compiler); in CI, which has one, fail."""
    missing = [
        name
        for name, module in (("_label_table", label_tokens_module.compiled), ("_topk", imagenet.compiled))
        if module is None
    ]
    require("podium's C extensions", f"{', '.join(missing)} not built (make setup builds them)" if missing else None)


def test_a_process_with_numpy_loaded_reads_with_it_unless_compiled(way: str, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(ilsvrc2012, "plain_pays", PLAIN_PAYS)
    # this process has NumPy: its readers beat the Python ones, the import paid; the compiled ones beat both
    assert ilsvrc2012.plain_pays(1000) == (way == "compiled") and ilsvrc2012.plain_pays(100 << 20) == (
        way == "compiled"
    )


def _trailing_spaces(data: bytes) -> bytes:
    """Every line with a space before its line feed, as the 2012 kit's demo submission writes it."""
    return data.replace(b"\n", b" \n") if data.endswith(b"\n") else data.replace(b"\n", b" \n") + b" "


def _canonical(data: bytes, width: int) -> list[bytes] | None:
    """The clean shape restated line by line: its labels, when every line holds ``width`` labels of
    1..1000 written without leading zeros, one space apart, with one space after them on every line or none."""
    lines = data.removeprefix(b"\xef\xbb\xbf").split(b"\n")
    if lines[-1] == b"":
        lines.pop()  # the final line feed
    trailing = {line.endswith(b" ") for line in lines}
    if not lines or len(trailing) != 1:
        return None
    rows = [(line[:-1] if trailing == {True} else line).split(b" ") for line in lines]
    tokens = [token for row in rows for token in row]
    return tokens if all(len(row) == width for row in rows) and set(tokens) <= LABELS else None


@pytest.mark.parametrize("seed", SEEDS)
@pytest.mark.parametrize("width", [1, 5])
def test_label_tokens_are_the_canonical_rows_or_decline(seed: int, width: int) -> None:
    rng = np.random.default_rng(seed)
    data = _file(rng, int(rng.integers(1, 40)), width, damaged=seed % 4 != 0)
    if seed % 3 == 0:
        data = _trailing_spaces(data)
    assert label_tokens(data, width, 1000) == _canonical(data, width), data[:200]
    if seed % 4 == 0:  # clean
        assert label_tokens(data, width, 1000) is not None, "a clean file is read as tokens"


def test_label_tokens_every_label_and_its_near_misses() -> None:
    """1..1000 as written are taken; 0, 1001, 9999, 10000 and leading zeros decline; so do misaligned lines."""
    labels = [str(v).encode() for v in range(1, 1001)]
    assert label_tokens(b"\n".join(labels), 1, 1000) == labels
    for bad in (b"0", b"1001", b"9999", b"10000", b"01", b"0100", b"00", b"1000 1 2 3 4"):
        assert label_tokens(b"5\n" + bad + b"\n7\n", 1, 1000) is None, bad
    assert label_tokens(b"1 2 3\n 4 \n", 2, 1000) is None  # three labels, then one: not two lines of two


def _document(truth: Path, submission: Path, scores_only: bool) -> object:
    """The result document (but the time it was made), or the truth's error."""
    try:
        document = json.loads(evaluate("ilsvrc2012-cls", truth, submission, scores_only=scores_only).to_json())
    except TruthError as exc:
        return str(exc), exc.issues
    del document["signature"]["created"]
    return document


@pytest.mark.parametrize("seed", SEEDS)
def test_evaluate_without_numpy_is_numpys_path(seed: int, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The same result document (scores, problems, signature; with its unit table, and as a table's run
    computes it), whichever path reads the files; the plain path is taken for every clean file."""
    rng = np.random.default_rng(seed)
    n = int(rng.integers(1, 60))
    truth, submission = tmp_path / "truth.txt", tmp_path / "submission.txt"
    truth.write_bytes(_file(rng, n, 1, damaged=seed % 5 == 4))
    data = _file(rng, n, 5, damaged=seed % 2 == 1)
    submission.write_bytes(_trailing_spaces(data) if seed % 3 == 0 else data)
    taken = []
    monkeypatch.setattr(ilsvrc2012.Labels, "arrays", _spy(ilsvrc2012.Labels.arrays, taken))
    for scores_only in (True, False):
        plain = _document(truth, submission, scores_only)
        with monkeypatch.context() as patch:
            patch.setattr(ilsvrc2012, "SMALL_BYTES", -1)
            assert plain == _document(truth, submission, scores_only)
    labels, guesses = _canonical(truth.read_bytes(), 1), _canonical(submission.read_bytes(), 5)
    assert bool(taken) == (
        labels is not None and guesses is not None and len(guesses) == 5 * len(labels)
    )  # the unit table is NumPy's, from the plain path's item


def _spy(method: object, calls: list[object]) -> object:
    def spied(self: ilsvrc2012.Labels) -> ilsvrc2012.Item:
        calls.append(self.key)
        return method(self)  # type: ignore[operator]

    return spied


def test_label_errors_are_classification_errors_with_duplicate_guesses() -> None:
    rng = np.random.default_rng(7)
    truth = rng.integers(1, 6, 2000)
    guesses = rng.integers(1, 6, (2000, 5))  # few classes: many repeated guesses and hits at every rank
    plain = label_errors(truth.tolist(), guesses.ravel().tolist())
    arrays = classification_errors(truth[:, None], guesses[:, :, None].astype(np.float64), per_image=False)
    assert plain == arrays and plain.images == 2000
    assert [plain.error(k) for k in range(1, 6)] == [arrays.error(k) for k in range(1, 6)]
    with pytest.raises(ValueError, match="5 per image"):
        label_errors([1, 2], [1, 2, 3])


def test_the_command_scores_a_small_file_without_importing_numpy(way: str, tmp_path: Path) -> None:
    """podium evaluate in a new process, 5,000 images: the table, and NumPy never imported (it was before)."""
    demo = write_classification(tmp_path, 5000, seed=3)
    program = (
        ("" if way == "compiled" else "import sys; sys.modules.update(dict.fromkeys(" + repr(EXTENSIONS) + "))\n")
        + "import atexit, sys\n"
        "atexit.register(lambda: print('numpy' in sys.modules, file=sys.stderr))\n"
        "from podium.cli import main\n"
        "main()\n"
    )
    argv = ["evaluate", "ilsvrc2012-cls", "--truth", str(demo.truth), "--submission", str(demo.submission)]
    env = {**os.environ, "COLUMNS": "80"}
    run = subprocess.run([sys.executable, "-c", program, *argv], capture_output=True, text=True, env=env)
    assert run.returncode == 0, run.stderr
    assert run.stderr.strip() == "False" and "top5_error" in run.stdout
    document = subprocess.run(
        [sys.executable, "-m", "podium", *argv, "--json", "-"], capture_output=True, text=True, env=env
    )
    assert json.loads(document.stdout)["scores"]["top5_error"] == pytest.approx(
        float(run.stdout.split("top5_error")[1].split()[1]), abs=1e-6
    )


def test_a_truth_past_the_bound_is_read_by_numpy(way: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The plain Python reader keeps to SMALL_BYTES for the truth too (an organizer's file may be far larger):
    past it, NumPy's path reads both files, with the same result; the compiled reader reads it still (its
    bound is an organizer's file's, formats.text.TRUSTED)."""
    demo = write_classification(tmp_path, 400, seed=5)
    taken: list[object] = []
    monkeypatch.setattr(ilsvrc2012.Labels, "arrays", _spy(ilsvrc2012.Labels.arrays, taken))
    plain = _document(demo.truth, demo.submission, scores_only=False)
    assert taken
    monkeypatch.setattr(ilsvrc2012, "plain_pays", lambda size: True)  # the submission would be read plain
    monkeypatch.setattr(ilsvrc2012, "SMALL_BYTES", demo.truth.stat().st_size - 1)
    assert _document(demo.truth, demo.submission, scores_only=False) == plain
    assert len(taken) == (2 if way == "compiled" else 1)


@pytest.mark.parametrize("scores_only", [True, False])
def test_a_contests_splits_are_numpys(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, scores_only: bool) -> None:
    """A contest's public and private parts: the plain path's item is divided as NumPy's (its arrays), the same document."""
    demo = write_classification(tmp_path, 300, seed=11)
    split_of = {ilsvrc2012.image_name(n): ("public" if n % 3 else "private") for n in range(1, 301)}

    def document() -> object:
        result = evaluate("ilsvrc2012-cls", demo.truth, demo.submission, scores_only=scores_only, split_of=split_of)
        data = json.loads(result.to_json())
        del data["signature"]["created"]
        return data

    taken: list[object] = []
    monkeypatch.setattr(ilsvrc2012.Labels, "arrays", _spy(ilsvrc2012.Labels.arrays, taken))
    plain = document()
    assert taken and set(plain["splits"]) == {"public", "private"}
    monkeypatch.setattr(ilsvrc2012, "SMALL_BYTES", -1)
    assert document() == plain
