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

    return tp, len(s_labels) - tp, len(g_labels) - tp, side(s_labels, seg, g_labels, truth), side(g_labels, truth, s_labels, seg)


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
    pooled = ObjectStats.empty()
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
    reversed_order = ObjectStats.empty()
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
    assert hausdorff(ring, dot) == pytest.approx(brute_hausdorff(ring, dot), abs=1e-12) == pytest.approx(math.hypot(3, 3))


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
