"""Object-level F1 / Dice / Hausdorff against a brute-force reference and the official fixture values."""

from __future__ import annotations

import math
from collections import Counter

import numpy as np
import pytest
from PIL import Image

from podium.metrics.object_segmentation import ObjectStats, hausdorff, image_stats

# The organizers' MATLAB code (v6) on shared/data/glas-fixture, per image: TP, FP, FN, F1, Dice, Hausdorff.
OFFICIAL = {
    1: (5, 0, 4, 0.714286, 0.770419, 195.047306),
    2: (2, 0, 0, 1.0, 0.894988, 70.610610),
    3: (3, 0, 0, 1.0, 0.985365, 10.798029),
    4: (5, 0, 0, 1.0, 0.967008, 8.756059),
}


def brute_hausdorff(a: np.ndarray, b: np.ndarray) -> float:
    pa, pb = np.argwhere(a).astype(float), np.argwhere(b).astype(float)
    d = np.sqrt(((pa[:, None, :] - pb[None, :, :]) ** 2).sum(axis=2))
    return float(max(d.min(axis=1).max(), d.min(axis=0).max()))


def reference(truth: np.ndarray, seg: np.ndarray, empty_h: float):
    """Straight from the MATLAB code: mode() for partners, all pixel pairs for Hausdorff."""
    s_labels = sorted(set(np.unique(seg).tolist()) - {0})
    g_labels = sorted(set(np.unique(truth).tolist()) - {0})

    def partner(obj_mask, other):
        hits = Counter(other[obj_mask].tolist())
        hits.pop(0, None)
        if not hits:
            return None
        best = max(hits.values())
        return min(k for k, v in hits.items() if v == best)  # MATLAB mode: smallest on ties

    tp = 0
    for s in s_labels:
        g = partner(seg == s, truth)
        if g is not None and np.sum((seg == s) & (truth == g)) / np.sum(truth == g) > 0.5:
            tp += 1

    def side(own_labels, own, other_labels, other):
        out = []
        for o in own_labels:
            m = own == o
            area = int(m.sum())
            if not other_labels:
                out.append((area, 0.0, empty_h))
                continue
            p = partner(m, other)
            if p is None:
                dists = [brute_hausdorff(m, other == q) for q in other_labels]
                out.append((area, 0.0, dists[int(np.argmin(dists))]))
            else:
                pm = other == p
                out.append((area, 2 * np.sum(m & pm) / (m.sum() + pm.sum()), brute_hausdorff(m, pm)))
        return out

    return (
        tp,
        len(s_labels) - tp,
        len(g_labels) - tp,
        side(s_labels, seg, g_labels, truth),
        side(g_labels, truth, s_labels, seg),
    )


