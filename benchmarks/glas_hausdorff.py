"""GlaS object-level scoring: podium against a brute-force all-pixel-pairs reference, in one run.

A synthetic set of 80 label images of 775x522 with ~15 glands each (touching glands, labels
above 255). podium scores all of them; the brute-force reference, which follows the official
MATLAB logic but measures every Hausdorff distance over all pixel pairs, scores the first
``--brute-images`` of them. Every per-object Dice and Hausdorff term must agree to 1e-9, and
the per-image times are compared, wall and CPU seconds: podium's the best of ``--repeats`` runs, the
brute force's one run (minutes). Target (issue 3): podium >= 30x faster.

    .venv/bin/python benchmarks/glas_hausdorff.py [--brute-images 2] [--repeats 3]
"""

from __future__ import annotations

import argparse
import math
from collections import Counter

import numpy as np
from timing import best_of, machine_header, timed, warn_if_busy

from podium.metrics.object_segmentation import image_stats
from podium.synthetic.glas import make_glands, segment


def brute_hausdorff(a: np.ndarray, b: np.ndarray, chunk: int = 2048) -> float:
    """max(max_a min_b d, max_b min_a d) over every pair of pixels, in chunks."""
    pa, pb = np.argwhere(a).astype(np.float64), np.argwhere(b).astype(np.float64)

    def directed(p: np.ndarray, q: np.ndarray) -> float:
        worst = 0.0
        for start in range(0, len(p), chunk):
            block = p[start : start + chunk]
            squared = ((block[:, None, :] - q[None, :, :]) ** 2).sum(axis=2)
            worst = max(worst, float(np.sqrt(squared.min(axis=1).max())))
        return worst

    return max(directed(pa, pb), directed(pb, pa))


def brute_image(truth: np.ndarray, seg: np.ndarray, empty_h: float):
    """(tp, fp, fn, S terms, G terms) straight from the official logic, brute-force Hausdorff."""
    s_labels = sorted(set(np.unique(seg).tolist()) - {0})
    g_labels = sorted(set(np.unique(truth).tolist()) - {0})

    def partner(mask: np.ndarray, other: np.ndarray) -> int | None:
        hits = Counter(other[mask].tolist())
        hits.pop(0, None)
        if not hits:
            return None
        best = max(hits.values())
        return min(k for k, v in hits.items() if v == best)

    tp = sum(
        1
        for s in s_labels
        if (g := partner(seg == s, truth)) is not None and 2 * np.sum((seg == s) & (truth == g)) > np.sum(truth == g)
    )

    def side(own_labels, own, other_labels, other):
        terms = []
        for o in own_labels:
            mask = own == o
            if not other_labels:
                terms.append((int(mask.sum()), 0.0, empty_h))
                continue
            p = partner(mask, other)
            if p is None:
                distances = [brute_hausdorff(mask, other == q) for q in other_labels]
                terms.append((int(mask.sum()), 0.0, min(distances)))
            else:
                pm = other == p
                terms.append(
                    (int(mask.sum()), 2 * np.sum(mask & pm) / (mask.sum() + pm.sum()), brute_hausdorff(mask, pm))
                )
        return terms

    return (
        tp,
        len(s_labels) - tp,
        len(g_labels) - tp,
        side(s_labels, seg, g_labels, truth),
        side(g_labels, truth, s_labels, seg),
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--images", type=int, default=80)
    parser.add_argument("--glands", type=int, default=15)
    parser.add_argument("--brute-images", type=int, default=2)
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()
    machine_header(args.repeats)
    rng = np.random.default_rng(0)
    shape = (522, 775)
    pairs = []
    for _ in range(args.images):
        truth = make_glands(shape, args.glands, rng, first_label=300)
        pairs.append((truth, segment(truth, rng, first_label=1000)))
    diagonal = math.hypot(*shape)
    areas = [int((t == v).sum()) for t, _ in pairs[:5] for v in np.unique(t[t > 0])]
    print(
        f"{args.images} images of {shape[1]}x{shape[0]}, {args.glands} glands each (mean gland {np.mean(areas):.0f} px)\n"
    )

    ours = best_of(args.repeats, lambda: [image_stats(t, s, diagonal) for t, s in pairs], what="podium")
    brute = timed(lambda: [brute_image(t, s, diagonal) for t, s in pairs[: args.brute_images]])
    warn_if_busy(brute, what="the brute force")

    worst = 0.0
    for stats, (tp, fp, fn, s_terms, g_terms) in zip(ours.value, brute.value):
        assert (stats.tp, stats.fp, stats.fn) == (tp, fp, fn)
        for side, terms in ((stats.segmented, s_terms), (stats.truth, g_terms)):
            assert list(side.area) == [a for a, _, _ in terms]
            worst = max(worst, float(np.max(np.abs(np.subtract(side.dice, [d for _, d, _ in terms])), initial=0)))
            worst = max(worst, float(np.max(np.abs(np.subtract(side.hausdorff, [h for _, _, h in terms])), initial=0)))
    assert worst <= 1e-9, worst

    per_podium = ours.wall / args.images
    per_brute = brute.wall / args.brute_images
    print(f"{'':38s} {'images':>7s} {'wall s':>9s} {'CPU s':>9s} {'s/image':>9s}")
    print(
        f"{'podium (compiled point scans or EDT)':38s} {args.images:7d} {ours.wall:9.2f} {ours.cpu:9.2f} {per_podium:9.3f}"
    )
    print(
        f"{'brute force, all pixel pairs':38s} {args.brute_images:7d} {brute.wall:9.2f} {brute.cpu:9.2f} {per_brute:9.3f}"
    )
    print(f"\nlargest difference of a per-object term on the shared images: {worst:.1e} (must be <= 1e-9)")
    print(f"podium speed-up per image: {per_brute / per_podium:.0f}x   target >= 30x")


if __name__ == "__main__":
    main()
