"""The compiled float decisions of the camera-trap matching (:mod:`podium.metrics.detection_matching`)
against the NumPy ones (:func:`podium.metrics.detection_points.numpy_float_decisions`): the same
candidates in the same order, the same IoUs bit for bit, the same photos left to exact arithmetic
and the same matches."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from podium.metrics.detection_boxes import Boxes, FloatDecisions
from podium.metrics.detection_matching import SORTED_BY_INSERTION, float_decisions
from podium.metrics.detection_points import greedy_matching, numpy_float_decisions


def random_boxes(rng: np.random.Generator, n_photos: int, rows: int, crowd: int = 0) -> Boxes:
    """Rows in random file order: grid boxes (IoUs of exactly 1/2 and exact ties), free boxes, tiny
    boxes (error bounds near one half), and ``crowd`` near-copies of one box in photo 0 (a
    prediction with more candidates than insertion ranks)."""
    kind = rng.integers(0, 3, rows)
    w, h = rng.integers(1, 9, (2, rows)) / 20
    xc, yc = w / 2 + rng.integers(0, 12, rows) / 20, h / 2 + rng.integers(0, 12, rows) / 20
    free = kind == 1
    w[free], h[free] = rng.uniform(0.05, 0.5, (2, int(free.sum())))
    xc[free], yc[free] = (
        w[free] / 2 + rng.uniform(0, 0.45, int(free.sum())),
        h[free] / 2 + rng.uniform(0, 0.45, int(free.sum())),
    )
    tiny = kind == 2
    xc[tiny], yc[tiny], w[tiny], h[tiny] = 0.3 + xc[tiny] * 1e-9, 0.3 + yc[tiny] * 1e-9, w[tiny] * 1e-9, h[tiny] * 1e-9
    photo = rng.integers(0, n_photos, rows)
    table = np.column_stack([photo, xc, yc, w, h, rng.integers(0, 2, rows)])
    if crowd:
        near_copies = np.tile([0, 0.5, 0.5, 0.3, 0.3, 1], (crowd, 1))
        near_copies[:, 1] += rng.choice([0, 1e-3, 2e-3], crowd)  # some IoUs equal, some not
        table = np.vstack([table, near_copies])
    return Boxes.from_rows(table[rng.permutation(len(table))])


def jittered(rng: np.random.Generator, rows: np.ndarray, copies: int) -> Boxes:
    """The boxes ``rows`` (photo, xc, yc, w, h, class) and ``copies`` jittered copies of each, in random
    order: predictions competing for a truth box with distinct IoUs."""
    copied = rows.repeat(copies, axis=0)
    copied[:, 1:3] += rng.uniform(-0.03, 0.03, (len(copied), 2))
    copied[:, 3:5] *= rng.uniform(0.85, 1.15, (len(copied), 2))
    both = np.vstack([rows, copied])
    return Boxes.from_rows(both[rng.permutation(len(both))])


def random_case(seed: int) -> tuple[Boxes, Boxes]:
    """(predictions, truth): a quarter of the seeds with crowds; the odd seeds' predictions are the
    truth's class-0 boxes with two jittered copies of each (contested photos that floats decide)."""
    rng = np.random.default_rng(seed)
    n_photos = int(rng.integers(1, 30))
    crowd = 3 * SORTED_BY_INSERTION if seed % 4 == 0 else 0
    truth = random_boxes(rng, n_photos, int(rng.integers(0, 80)), crowd)
    pred = random_boxes(
        rng, n_photos + int(rng.integers(0, 3)), int(rng.integers(0, 100)), crowd // 2
    )  # photos without truth too
    if seed % 2:
        pred = jittered(rng, np.column_stack([truth.photo, truth.xywh, truth.cls])[truth.cls == 0], 2)
    return pred, truth


def same(a: FloatDecisions, b: FloatDecisions) -> None:
    for field in ("truth_of", "p_c", "t_c", "exact_photos", "contested"):
        assert getattr(a, field).tolist() == getattr(b, field).tolist(), field
    assert a.iou_c.view(np.int64).tolist() == b.iou_c.view(np.int64).tolist()  # bit for bit


@pytest.mark.parametrize("seed", range(200))
def test_compiled_decisions_equal_numpy_ones(seed: int) -> None:
    pred, truth = random_case(seed)
    same(float_decisions(pred, truth), numpy_float_decisions(pred, truth))


def test_the_random_cases_reach_every_branch() -> None:
    """The cases above are not all easy: many photos are left to exact arithmetic, contested yet
    decided by floats (the rules' loop), or crowded (ranked by the merge sort)."""
    exact = looped = crowded = 0
    for seed in range(200):
        decided = numpy_float_decisions(*random_case(seed))
        exact += decided.exact_photos.size
        looped += np.setdiff1d(decided.contested, decided.exact_photos).size
        crowded += int(np.bincount(decided.p_c).max(initial=0) > SORTED_BY_INSERTION)
    assert exact > 500 and looped > 100 and crowded > 20, (exact, looped, crowded)


def test_a_crowd_not_tied_is_ranked_without_exact_arithmetic() -> None:
    """More candidates than insertion ranks, IoUs far apart: the merge sort's order decides the match."""
    truth = Boxes.from_rows(
        [(0, 0.5 + 0.002 * k, 0.5, 0.3, 0.3, 0) for k in range(3 * SORTED_BY_INSERTION)][::-1]
    )  # best last in the file
    pred = Boxes.from_rows([(0, 0.5, 0.5, 0.3, 0.3, 0), (0, 0.5, 0.5, 0.3, 0.3, 1)])
    for decide in (float_decisions, numpy_float_decisions):
        decided = decide(pred, truth)
        assert decided.exact_photos.size == 0 and decided.truth_of.tolist() == [
            len(truth.photo) - 1,
            len(truth.photo) - 2,
        ]
    assert greedy_matching(pred, truth).truth_of.tolist() == [len(truth.photo) - 1, len(truth.photo) - 2]


