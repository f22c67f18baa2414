"""The compiled passes of podium.metrics.label_scan, each against a NumPy statement of its definition."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import podium
from podium.metrics import label_scan
from podium.metrics.object_segmentation import (
    TooComplex,
    _Budget,
    _compiled_directed,
    _directed_squared,
    _Side,
    compile_kernels,
    image_stats,
)


def random_labels(rng: np.random.Generator, dtype: type, n: int, shape: tuple[int, int] = (37, 53)) -> np.ndarray:
    image = np.zeros(shape, dtype=dtype)
    top = {np.uint8: 255, np.uint16: 65535, np.int32: 2**15, np.int64: 10**6}[dtype]  # int64: beyond the lookup table
    values = rng.choice(np.arange(1, top + 1), size=n, replace=False)
    for value in values:
        y, x = rng.integers(0, shape[0]), rng.integers(0, shape[1])
        image[y : y + rng.integers(1, 15), x : x + rng.integers(1, 15)] = value
    image[rng.random(shape) < 0.02] = values[0] if n else 0  # scattered pieces of one object
    return image


def numpy_edges(codes: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """4- and 8-boundary of every object, by comparing the padded image with its 8 shifts."""
    padded = np.pad(codes, 1, constant_values=-1)
    h, w = codes.shape
    shifted = {
        (dy, dx): padded[1 + dy : 1 + dy + h, 1 + dx : 1 + dx + w] for dy in (-1, 0, 1) for dx in (-1, 0, 1) if dy or dx
    }
    edge4 = np.zeros(codes.shape, bool)
    for dy, dx in ((-1, 0), (1, 0), (0, -1), (0, 1)):
        edge4 |= shifted[dy, dx] != codes
    edge8 = edge4.copy()
    for dy, dx in ((-1, -1), (-1, 1), (1, -1), (1, 1)):
        edge8 |= shifted[dy, dx] != codes
    return edge4 & (codes > 0), edge8 & (codes > 0)


@pytest.mark.parametrize("seed", range(12))
def test_sides_match_their_numpy_definitions(seed: int) -> None:
    rng = np.random.default_rng(seed)
    dtype = [np.uint8, np.uint16, np.int32, np.int64][seed % 4]
    check_side(random_labels(rng, dtype, int(rng.integers(0, 30))))


@pytest.mark.parametrize("shape", [(1, 1), (1, 9), (2, 8), (3, 7), (4, 16), (5, 15), (6, 17), (17, 1), (3, 2)])
def test_sides_of_narrow_and_short_images(shape: tuple[int, int]) -> None:
    """Rows shorter than, equal to and just past the 8 pixels the marks are skipped by, and labels
    already numbered 0..n (only widened) or not."""
    rng = np.random.default_rng(shape[0] * 100 + shape[1])
    for top in (1, 3, 250):
        labels = rng.integers(0, top + 1, shape).astype(np.uint8)
        labels[rng.random(shape) < 0.5] = labels.flat[0]  # runs and solid parts
        check_side(labels)


def check_side(labels: np.ndarray) -> None:
    side = _Side(labels)
    values, inverse = np.unique(labels, return_inverse=True)
    expected_codes = inverse.reshape(labels.shape) + (values[0] != 0)
    assert side.codes.tolist() == expected_codes.tolist() and side.n == int(expected_codes.max())
    edge4, edge8 = numpy_edges(side.codes)
    assert ((side.flags & label_scan.ON_EDGE4) != 0).tolist() == edge4.tolist()
    assert ((side.flags & label_scan.ON_EDGE8) != 0).tolist() == edge8.tolist()
    for code in range(1, side.n + 1):
        ys, xs = np.nonzero(side.codes == code)  # raster order
        on4, on8 = edge4[ys, xs], edge8[ys, xs]
        assert [v.tolist() for v in side.boundary.of_object(code)] == [ys[on4].tolist(), xs[on4].tolist()]
        assert [v.tolist() for v in side.edge_pixels.of_object(code)] == [ys[on8].tolist(), xs[on8].tolist()]
        assert side.area[code] == ys.size
        bounds = [f(v) for v in (ys, xs, ys + xs, ys - xs) for f in (np.max, np.min)]
        assert side.octagon[code - 1].tolist() == bounds
        assert side.extremes[code - 1].tolist() == [ys.min(), ys.max(), xs.min(), xs.max()]
        grid_y, grid_x = np.mgrid[0 : labels.shape[0], 0 : labels.shape[1]]  # the octagon lies within the object's box
        inside = (grid_y <= bounds[0]) & (grid_y >= bounds[1]) & (grid_x <= bounds[2]) & (grid_x >= bounds[3])
        inside &= (
            (grid_y + grid_x <= bounds[4])
            & (grid_y + grid_x >= bounds[5])
            & (grid_y - grid_x <= bounds[6])
            & (grid_y - grid_x >= bounds[7])
        )
        assert side.octagon_area[code - 1] == np.count_nonzero(inside)


@pytest.mark.parametrize("seed", range(8))
def test_overlaps_count_every_pair_of_codes(seed: int) -> None:
    rng = np.random.default_rng(50 + seed)
    s, g = _Side(random_labels(rng, np.uint16, 25)), _Side(random_labels(rng, np.uint16, 25))
    both = (s.codes > 0) & (g.codes > 0)
    keys, counts = np.unique(s.codes[both].astype(np.int64) * (g.n + 1) + g.codes[both], return_counts=True)
    pair_s, pair_g, count = label_scan.overlaps(s.codes, g.codes, s.n, g.n)
    assert (pair_s * (g.n + 1) + pair_g).tolist() == keys.tolist() and count.tolist() == counts.tolist()


def brute_directed(own: _Side, other: _Side, a: int, b: int) -> int:
    ay, ax = np.nonzero(own.codes == a)
    by, bx = np.nonzero(other.codes == b)
    d = (ay[:, None] - by[None, :]) ** 2 + (ax[:, None] - bx[None, :]) ** 2
    return int(d.min(axis=1).max())


def test_the_early_break_is_exact_and_cuts_the_work() -> None:
    """A long bar beside a disc: in raster order every row of the bar would raise the farthest
    distance and scan the disc's whole boundary; the spread order finds it early."""
    image = np.zeros((400, 120), np.int32)
    yy, xx = np.mgrid[0:400, 0:120]
    image[(yy - 60) ** 2 + (xx - 60) ** 2 < 50**2] = 1  # the disc
    other = np.zeros_like(image)
    other[5:395, 55:62] = 1  # the bar, through the disc and far beyond it
    own, disc = _Side(other), _Side(image)
    budget = _Budget(1e12)
    got = _directed_squared(own, disc, np.array([1]), np.array([1]), budget)
    assert got.tolist() == [brute_directed(own, disc, 1, 1)]
    assert 1e12 - budget.left < 3 * own.area[1]  # near-linear: 5,103 here for 2,730 pixels; 160,383 in raster order


