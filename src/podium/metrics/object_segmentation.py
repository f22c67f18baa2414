"""Object-level F1, Dice and Hausdorff of instance segmentations (GlaS, MICCAI 2015).

Label images: 0 is background; every other value is one object, even when it
has several disconnected pieces. As in the organizers' MATLAB code (v6):

- The partner of an object is the object on the other side with the most
  overlapping pixels (background excluded); ties go to the smaller label.
  Matching runs from S (segmented) to G (ground truth) and from G to S
  separately, and is not one-to-one.
- Detection: a segmented object ``s`` is a true positive iff
  ``|s ∩ g(s)| / |g(s)| > 0.5`` (strictly, decided in integers); every other
  segmented object is a false positive; ``FN = |G| - TP``.
- Object Dice: ``½ [Σ_s ω_s D(g(s), s) + Σ_g ω̃_g D(g, s(g))]`` with
  ``D(A, B) = 2|A ∩ B| / (|A| + |B|)``, ``ω_s = |s| / Σ|s|``, ``ω̃_g = |g| / Σ|g|``.
  An object without a partner has Dice 0.
- Object Hausdorff: the same weighting of ``H(A, B)``, the Euclidean Hausdorff
  distance over all pixels of the two objects. An object that overlaps nothing
  takes as partner the object on the other side, in the same image, with the
  smallest Hausdorff distance (ties: smaller label).

Pooled over a test set (the challenge's definition): TP, FP and FN are summed,
then ``F1 = 2TP / (2TP + FP + FN)``; Dice and Hausdorff weigh each object by
its area over the total object area of its side in all images.

Conventions the official code leaves undefined:
- F1 is 0 when TP = 0, and 1 when neither side has any object.
- An object whose image has no object on the other side has Dice 0 and
  Hausdorff ``empty_hausdorff``: the image diagonal (default) or infinity.
- A side with no object anywhere contributes no half: the score is the other
  side's weighted mean. With no object on either side, Dice is 1 and
  Hausdorff 0.

Per-object terms are kept and summed with :func:`math.fsum`, so pooled scores
do not depend on the order in which images are merged.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray
from scipy import ndimage


@dataclass(frozen=True)
class SideTerms:
    """Per object of one side: area, Dice with its partner, Hausdorff to its partner."""

    area: tuple[int, ...] = ()
    dice: tuple[float, ...] = ()
    hausdorff: tuple[float, ...] = ()

    def __add__(self, other: SideTerms) -> SideTerms:
        return SideTerms(self.area + other.area, self.dice + other.dice, self.hausdorff + other.hausdorff)

    def weighted(self, values: tuple[float, ...]) -> float | None:
        """``Σ area·value / Σ area`` exactly rounded; ``None`` without objects."""
        total = sum(self.area)
        if not total:
            return None
        if any(math.isinf(v) for v in values):
            return math.inf
        return math.fsum(a * v for a, v in zip(self.area, values)) / total


@dataclass(frozen=True)
class ObjectStats:
    """Mergeable statistics of one or more images."""

    tp: int
    fp: int
    fn: int
    segmented: SideTerms
    truth: SideTerms

    @classmethod
    def empty(cls) -> ObjectStats:
        return cls(0, 0, 0, SideTerms(), SideTerms())

    def merge(self, other: ObjectStats) -> ObjectStats:
        return ObjectStats(
            self.tp + other.tp,
            self.fp + other.fp,
            self.fn + other.fn,
            self.segmented + other.segmented,
            self.truth + other.truth,
        )

    @property
    def precision(self) -> float:
        return self.tp / (self.tp + self.fp) if self.tp + self.fp else (1.0 if not self.fn else 0.0)

    @property
    def recall(self) -> float:
        return self.tp / (self.tp + self.fn) if self.tp + self.fn else (1.0 if not self.fp else 0.0)

    @property
    def f1(self) -> float:
        if self.tp + self.fp + self.fn == 0:
            return 1.0
        return 2 * self.tp / (2 * self.tp + self.fp + self.fn)

    @property
    def object_dice(self) -> float:
        return self._average(self.segmented.weighted(self.segmented.dice), self.truth.weighted(self.truth.dice), 1.0)

    @property
    def object_hausdorff(self) -> float:
        return self._average(
            self.segmented.weighted(self.segmented.hausdorff), self.truth.weighted(self.truth.hausdorff), 0.0
        )

    @staticmethod
    def _average(a: float | None, b: float | None, neither: float) -> float:
        halves = [h for h in (a, b) if h is not None]
        return sum(halves) / len(halves) if halves else neither


def hausdorff(a: NDArray[np.bool_], b: NDArray[np.bool_]) -> float:
    """Euclidean Hausdorff distance between the pixel sets ``a`` and ``b`` (both non-empty).

    Computed on the bounding box of ``a ∪ b``, which holds every nearest pixel,
    with exact Euclidean distance transforms.
    """
    rows = np.flatnonzero((a | b).any(axis=1))
    cols = np.flatnonzero((a | b).any(axis=0))
    box = (slice(rows[0], rows[-1] + 1), slice(cols[0], cols[-1] + 1))
    a, b = a[box], b[box]
    to_b = ndimage.distance_transform_edt(~b)
    to_a = ndimage.distance_transform_edt(~a)
    return float(max(to_b[a].max(), to_a[b].max()))


class _Side:
    """The objects of one label image: consecutive codes 1..n in label order, areas, boxes."""

    def __init__(self, labels: NDArray[np.integer]) -> None:
        values, codes = np.unique(labels, return_inverse=True)
        codes = codes.reshape(labels.shape)
        if values.size and values[0] != 0:
            codes = codes + 1  # no background pixel at all: code 0 stays background
        self.codes = codes.astype(np.int64)
        self.n = int(self.codes.max())
        self.area = np.bincount(self.codes.ravel(), minlength=self.n + 1)
        self.boxes = ndimage.find_objects(self.codes)

    def mask(self, code: int, box: tuple[slice, slice]) -> NDArray[np.bool_]:
        return self.codes[box] == code


def _union_box(a: tuple[slice, slice], b: tuple[slice, slice]) -> tuple[slice, slice]:
    return tuple(slice(min(x.start, y.start), max(x.stop, y.stop)) for x, y in zip(a, b))  # type: ignore[return-value]


def image_stats(truth: NDArray[np.integer], segmented: NDArray[np.integer], empty_hausdorff: float) -> ObjectStats:
    """Statistics of one image pair (label images of one shape)."""
    if truth.shape != segmented.shape:
        raise ValueError(f"truth {truth.shape} and segmentation {segmented.shape} differ in shape")
    g, s = _Side(truth), _Side(segmented)
    overlap_s, overlap_g, count = _overlaps(s, g)
    partner_of_s = _partners(overlap_s, overlap_g, count, s.n)
    partner_of_g = _partners(overlap_g, overlap_s, count, g.n)
    pair_count = dict(zip(zip(overlap_s.tolist(), overlap_g.tolist()), count.tolist()))

    tp = sum(1 for i in range(1, s.n + 1) if partner_of_s[i] and 2 * pair_count[(i, partner_of_s[i])] > g.area[partner_of_s[i]])
    cache: dict[tuple[int, int], float] = {}

    def distance(i: int, j: int) -> float:  # S object i, G object j
        if (i, j) not in cache:
            box = _union_box(s.boxes[i - 1], g.boxes[j - 1])
            cache[(i, j)] = hausdorff(s.mask(i, box), g.mask(j, box))
        return cache[(i, j)]

    def terms(own: _Side, other: _Side, partner: list[int], own_is_s: bool) -> SideTerms:
        areas, dice, haus = [], [], []
        for i in range(1, own.n + 1):
            j = partner[i]
            areas.append(int(own.area[i]))
            if other.n == 0:
                dice.append(0.0)
                haus.append(empty_hausdorff)
                continue
            if j:
                shared = pair_count[(i, j) if own_is_s else (j, i)]
                dice.append(2 * shared / (own.area[i] + other.area[j]))
                haus.append(distance(i, j) if own_is_s else distance(j, i))
            else:
                dice.append(0.0)
                distances = [distance(i, k) if own_is_s else distance(k, i) for k in range(1, other.n + 1)]
                haus.append(min(distances))  # min() keeps the first, smallest label, on ties
        return SideTerms(tuple(areas), tuple(dice), tuple(haus))

    return ObjectStats(tp, s.n - tp, g.n - tp, terms(s, g, partner_of_s, True), terms(g, s, partner_of_g, False))


def _overlaps(s: _Side, g: _Side) -> tuple[NDArray[np.int64], NDArray[np.int64], NDArray[np.int64]]:
    """Pairs (S code, G code) of overlapping objects and their pixel counts."""
    both = (s.codes > 0) & (g.codes > 0)
    keys, count = np.unique(s.codes[both] * (g.n + 1) + g.codes[both], return_counts=True)
    return keys // (g.n + 1), keys % (g.n + 1), count


def _partners(own: NDArray[np.int64], other: NDArray[np.int64], count: NDArray[np.int64], n: int) -> list[int]:
    """For codes 1..n: the overlapping object with the largest count, smaller code on ties; 0 = none."""
    partner = [0] * (n + 1)
    order = np.lexsort((other, -count, own))  # by own, then count descending, then other ascending
    seen = set()
    for k in order.tolist():
        if own[k] not in seen:
            seen.add(int(own[k]))
            partner[int(own[k])] = int(other[k])
    return partner
