"""GlaS with many objects: podium against podium 0.1's matching (the baseline), in one run.

Images of 7x7-pixel objects on a grid (16-bit labels), the segmentation shifted by two pixels
with one object in nine missing, so that every missed truth object searches its nearest
segmented object. The baseline is the algorithm podium 0.1 shipped: a distance transform on
the union box of every pair, and, for an object that overlaps nothing, a Hausdorff distance to
every object on the other side. Both must give identical per-object terms before any time is
printed; the baseline runs up to ``--baseline-max`` objects (it is quadratic). Then scattered
dot masks (labelled into 8-connected pieces) against synthetic glands, podium only; for each
image, the share of the default work budget it uses (``WORK_PER_PIXEL`` per pixel plus
``WORK_BASE``); last, how soon noise labels (each pixel a random label) are refused.

Target (issue 10): 65,535 objects in one 2000x2000 image in under 5 s. Wall and CPU seconds;
podium's the best of ``--repeats`` runs, the baseline's one run.

    .venv/bin/python benchmarks/glas_many_objects.py [--baseline-max 4096] [--repeats 3]
"""

from __future__ import annotations

import argparse
import math
import time
from collections import Counter
from unittest import mock

import numpy as np
from scipy import ndimage
from timing import best_of, machine_header, timed, warn_if_busy

from podium.metrics import object_segmentation
from podium.metrics.object_segmentation import WORK_BASE, WORK_PER_PIXEL, TooComplex, hausdorff, image_stats
from podium.synthetic.glas import make_glands


def grid_pair(side: int, shape: tuple[int, int]) -> tuple[np.ndarray, np.ndarray]:
    """``side``² - 1 objects of 7x7 pixels (at most 65,535), and the shifted, thinned segmentation."""
    labels = np.arange(1, side * side + 1).reshape(side, side)
    labels[labels > 65535] = 0
    cells = np.kron(labels, np.ones((7, 7), dtype=np.int64))
    truth = np.zeros(shape, dtype=np.uint16)
    truth[: cells.shape[0], : cells.shape[1]] = cells
    seg = np.zeros_like(truth)
    seg[2:, 2:] = truth[:-2, :-2]
    seg[np.isin(seg, np.arange(1, 65536, 9))] = 0
    return truth, seg


def baseline_terms(truth: np.ndarray, seg: np.ndarray, empty_h: float) -> list[list[tuple[int, float, float]]]:
    """Per object of S then G: (area, Dice, Hausdorff), as podium 0.1 computed them."""
    sides = []
    for own, other in ((seg, truth), (truth, seg)):
        other_boxes = ndimage.find_objects(other)
        own_boxes = ndimage.find_objects(own)
        other_labels = [k + 1 for k, b in enumerate(other_boxes) if b is not None]
        out = []
        for k, box in enumerate(own_boxes):
            if box is None:
                continue
            code = k + 1
            mask = own == code
            hits = Counter(other[box][mask[box]].tolist())
            hits.pop(0, None)
            area = int(mask.sum())
            if not other_labels:
                out.append((area, 0.0, empty_h))
                continue

            def distance(j: int) -> float:  # called within this iteration only
                ob = other_boxes[j - 1]  # noqa: B023
                union = tuple(slice(min(a.start, b.start), max(a.stop, b.stop)) for a, b in zip(box, ob))  # noqa: B023
                return hausdorff(own[union] == code, other[union] == j)  # noqa: B023

            if not hits:
                out.append((area, 0.0, min(distance(j) for j in other_labels)))  # every object on the other side
            else:
                best = max(hits.values())
                j = min(p for p, v in hits.items() if v == best)
                out.append((area, 2 * hits[j] / (area + int((other == j).sum())), distance(j)))
        sides.append(out)
    return sides