def random_labels(rng: np.random.Generator, shape, n_objects: int, big_labels: bool) -> np.ndarray:
    img = np.zeros(shape, dtype=np.int64)
    for k in range(n_objects):
        y, x = rng.integers(0, shape[0]), rng.integers(0, shape[1])
        h, w = rng.integers(1, shape[0] // 2 + 2), rng.integers(1, shape[1] // 2 + 2)
        label = int(rng.integers(256, 70000)) if big_labels else k + 1
        img[y : y + h, x : x + w] = label  # later objects overlap (touch) earlier ones
    if rng.random() < 0.3 and img.max() > 0:  # a disconnected object: two pieces, one label
        img[rng.integers(0, shape[0]), rng.integers(0, shape[1])] = img.max()
    return img


@pytest.mark.parametrize("seed", range(60))
def test_random_images_match_brute_force(seed: int) -> None:
    rng = np.random.default_rng(seed)
    shape = (int(rng.integers(4, 24)), int(rng.integers(4, 24)))
    truth = random_labels(rng, shape, int(rng.integers(0, 6)), big_labels=rng.random() < 0.3)
    seg = random_labels(rng, shape, int(rng.integers(0, 6)), big_labels=rng.random() < 0.3)
    diagonal = math.hypot(*shape)
    got = image_stats(truth, seg, diagonal)
    tp, fp, fn, s_side, g_side = reference(truth, seg, diagonal)
    assert (got.tp, got.fp, got.fn) == (tp, fp, fn)
    for terms, expected in ((got.segmented, s_side), (got.truth, g_side)):
        assert list(terms.area) == [a for a, _, _ in expected]
        np.testing.assert_allclose(terms.dice, [d for _, d, _ in expected], rtol=0, atol=1e-12)
        np.testing.assert_allclose(terms.hausdorff, [h for _, _, h in expected], rtol=0, atol=1e-9)


def test_pooled_scores_use_global_weights() -> None:
    rng = np.random.default_rng(11)
    images = [(random_labels(rng, (15, 18), 4, False), random_labels(rng, (15, 18), 3, False)) for _ in range(6)]
    pooled = ObjectStats()
    all_s, all_g, tp = [], [], 0
    for truth, seg in images:
        pooled = pooled.merge(image_stats(truth, seg, 10.0))
        t, _, _, s_side, g_side = reference(truth, seg, 10.0)
        tp += t
        all_s += s_side
        all_g += g_side

    def weighted(side, k):
        return sum(a * v[k] for a, *v in [(x[0], x[1], x[2]) for x in side]) / sum(x[0] for x in side)

    assert pooled.tp == tp
    assert pooled.f1 == 2 * tp / (len(all_s) + len(all_g))
    assert pooled.object_dice == pytest.approx((weighted(all_s, 0) + weighted(all_g, 0)) / 2, abs=1e-12)
    assert pooled.object_hausdorff == pytest.approx((weighted(all_s, 1) + weighted(all_g, 1)) / 2, abs=1e-9)
    reversed_order = ObjectStats()
    for truth, seg in reversed(images):
        reversed_order = image_stats(truth, seg, 10.0).merge(reversed_order)
    assert reversed_order.object_dice == pooled.object_dice  # fsum: exactly the same in any order
    assert reversed_order.object_hausdorff == pooled.object_hausdorff


def test_overlap_of_exactly_half_is_not_a_detection() -> None:
    truth = np.zeros((4, 4), int)
    truth[0, :4] = 1  # 4 pixels
    seg = np.zeros((4, 4), int)
    seg[0, :2] = 7  # covers exactly 2 of 4: 50%, not more
    assert image_stats(truth, seg, 1.0).tp == 0
    seg[0, :3] = 7  # 75%
    assert image_stats(truth, seg, 1.0).tp == 1


def test_hausdorff_over_all_pixels_not_boundaries() -> None:
    ring = np.zeros((9, 9), bool)
    ring[1:8, 1:8] = True
    ring[2:7, 2:7] = False
    dot = np.zeros((9, 9), bool)
    dot[4, 4] = True  # inside the ring's hole
    assert (
        hausdorff(ring, dot) == pytest.approx(brute_hausdorff(ring, dot), abs=1e-12) == pytest.approx(math.hypot(3, 3))
    )


def test_partner_ties_go_to_the_smaller_label() -> None:
    truth = np.array([[5, 5, 9, 9]])
    seg = np.array([[3, 3, 3, 3]])
    stats = image_stats(truth, seg, 1.0)
    assert stats.segmented.dice == (2 * 2 / (4 + 2),)  # partner 5, not 9


def test_empty_sides_and_conventions() -> None:
    nothing = np.zeros((3, 4), int)
    some = np.zeros((3, 4), int)
    some[1, 1] = 4
    both_empty = image_stats(nothing, nothing, 5.0)
    assert (both_empty.f1, both_empty.object_dice, both_empty.object_hausdorff) == (1.0, 1.0, 0.0)
    missed = image_stats(some, nothing, 5.0)
    assert (missed.fn, missed.f1, missed.object_dice, missed.object_hausdorff) == (1, 0.0, 0.0, 5.0)
    assert image_stats(nothing, some, math.inf).object_hausdorff == math.inf


@pytest.mark.parametrize("index", [1, 2, 3, 4])
def test_official_values_on_the_fixture(shared, index: int) -> None:
    folder = shared / "data" / "glas-fixture"
    truth = np.asarray(Image.open(folder / "truth" / f"testA_{index}_anno.png"))
    seg = np.asarray(Image.open(folder / "submission" / f"testA_{index}_seg.png"))
    stats = image_stats(truth, seg, math.hypot(*truth.shape))
    tp, fp, fn, f1, dice, haus = OFFICIAL[index]
    assert (stats.tp, stats.fp, stats.fn) == (tp, fp, fn)
    assert stats.f1 == pytest.approx(f1, abs=5e-7)
    assert stats.object_dice == pytest.approx(dice, abs=5e-7)
    assert stats.object_hausdorff == pytest.approx(haus, abs=5e-7)


def edt_reference_terms(truth: np.ndarray, seg: np.ndarray, empty_h: float):
    """Per-object (area, Dice, Hausdorff) of both sides: every pair by distance transform, nearest objects by exhaustive search."""

    def side(own, other):
        own_labels = sorted(set(np.unique(own).tolist()) - {0})
        other_labels = sorted(set(np.unique(other).tolist()) - {0})
        out = []
        for o in own_labels:
            m = own == o
            hits = Counter(other[m].tolist())
            hits.pop(0, None)
            if not other_labels:
                out.append((int(m.sum()), 0.0, empty_h))
            elif not hits:
                out.append((int(m.sum()), 0.0, min(hausdorff(m, other == q) for q in other_labels)))
            else:
                best = max(hits.values())
                pm = other == min(k for k, v in hits.items() if v == best)
                out.append((int(m.sum()), 2 * np.sum(m & pm) / (m.sum() + pm.sum()), hausdorff(m, pm)))
        return out

    return side(seg, truth), side(truth, seg)


def scattered_objects(rng: np.random.Generator, shape, n: int, max_side: int) -> np.ndarray:
    img = np.zeros(shape, dtype=np.int32)
    for label in rng.permutation(np.arange(1, n + 1)).tolist():
        y, x = rng.integers(0, shape[0]), rng.integers(0, shape[1])
        img[y : y + rng.integers(1, max_side + 1), x : x + rng.integers(1, max_side + 1)] = label
    return img


@pytest.mark.parametrize("seed", range(6))
def test_many_objects_match_the_distance_transform_reference(seed: int) -> None:
    """Hundreds of small, touching, distant or nested objects, and a few large ones: the batched
    boundary-point distances and the bounded nearest search give exactly the reference's terms."""
    rng = np.random.default_rng(100 + seed)
    shape = (120, 150)
    truth = scattered_objects(rng, shape, 150, 9)
    seg = scattered_objects(rng, shape, 150, 9)
    if seed % 2:
        truth[10:100, 20:90] = 9999  # a large object covering many small ones
    if seed % 3 == 0:
        seg = (rng.random(shape) < 0.015).astype(np.int32) * np.arange(1, shape[0] * shape[1] + 1).reshape(
            shape
        )  # dots
    got = image_stats(truth, seg, 7.0)
    s_side, g_side = edt_reference_terms(truth, seg, 7.0)
    for terms, expected in ((got.segmented, s_side), (got.truth, g_side)):
        assert list(terms.area) == [a for a, _, _ in expected]
        assert list(terms.dice) == pytest.approx([d for _, d, _ in expected], abs=1e-12)
        assert list(terms.hausdorff) == [h for _, _, h in expected]  # bit-identical


def test_65535_objects_in_a_16_bit_image_are_scored_in_seconds() -> None:
    import time

    cells = np.zeros((1792, 1792), dtype=np.uint16)
    labels = np.arange(1, 256 * 256 + 1).reshape(256, 256)
    labels[-1, -1] = 0  # 65,535 objects of 7x7 pixels
    cells[:] = np.kron(labels, np.ones((7, 7), dtype=np.int64)).astype(np.uint16)
    seg = np.zeros_like(cells)
    seg[2:, 2:] = cells[:-2, :-2]  # shifted: every object overlaps four others
    seg[np.isin(seg, np.arange(1, 65536, 9))] = 0  # a ninth missed: those truth objects search their nearest
    start = time.process_time()  # CPU seconds: a loaded machine stretches the wall clock, not these
    stats = image_stats(cells, seg, 100.0)
    assert time.process_time() - start < 15  # 2.5 s here; the exhaustive search took minutes
    assert stats.tp + stats.fn == 65535 and stats.fp == 0


def test_labels_2_24_and_2_24_plus_1_stay_two_objects() -> None:
    """A documented decision: the official code's single precision would merge them; podium does not."""
    seg = np.zeros((4, 8), dtype=np.int64)
    seg[:, :4], seg[:, 4:] = 2**24, 2**24 + 1
    assert np.float32(2**24) == np.float32(2**24 + 1)  # what the official code would see
    stats = image_stats(seg, seg, 10.0)
    assert (stats.tp, stats.fp, stats.fn) == (2, 0, 0) and stats.segmented.area == (16, 16)
