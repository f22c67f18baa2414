"""The compiled reader and top-k kernel (``podium.formats._label_table``, ``podium.metrics._topk``) against their
Python definitions (``formats.label_tokens.label_tokens``, ``metrics.imagenet.label_errors``' loop): the same
files taken, the same labels and the same counts, on random clean and damaged files, every short file over a
small alphabet, hostile bytes, and NumPy arrays of every integer type; a command reading a clean file past the
plain reader's bound imports no NumPy. In CI (which has a C compiler) the extensions must be built.
"""

from __future__ import annotations

import itertools
import os
import subprocess
import sys
from array import array
from pathlib import Path

import numpy as np
import pytest

from podium.formats import label_tokens as label_tokens_module
from podium.formats.label_tokens import label_table, label_tokens
from podium.metrics import imagenet
from podium.metrics.imagenet import K, _misses, label_errors
from podium.synthetic.ilsvrc2012 import write_classification
from test_label_rows import _file
from test_label_tokens import _trailing_spaces, require_compiled


@pytest.fixture(autouse=True)
def built() -> None:
    require_compiled()


def _as_ints(tokens: list[bytes] | None) -> list[int] | None:
    return None if tokens is None else [int(t) for t in tokens]


def _compiled(data: bytes, width: int, classes: int = 1000) -> list[int] | None:
    table = label_table(data, width, classes)
    assert table is None or (isinstance(table, memoryview) and table.format == "H")
    return None if table is None else table.tolist()


@pytest.mark.parametrize("seed", range(300))
def test_the_compiled_reader_takes_what_label_tokens_takes(seed: int) -> None:
    rng = np.random.default_rng(seed)
    width = (1, 5, 2)[seed % 3]
    data = _file(rng, int(rng.integers(1, 30)), width, damaged=seed % 4 != 0)
    if seed % 5 == 0:
        data = _trailing_spaces(data)
    assert _compiled(data, width) == _as_ints(label_tokens(data, width, 1000)), data[:200]


def test_every_short_file_over_a_small_alphabet() -> None:
    """Every file of up to 6 bytes over digits, space, line feed, CR and a BOM byte: both readers agree."""
    alphabet = [b"0", b"1", b"9", b" ", b"\n", b"\r", b"\xef"]
    for length in range(7):
        for letters in itertools.product(alphabet, repeat=length):
            data = b"".join(letters)
            for width in (1, 2):
                assert _compiled(data, width, 10) == _as_ints(label_tokens(data, width, 10)), (data, width)


def test_every_label_and_its_near_misses_with_a_bom_and_without_final_line_feed() -> None:
    labels = [str(v).encode() for v in range(1, 1001)]
    body = b"\n".join(labels)
    assert _compiled(b"\xef\xbb\xbf" + body, 1) == list(range(1, 1001))
    for bad in (b"0", b"1001", b"9999", b"10000", b"01", b"0100", b"00", b"65536", b"99999999999999999999999"):
        assert _compiled(b"5\n" + bad + b"\n7\n", 1) is None, bad
    for bad in (
        b"",
        b"\xef\xbb\xbf",
        b"\n",
        b"1\n\n",
        b"1\r\n",
        b"\xef\xbb\xbf\xef\xbb\xbf1",
        b"1 \n2\n",
        b" 1\n",
        b"1\t\n",
    ):
        assert _compiled(bad, 1) is None, bad


def test_hostile_bytes_never_read_outside_the_buffer() -> None:
    """Random bytes, long runs of digits and separators, and views of a larger buffer (no final byte after them):
    the reader declines or agrees with label_tokens (the bounds-checked build runs this too)."""
    rng = np.random.default_rng(1)
    for size in (1, 2, 3, 7, 64, 4096):
        for _ in range(200):
            data = rng.choice(np.frombuffer(b"0123456789 \n\xef\xbb\xbf", np.uint8), size).tobytes()
            assert _compiled(data, 1 + size % 5) == _as_ints(label_tokens(data, 1 + size % 5, 1000)), data
    backing = b"1 2 3 4 5\n6 7 8 9 10\n99999"
    view = memoryview(backing)[:20]  # ends inside the buffer, before the digits after it
    assert label_table(view, 5, 1000) is not None and _compiled(bytes(view), 5) == list(range(1, 11))  # type: ignore[arg-type]
    assert _compiled(b"9" * 1_000_000, 1) is None and _compiled(b"1 " * 500_000, 1) is None


def test_the_reader_refuses_what_it_cannot_hold() -> None:
    with pytest.raises(ValueError, match="power of ten"):
        label_table(b"1\n", 1, 999)
    with pytest.raises(ValueError):
        label_tokens_module.compiled.labels(b"1\n", 0, 1000)  # type: ignore[union-attr]
    with pytest.raises(ValueError):
        label_tokens_module.compiled.labels(b"1\n", 1, 100_000)  # type: ignore[union-attr]
    with pytest.raises(TypeError):
        label_tokens_module.compiled.labels("1\n", 1, 1000)  # type: ignore[union-attr, arg-type]