@pytest.mark.parametrize("seed", range(10))
def test_the_farthest_point_matches_brute_force_past_the_spread_visits(seed: int) -> None:
    """Point sets larger than the spread visits (the rest go in raster order, each tried first
    against the last search's boundary pixel), clustered or scattered, against all distances."""
    rng = np.random.default_rng(300 + seed)
    for size in (0, 1, 7, label_scan.SPREAD_VISITS, label_scan.SPREAD_VISITS + 1, 3000):
        spread = int(rng.choice([5, 40, 400]))
        y, x = (
            np.sort(rng.integers(0, spread, size)),
            rng.integers(0, spread, size),
        )  # raster-ordered, as candidates are
        by = rng.integers(0, 60, int(rng.integers(1, 300)))
        bx = rng.integers(0, 60, by.size)
        order = np.lexsort((bx, by))
        by, bx = by[order], bx[order]
        expected = (
            int(((y[:, None] - by[None, :]) ** 2 + (x[:, None] - bx[None, :]) ** 2).min(axis=1).max()) if size else 0
        )
        assert label_scan._farthest_squared(y.astype(np.int64), x.astype(np.int64), by, bx)[0] == expected


@pytest.mark.parametrize("seed", range(20))
def test_directed_distances_match_brute_force(seed: int) -> None:
    rng = np.random.default_rng(200 + seed)
    own, other = _Side(random_labels(rng, np.uint8, 6)), _Side(random_labels(rng, np.uint8, 6))
    if not own.n or not other.n:
        return
    a = np.repeat(np.arange(1, own.n + 1), other.n)
    b = np.tile(np.arange(1, other.n + 1), own.n)
    got = _directed_squared(own, other, a, b, _Budget(1e12))
    assert got.tolist() == [brute_directed(own, other, int(i), int(j)) for i, j in zip(a, b, strict=True)]