def test_empty_sides() -> None:
    none = Boxes.from_rows([])
    some = Boxes.from_rows([(2, 0.5, 0.5, 0.2, 0.2, 1)])
    for pred, truth in ((none, none), (none, some), (some, none)):
        same(float_decisions(pred, truth), numpy_float_decisions(pred, truth))


def test_a_new_process_matches_without_numba_until_the_pairs_are_many() -> None:
    """No kernel has run in a new process: a matching of few pairs imports no Numba; from
    ``COLD_PAIRS`` pairs on, the compiled pass runs (and holds only the candidates); once a kernel
    has run, it runs on any matching."""
    import subprocess
    import sys

    code = """
import sys
import numpy as np
from podium.accel.jit import kernels_loaded
from podium.metrics import detection_points
from podium.metrics.detection_points import greedy_matching
from podium.metrics.detection_boxes import Boxes
one = Boxes.from_rows([(0, 0.5, 0.5, 0.2, 0.2, 1)])
assert greedy_matching(one, one).truth_of.tolist() == [0]
assert "numba" not in sys.modules and not kernels_loaded()
side = int(np.sqrt(detection_points.COLD_PAIRS)) + 1  # predictions and truth boxes in one photo: side**2 pairs
crowd = Boxes.from_rows(np.column_stack([np.zeros(side), np.linspace(0.2, 0.8, side), np.full((side, 3), [0.5, 0.01, 0.2]), np.zeros(side)]))
assert detection_points._compiled_pays(crowd, crowd) and not detection_points._compiled_pays(one, crowd)
assert greedy_matching(crowd, crowd).truth_of.tolist() == list(range(side))
assert kernels_loaded() and detection_points._compiled_pays(one, one)
"""
    subprocess.run([sys.executable, "-c", code], check=True, timeout=120)


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="the peak is read from /proc")
def test_a_submission_piled_into_a_crowded_photo_stays_bounded(tmp_path: Path) -> None:
    """The hostile input the fuzz test cannot make, as it changes one side of the demo at a time: a
    truth with 60 boxes in one photo, and a submission within its limits piling 72,000 rows into it.
    That is 4.4 million pairs, past ``COLD_PAIRS``: the compiled pass keeps only the candidates
    (181 MB at the peak in a new process), where the NumPy passes held every pair (657 MB). The peak
    is the process's own (``VmHWM``): ``ru_maxrss`` would start at this test process's size, which
    ``execve`` keeps."""
    grid = [f"{0.05 + 0.09 * (k % 10):.2f} {0.1 + 0.15 * (k // 10):.2f} 0.08 0.12" for k in range(60)]
    header = "Name\tBBox\tClass\n"
    truth, submission, result = tmp_path / "truth.tsv", tmp_path / "sub.tsv", tmp_path / "result.json"
    truth.write_text(
        header
        + "".join(f"p0\t{box}\t1\n" for box in grid)
        + "".join(f"p{i}\t0.5 0.5 0.2 0.2\t0\n" for i in range(1, 4000))
    )
    submission.write_text(header + "".join(f"p0\t{grid[k % 60]}\t1\n" for k in range(72_000)))
    code = f"""
from pathlib import Path
from podium.cli import cli
try:
    cli.main(["evaluate", "camera-traps", "--truth", {str(truth)!r}, "--submission", {str(submission)!r}, "--json", {str(result)!r}, "--quiet"])
except SystemExit as exc:
    assert exc.code == 0, exc.code
print(next(line.split()[1] for line in Path("/proc/self/status").read_text().splitlines() if line.startswith("VmHWM:")))
"""
    peak_mb = (
        int(
            subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=120).stdout
        )
        // 1024
    )  # kB
    assert (
        json.loads(result.read_text())["scores"]["points"] == 60 * 6 - (72_000 - 60) - 3999
    )  # 60 matched; the rest false; p1..p3999 missed
    assert peak_mb < 400, f"peak {peak_mb} MB"


@pytest.mark.parametrize("seed", range(24))
def test_greedy_rounds_take_what_the_rules_loop_takes(seed: int) -> None:
    """All photos at once, a round per prediction rank, against the rules' loop photo by photo:
    the same truth box for every prediction, on random candidate lists (shared truths, predictions
    without candidates, photos of one prediction and of many)."""
    from podium.metrics.detection_points import _greedy, _greedy_rounds

    rng = np.random.default_rng(seed)
    preds, truths, photos = [], [], []
    n_pred = n_truth = 0
    for photo in range(int(rng.integers(1, 40))):
        photo_truths = np.arange(n_truth, n_truth + int(rng.integers(1, 6)))
        n_truth += photo_truths.size
        for _ in range(int(rng.integers(1, 8))):
            candidates = rng.permutation(photo_truths)[: int(rng.integers(0, photo_truths.size + 1))]
            preds += [n_pred] * candidates.size
            truths += candidates.tolist()
            photos += [photo] * candidates.size
            n_pred += 1
    expected = np.full(n_pred, -1, dtype=np.int64)
    for photo in sorted(set(photos)):
        rows = [k for k, p in enumerate(photos) if p == photo]
        _greedy([preds[k] for k in rows], [truths[k] for k in rows], expected)
    got = np.full(n_pred, -1, dtype=np.int64)
    _greedy_rounds(np.array(preds, np.int64), np.array(truths, np.int64), np.array(photos, np.int64), got, n_truth)
    assert got.tolist() == expected.tolist()