@pytest.mark.parametrize("seed", range(40))
def test_the_kernel_counts_what_the_loop_counts(seed: int) -> None:
    rng = np.random.default_rng(seed)
    n = int(rng.integers(0, 3000))
    classes = int(rng.integers(1, 8))  # few classes: repeated guesses and hits at every rank
    truth, guesses = rng.integers(1, classes + 1, n), rng.integers(1, classes + 1, K * n)
    loop = imagenet.ErrorCounts(n, {1: _misses(truth.tolist(), guesses.tolist())} if n else {}, ())
    for dtype in (np.uint8, np.int8, np.uint16, np.int16, np.int32, np.uint32, np.int64, np.uint64):
        assert label_errors(truth.astype(dtype), guesses.astype(dtype)) == loop, dtype
    assert label_errors(array("H", truth.tolist()), array("H", guesses.tolist())) == loop
    assert imagenet.compiled.misses(array("H", truth.tolist()), array("H", guesses.tolist()), K) == (  # type: ignore[union-attr]
        loop.misses[1] if n else (0,) * K
    )


def test_the_kernel_leaves_what_it_does_not_take_to_the_loop(monkeypatch: pytest.MonkeyPatch) -> None:
    """Lists, tokens, floats, two integer formats, strided arrays: the loop's counts, from the loop."""
    truth, guesses = np.array([3, 7, 9]), np.array([3, 1, 1, 1, 1, 1, 7, 7, 1, 1, 1, 1, 1, 1, 1])
    expected = label_errors(truth.tolist(), guesses.tolist())
    assert expected.misses == {1: (2, 1, 1, 1, 1)}
    for pair in (
        ([b"3", b"7", b"9"], [str(g).encode() for g in guesses]),
        (truth.astype(np.float64), guesses.astype(np.float64)),
        (truth.astype(np.int32), guesses.astype(np.int64)),
        (np.repeat(truth, 2)[::2], guesses),
    ):
        assert label_errors(*pair) == expected
    with pytest.raises(ValueError, match="5 per image"):
        label_errors(truth, guesses[:-1])
    with pytest.raises(TypeError):
        imagenet.compiled.misses(truth.astype(np.float64), guesses.astype(np.float64), K)  # type: ignore[union-attr]
    with pytest.raises(ValueError, match="per image"):
        imagenet.compiled.misses(truth, guesses[:-1], K)  # type: ignore[union-attr]


def test_the_command_reads_a_file_past_the_plain_bound_without_numpy(tmp_path: Path) -> None:
    """200,000 images (4 MB, past the plain Python reader's 3 MiB): the compiled path, no NumPy, the same
    top-5 error as NumPy's path in this process."""
    demo = write_classification(tmp_path, 200_000, seed=4)
    submission = demo.submission / "team.txt"
    assert submission.stat().st_size > (3 << 20)
    program = (
        "import atexit, sys\n"
        "atexit.register(lambda: print('numpy' in sys.modules, file=sys.stderr))\n"
        "from podium.cli import main\n"
        "main()\n"
    )
    argv = ["evaluate", "ilsvrc2012-cls", "--truth", str(demo.truth), "--submission", str(submission)]
    run = subprocess.run(
        [sys.executable, "-c", program, *argv], capture_output=True, text=True, env={**os.environ, "COLUMNS": "80"}
    )
    assert run.returncode == 0, run.stderr
    assert run.stderr.strip() == "False"
    truth = np.loadtxt(demo.truth, dtype=np.int64)
    guesses = np.loadtxt(submission, dtype=np.int64)
    expected = 1 - (guesses == truth[:, None]).any(axis=1).mean()
    assert float(run.stdout.split("top5_error")[1].split()[1]) == pytest.approx(expected, abs=1e-6)


@pytest.mark.parametrize("k", [1, 2, 5, 7, 63, 64])
def test_the_kernel_counts_any_number_of_guesses_as_the_loop(k: int) -> None:
    """The rule's five guesses take an unrolled way, any other count the general one (up to 64: a bit per guess)."""
    rng = np.random.default_rng(k)
    n = 2000
    truth, guesses = rng.integers(1, 2 * k + 2, n), rng.integers(1, 2 * k + 2, k * n)
    expected = [0] * k
    for label, row in zip(truth.tolist(), guesses.reshape(n, k).tolist()):
        first = row.index(label) if label in row else k
        for j in range(first):
            expected[j] += 1  # missed with j + 1 guesses
    for dtype in ("H", "B", "I", "Q"):
        got = imagenet.compiled.misses(array(dtype, truth.tolist()), array(dtype, guesses.tolist()), k)  # type: ignore[union-attr]
        assert got == tuple(expected), (k, dtype)