def test_the_compiled_scan_stops_when_the_budget_is_spent() -> None:
    rng = np.random.default_rng(7)
    truth = random_labels(rng, np.uint16, 40, (300, 300))
    seg = rng.integers(1, 60000, truth.shape).astype(np.uint16)  # every label scattered
    own, other = _Side(seg), _Side(truth)
    a = np.arange(1, own.n + 1)
    b = np.full(own.n, 1)
    _, full = _compiled_directed(own, other, a, b, 1e18)
    _, cut = _compiled_directed(own, other, a, b, full / 10)
    assert full / 10 < cut < full / 5  # stopped after the pair that passed the budget
    with pytest.raises(TooComplex):
        image_stats(truth, seg, 10.0, max_work=full / 10)


@pytest.mark.skipif(
    os.geteuid() != 0 or not shutil.which("unshare"),
    reason="needs root and unshare(1) to mount a read-only copy of podium",
)
def test_a_read_only_install_compiles_without_a_cache(tmp_path: Path) -> None:
    """Where neither the package folder nor a user cache can be written, the kernels still run."""
    copy = tmp_path / "site"
    shutil.copytree(Path(podium.__file__).parent, copy / "podium", ignore=shutil.ignore_patterns("__pycache__"))
    script = "import numpy as np; from podium.metrics import label_scan; print(label_scan.renumber(np.array([[0, 9]], np.uint8), 10)[1])"
    shell = (
        f'mount --bind "{copy}" "{copy}" && mount -o remount,ro,bind "{copy}" && exec "{sys.executable}" -c "{script}"'
    )
    environment = {
        "PATH": os.environ["PATH"],
        "HOME": str(copy),
        "XDG_CACHE_HOME": str(copy / "cache"),
        "PYTHONPATH": str(copy),
    }
    result = subprocess.run(
        ["unshare", "-m", "sh", "-c", shell], capture_output=True, text=True, env=environment, timeout=120
    )
    assert result.returncode == 0, result.stderr[-2000:]
    assert result.stdout.strip() == "1"
    assert not list(copy.rglob("*.nbi"))  # nothing was cached


def test_compile_kernels_covers_what_scoring_a_png_needs() -> None:
    """``make`` compiles the kernels once after installing; scoring 8- and 16-bit images then compiles nothing new."""
    compile_kernels()
    kernels = [
        getattr(label_scan, name)
        for name in ("renumber", "object_shapes", "group_edges", "directed_squared", "overlaps")
    ]
    known = [set(kernel.signatures) for kernel in kernels]
    rng = np.random.default_rng(3)
    for kind in (np.uint8, np.uint16):
        image_stats(random_labels(rng, kind, 12, (60, 80)), random_labels(rng, kind, 12, (60, 80)), 5.0)
    assert [set(kernel.signatures) - before for kernel, before in zip(kernels, known, strict=True)] == [set()] * len(
        kernels
    )