def budget_used(truth: np.ndarray, seg: np.ndarray, empty_h: float) -> float:
    """The share of the default work budget that scoring the pair spends (scored once more, unbounded)."""
    budget_type, budgets = object_segmentation._Budget, []

    def counting(left: float) -> object_segmentation._Budget:
        budgets.append(budget_type(left))
        return budgets[-1]

    with mock.patch.object(object_segmentation, "_Budget", counting):
        image_stats(truth, seg, empty_h, max_work=1e18)
    return (1e18 - budgets[0].left) / (WORK_PER_PIXEL * truth.size + WORK_BASE)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--baseline-max", type=int, default=4096, help="largest object count the baseline runs")
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()
    machine_header(args.repeats)
    print(
        f"{'image':<36} {'objects':>7} {'podium wall s':>13} {'cpu s':>6} {'budget':>7} {'baseline wall s':>15} {'cpu s':>6} {'speed-up':>8}"
    )
    for side, shape in ((32, (224, 224)), (64, (448, 448)), (256, (2000, 2000))):
        truth, seg = grid_pair(side, shape)
        n = int(truth.max())
        empty_h = math.hypot(*shape)
        ours = best_of(
            args.repeats,
            lambda truth=truth, seg=seg, empty_h=empty_h: image_stats(truth, seg, empty_h),
            what=f"{n} objects",
        )  # type: ignore[misc]
        line = f"{'grid of 7x7 objects, ' + f'{shape[0]}x{shape[1]}':<36} {n:>7} {ours.wall:>13.2f} {ours.cpu:>6.2f} {budget_used(truth, seg, empty_h):>7.1%}"
        if n <= args.baseline_max:
            base = timed(lambda truth=truth, seg=seg, empty_h=empty_h: baseline_terms(truth, seg, empty_h))  # type: ignore[misc]
            warn_if_busy(base, what="the baseline")
            s_side, g_side = base.value
            for terms, expected in ((ours.value.segmented, s_side), (ours.value.truth, g_side)):
                assert list(terms.area) == [a for a, _, _ in expected]
                assert list(terms.hausdorff) == [h for _, _, h in expected]  # bit-identical
                assert max(abs(a - b) for a, (_, b, _) in zip(terms.dice, expected)) < 1e-12
            line += f" {base.wall:>15.2f} {base.cpu:>6.2f} {base.wall / ours.wall:>7.0f}x"
        else:
            line += f" {'(quadratic)':>15} {'':>6} {'':>8}"
        print(line, flush=True)
    rng = np.random.default_rng(0)
    for shape, density in (((522, 775), 0.05), ((522, 775), 0.2), ((2000, 2000), 0.05)):
        truth = make_glands(shape, 15, rng)
        dots, n = ndimage.label(rng.random(shape) < density, structure=np.ones((3, 3), dtype=bool))
        ours = best_of(
            args.repeats,
            lambda truth=truth, dots=dots, shape=shape: image_stats(truth, dots, math.hypot(*shape)),
            what=f"{n} dots",
        )  # type: ignore[misc]
        used = budget_used(truth, dots, math.hypot(*shape))
        print(
            f"{f'{density:.0%} dot mask, {shape[0]}x{shape[1]}':<36} {n:>7} {ours.wall:>13.2f} {ours.cpu:>6.2f} {used:>7.1%}",
            flush=True,
        )
    small = (261, 388)
    truth, noise = make_glands(small, 15, rng), rng.integers(1, 60000, small).astype(np.uint16)
    print(
        f"\nnoise labels (16-bit, each pixel a random label of 1 to 59,999) against 15 glands: {small[0]}x{small[1]} would need {budget_used(truth, noise, 100.0):.0%} of its budget"
    )
    for shape in ((522, 775), (2000, 2000)):
        truth, noise = make_glands(shape, 15, rng), rng.integers(1, 60000, shape).astype(np.uint16)
        start = time.perf_counter()
        try:
            image_stats(truth, noise, 100.0)
            print(f"  {shape[0]}x{shape[1]}: scored within the budget")
        except TooComplex:
            print(f"  {shape[0]}x{shape[1]}: refused (too_complex) after {time.perf_counter() - start:.2f} s")


if __name__ == "__main__":
    main()
