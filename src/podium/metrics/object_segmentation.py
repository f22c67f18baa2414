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
from functools import cached_property

import numpy as np
from numpy.typing import ArrayLike, NDArray
from scipy import ndimage

from podium.metrics import label_scan
from podium.metrics.arrays import native
from podium.metrics.state import Statistics, concatenated, summed

WORK_PER_PIXEL = 200  # the work budget of one image pair, in units (pixels visited, distances evaluated) per pixel ...
WORK_BASE = 100_000_000  # ... plus this: spent within about 1 s here for a GlaS image, 4 s for 4 megapixels
PAIR_MEMORY = (
    800 << 20
)  # bytes the arrays of one image pair may take: with the process's own (about 150 MB), under 1 GB
BYTES_PER_PIXEL = 14  # what scoring holds per pixel whatever the labels (codes, flags, both images)
BYTES_PER_CHANGE = 26  # and per pair of neighbouring pixels with different labels (boundaries, runs, overlaps)


class TooComplex(ValueError):
    """An image pair whose exact scoring would take more work than its size justifies."""


@dataclass
class _Budget:
    """Work left for one image pair, in distance evaluations; :class:`TooComplex` when it runs out."""

    left: float

    def spend(self, units: float) -> None:
        self.left -= units
        if self.left < 0:
            raise TooComplex(
                "its objects are scattered in pieces over the image (a label is meant to be one gland): "
                "scoring it exactly would take more than the work podium allows for an image of this size"
            )


@dataclass(frozen=True)
class SideTerms(Statistics):
    """Per object of one side: area, Dice with its partner, Hausdorff to its partner."""

    area: tuple[int, ...] = concatenated(())
    dice: tuple[float, ...] = concatenated(())
    hausdorff: tuple[float, ...] = concatenated(())

    def weighted_sum(self, values: tuple[float, ...]) -> float:
        """``Σ area·value`` over the objects, exactly rounded (:func:`math.fsum`): independent of their order."""
        return math.fsum(a * v for a, v in zip(self.area, values, strict=True))


UNIT_COLUMNS = (
    "tp",
    "fp",
    "fn",
    "segmented_area",
    "segmented_area_dice",
    "segmented_area_hausdorff",
    "truth_area",
    "truth_area_dice",
    "truth_area_hausdorff",
)


@dataclass(frozen=True)
class ObjectStats(Statistics):
    """Mergeable statistics of one or more images."""

    tp: int = summed()
    fp: int = summed()
    fn: int = summed()
    segmented: SideTerms = summed(SideTerms())
    truth: SideTerms = summed(SideTerms())

    def sums(self) -> tuple[float, ...]:
        """The additive summary of :data:`UNIT_COLUMNS`: TP, FP, FN, then per side the area and the area-weighted Dice and Hausdorff."""
        row: list[float] = [self.tp, self.fp, self.fn]
        for side in (self.segmented, self.truth):
            row += [sum(side.area), side.weighted_sum(side.dice), side.weighted_sum(side.hausdorff)]
        return tuple(row)

    @property
    def precision(self) -> float:
        return self.tp / (self.tp + self.fp) if self.tp + self.fp else (1.0 if not self.fn else 0.0)

    @property
    def recall(self) -> float:
        return self.tp / (self.tp + self.fn) if self.tp + self.fn else (1.0 if not self.fp else 0.0)

    @cached_property
    def _pooled(self) -> dict[str, float]:
        """The three scores, from one pass over the objects (:meth:`sums`)."""
        return {name: float(value) for name, value in scores_of_sums(np.array(self.sums())).items()}

    @property
    def f1(self) -> float:
        return self._pooled["f1"]

    @property
    def object_dice(self) -> float:
        return self._pooled["object_dice"]

    @property
    def object_hausdorff(self) -> float:
        return self._pooled["object_hausdorff"]


def scores_of_sums(sums: NDArray[np.float64]) -> dict[str, NDArray[np.float64]]:
    """Pooled F1, object Dice and object Hausdorff from sums of :data:`UNIT_COLUMNS` (the last axis).

    - ``F1 = 2TP / (2TP + FP + FN)``; 1 when neither side has an object.
    - Object Dice and Hausdorff: the mean, over the sides that have objects, of
      the side's ``Σ area·value / Σ area``; with no object on either side Dice is
      1 and Hausdorff 0. An infinite Hausdorff stays infinite.

    Element-wise over the leading axes, so that a bootstrap scores all its resamples at once.

    >>> scores = scores_of_sums(np.array([[1, 0, 1, 10, 10.0, 0.0, 20, 10.0, 40.0], [0, 0, 0, 0, 0, 0, 0, 0, 0]]))
    >>> scores["f1"].tolist(), scores["object_dice"].tolist(), scores["object_hausdorff"].tolist()
    ([0.6666666666666666, 1.0], [0.75, 1.0], [1.0, 0.0])
    """
    tp, fp, fn, s_area, s_dice, s_hd, g_area, g_dice, g_hd = np.moveaxis(np.asarray(sums, dtype=np.float64), -1, 0)
    objects = tp + fp + fn
    with np.errstate(invalid="ignore", divide="ignore"):
        f1 = np.where(objects > 0, 2 * tp / np.where(objects > 0, 2 * tp + fp + fn, 1), 1.0)
    return {
        "f1": f1,
        "object_dice": _mean_of_sides(s_area, s_dice, g_area, g_dice, 1.0),
        "object_hausdorff": _mean_of_sides(s_area, s_hd, g_area, g_hd, 0.0),
    }


def _mean_of_sides(
    s_area: NDArray[np.float64],
    s_sum: NDArray[np.float64],
    g_area: NDArray[np.float64],
    g_sum: NDArray[np.float64],
    neither: float,
) -> NDArray[np.float64]:
    """The mean of the sides' area-weighted means, over the sides that have objects; ``neither`` if none has."""
    with np.errstate(invalid="ignore", divide="ignore"):
        s = np.where(s_area > 0, s_sum / np.where(s_area > 0, s_area, 1), 0.0)
        g = np.where(g_area > 0, g_sum / np.where(g_area > 0, g_area, 1), 0.0)
    count = (s_area > 0).astype(np.float64) + (g_area > 0)
    return np.where(count > 0, (s + g) / np.maximum(count, 1), neither)


def hausdorff(a: NDArray[np.bool_], b: NDArray[np.bool_]) -> float:
    """Euclidean Hausdorff distance between the pixel sets ``a`` and ``b`` (both non-empty).

    Computed on the bounding box of ``a ∪ b``, which holds every nearest pixel,
    with exact Euclidean distance transforms.

    >>> a = np.zeros((5, 5), bool); a[0, 0] = True
    >>> b = np.zeros((5, 5), bool); b[3, 4] = True
    >>> hausdorff(a, b)
    5.0
    """
    rows = np.flatnonzero((a | b).any(axis=1))
    cols = np.flatnonzero((a | b).any(axis=0))
    box = (slice(rows[0], rows[-1] + 1), slice(cols[0], cols[-1] + 1))
    a, b = a[box], b[box]
    to_b = ndimage.distance_transform_edt(~b)
    to_a = ndimage.distance_transform_edt(~a)
    return float(max(to_b[a].max(), to_a[b].max()))


class _Side:
    """The objects of one label image: codes 1..n in label order, areas, boxes, boundaries by object.

    ``extremes[k]`` is ``(top, bottom, left, right)`` of object k+1 (inclusive pixel
    indices). ``boundary`` and ``edge_pixels`` list, grouped by object and in raster
    order within it, the coordinates of its 4-boundary and of its 8-boundary (pixels
    with a 4- or 8-neighbour outside the object or outside the image), and ``flags``
    marks both on the image (:mod:`~podium.metrics.label_scan`). ``octagon[k]``
    holds max and min of y, x, y + x and y - x over object k+1's pixels.
    """

    def __init__(self, labels: NDArray[np.integer]) -> None:
        self.codes, self.n = _consecutive_codes(labels)
        self.flags, self.area, on4, on8, self.octagon, edge_y, edge_x = label_scan.object_shapes(self.codes, self.n)
        self.extremes = np.ascontiguousarray(self.octagon[:, [1, 0, 3, 2]])  # one layout: one compiled signature
        # Squared distances of int32 coordinates stay below 2**31 while both sides are under 32,768.
        kind: type[np.signedinteger] = np.int32 if max(self.codes.shape) < 2**15 else np.int64
        start4, start8 = _starts(on4[1:]), _starts(on8[1:])
        y4, x4, y8, x8 = (np.empty(int(size[-1]), kind) for size in (start4, start4, start8, start8))
        label_scan.group_edges(self.codes, self.flags, edge_y, edge_x, start4, start8, y4, x4, y8, x8)
        self.boundary, self.edge_pixels = _Grouped(y4, x4, start4), _Grouped(y8, x8, start8)
        self._hulls: dict[int, tuple[NDArray[np.signedinteger], NDArray[np.signedinteger]]] = {}

    def box(self, code: int) -> tuple[slice, slice]:
        top, bottom, left, right = self.extremes[code - 1].tolist()
        return slice(top, bottom + 1), slice(left, right + 1)

    def mask(self, code: int, box: tuple[slice, slice]) -> NDArray[np.bool_]:
        inside: NDArray[np.bool_] = self.codes[box] == code
        return inside

    @cached_property
    def octagon_area(self) -> NDArray[np.int64]:
        """Per object: the pixels of its octagon, its box less the four corners the diagonals cut off
        (a corner cut ``t`` pixels deep holds ``t (t + 1) / 2``).

        >>> _Side(np.array([[0, 1, 0], [1, 1, 1], [0, 1, 0]])).octagon_area.tolist()
        [5]
        """
        y_max, y_min, x_max, x_min, s_max, s_min, d_max, d_min = self.octagon.T
        corners = [s_min - (y_min + x_min), (y_max + x_max) - s_max, d_min - (y_min - x_max), (y_max - x_min) - d_max]
        area: NDArray[np.int64] = (y_max - y_min + 1) * (x_max - x_min + 1) - sum(t * (t + 1) // 2 for t in corners)
        return area

    def hull(self, code: int) -> tuple[NDArray[np.signedinteger], NDArray[np.signedinteger]]:
        """The pixels of object ``code`` at the vertices of its convex hull (all of its 8-boundary if flat)."""
        if code not in self._hulls:
            from scipy.spatial import ConvexHull, QhullError

            y, x = self.edge_pixels.of_object(code)
            try:
                vertices = ConvexHull(np.column_stack([y, x]).astype(np.float64)).vertices
                self._hulls[code] = (y[vertices], x[vertices])
            except QhullError:  # fewer than three points off one line
                self._hulls[code] = (y, x)
        return self._hulls[code]


@dataclass(frozen=True)
class _Grouped:
    """Pixel coordinates grouped by object code: object k+1 holds rows ``start[k]:start[k + 1]``."""

    y: NDArray[np.signedinteger]
    x: NDArray[np.signedinteger]
    start: NDArray[np.int64]

    def of_object(self, code: int) -> tuple[NDArray[np.signedinteger], NDArray[np.signedinteger]]:
        rows = slice(self.start[code - 1], self.start[code])
        return self.y[rows], self.x[rows]


def _starts(counts: NDArray[np.int64]) -> NDArray[np.int64]:
    return np.concatenate([[0], np.cumsum(counts)]).astype(np.int64)


def _consecutive_codes(labels: NDArray[np.integer]) -> tuple[NDArray[np.int32], int]:
    """Labels renumbered 1..n in label order, 0 kept for background, and n.

    A lookup table over the label values when they are small enough (one
    compiled pass, :func:`~podium.metrics.label_scan.renumber`), else :func:`numpy.unique`.
    """
    if not labels.size:
        return np.zeros(labels.shape, np.int32), 0
    top = int(labels.max())
    if labels.dtype.kind in "ui" and top < max(2**16, 4 * labels.size):
        return label_scan.renumber(labels, top + 1)
    values, codes = np.unique(labels, return_inverse=True)
    codes = codes.reshape(labels.shape).astype(np.int32)
    background = values[0] == 0
    return (codes if background else codes + 1), values.size - int(background)  # no background pixel: code 0 stays free


def image_stats(
    truth: NDArray[np.integer], segmented: NDArray[np.integer], empty_hausdorff: float, max_work: float | None = None
) -> ObjectStats:
    """Statistics of one image pair (label images of one shape).

    ``max_work`` bounds the work: pixels visited and distances evaluated (default: ``WORK_PER_PIXEL`` per
    pixel plus ``WORK_BASE``); an image pair that needs more raises
    :class:`TooComplex` within seconds. Images of compact objects stay far below
    it (65,535 objects in 2000x2000 use 2% of it); labels scattered as
    noise over the whole image do not.

    Near-linear in pixels plus objects: the objects' pixels and boundaries come
    from two compiled raster passes (:mod:`~podium.metrics.label_scan`), the
    overlapping pairs from one more; Hausdorff distances from candidate points
    scanned against boundaries with an early break, unless a distance transform
    is cheaper (:func:`_hausdorff_pairs`); a pair both sides chose is measured once; the nearest object of an object
    that overlaps nothing is searched in increasing order of a lower bound on
    the Hausdorff distance, and the search stops when the bound passes the best
    distance found (:func:`_nearest_hausdorff`).
    """
    if truth.shape != segmented.shape:
        raise ValueError(f"truth {truth.shape} and segmentation {segmented.shape} differ in shape")
    check_memory(truth, segmented)
    budget = _Budget(max_work if max_work is not None else WORK_PER_PIXEL * truth.size + WORK_BASE)
    g, s = _Side(truth), _Side(segmented)
    pair_s, pair_g, count = _overlaps(s, g)
    partner_of_s, shared_s = _partners(pair_s, pair_g, count, s.n)
    partner_of_g, shared_g = _partners(pair_g, pair_s, count, g.n)
    matched_s, matched_g = np.flatnonzero(partner_of_s) + 1, np.flatnonzero(partner_of_g) + 1
    tp = int(np.count_nonzero(2 * shared_s[matched_s - 1] > g.area[partner_of_s[matched_s - 1]]))
    overlaps = (pair_s * (g.n + 1) + pair_g, count)
    s_codes, g_codes = (
        np.concatenate([matched_s, partner_of_g[matched_g - 1]]),
        np.concatenate([partner_of_s[matched_s - 1], matched_g]),
    )
    matched_hausdorff = _matched_hausdorff(
        s, g, s_codes, g_codes, overlaps, budget
    )  # the S side's pairs, then the G side's

    def terms(
        own: _Side, other: _Side, partner: NDArray[np.int64], shared: NDArray[np.int64], own_is_s: bool
    ) -> SideTerms:
        areas = own.area[1:]
        dice = np.zeros(own.n)
        haus = np.full(own.n, float(empty_hausdorff))
        if other.n:
            matched = np.flatnonzero(partner)
            dice[matched] = 2 * shared[matched] / (areas[matched] + other.area[partner[matched]])
            haus[matched] = matched_hausdorff[: len(matched)] if own_is_s else matched_hausdorff[len(matched_s) :]
            alone = np.flatnonzero(partner == 0)
            haus[alone] = _nearest_hausdorff(own, other, alone + 1, own_is_s, budget)
        return SideTerms(tuple(areas.tolist()), tuple(dice.tolist()), tuple(haus.tolist()))

    return ObjectStats(
        tp, s.n - tp, g.n - tp, terms(s, g, partner_of_s, shared_s, True), terms(g, s, partner_of_g, shared_g, False)
    )


def _matched_hausdorff(
    s: _Side,
    g: _Side,
    s_codes: NDArray[np.int64],
    g_codes: NDArray[np.int64],
    overlaps: tuple[NDArray[np.int64], NDArray[np.int64]],
    budget: _Budget,
) -> NDArray[np.float64]:
    """Hausdorff distance of each pair (S code, G code); a pair listed twice (mutual partners, the
    usual case) is measured once. ``overlaps``: the sorted keys ``s * (g.n + 1) + g`` of the
    overlapping pairs, and their common pixels."""
    keys, first, back = np.unique(s_codes * (g.n + 1) + g_codes, return_index=True, return_inverse=True)
    overlap = overlaps[1][np.searchsorted(overlaps[0], keys)]
    distances: NDArray[np.float64] = _hausdorff_pairs(s, g, s_codes[first], g_codes[first], overlap, budget)[
        back.ravel()
    ]
    return distances


def check_memory(truth: NDArray[np.integer], segmented: NDArray[np.integer]) -> None:
    """:class:`TooComplex` before anything is built when the pair's arrays would take more than
    ``PAIR_MEMORY``: ``BYTES_PER_PIXEL`` a pixel, ``BYTES_PER_CHANGE`` a pair of neighbouring pixels
    whose labels differ (measured, whole process: 9 megapixels of noise labels against glands
    peaked at 696 MB, the glands alone at 295 MB). Glands on 49 megapixels (podium reads 50 at
    most) pass and peak at 835 MB; noise passes up to about 12 megapixels (3500x3500: 847 MB,
    then refused by the work budget), and is refused here beyond, in a fraction of a second.

    >>> check_memory(np.zeros((3, 3), np.uint8), np.eye(3, dtype=np.uint8))
    """
    check_pair_memory(truth.shape, label_changes(truth) + label_changes(segmented))


def check_pair_memory(shape: tuple[int, ...], changes: int) -> None:
    """:func:`check_memory` of a pair of ``shape`` whose images hold ``changes`` changes of label in all (each counted
    by :func:`label_changes`)."""
    needed = BYTES_PER_PIXEL * math.prod(shape) + BYTES_PER_CHANGE * changes
    if needed > PAIR_MEMORY:
        raise TooComplex(
            f"would take about {needed >> 20:,} MB to score exactly ({changes:,} changes of label between neighbouring pixels "
            f"in {shape[1]}x{shape[0]}: noise more than objects); podium scores an image pair within {PAIR_MEMORY >> 20} MB"
        )


def label_changes(labels: NDArray[np.integer], rows: int = 512) -> int:
    """How many pairs of side or vertical neighbours have different labels, counted ``rows`` rows at a time (a few megabytes).

    >>> label_changes(np.array([[0, 1, 1], [0, 0, 1]]))
    3
    """
    total = 0
    for top in range(0, labels.shape[0], rows):
        block = labels[top : top + rows + 1]  # one more row: the vertical pairs across blocks
        total += int(np.count_nonzero(block[:rows, 1:] != block[:rows, :-1])) + int(
            np.count_nonzero(block[1:] != block[:-1])
        )
    return total


def _overlaps(s: _Side, g: _Side) -> tuple[NDArray[np.int64], NDArray[np.int64], NDArray[np.int64]]:
    """Pairs (S code, G code) of overlapping objects, in increasing order, and their common pixels."""
    return label_scan.overlaps(s.codes, g.codes, s.n, g.n)


def _partners(
    own: NDArray[np.int64], other: NDArray[np.int64], count: NDArray[np.int64], n: int
) -> tuple[NDArray[np.int64], NDArray[np.int64]]:
    """For codes 1..n (at index code - 1): the overlapping object with the largest count, the smaller
    code on ties (0 = none), and that count."""
    order = np.lexsort((other, -count, own))  # by own, then count descending, then other ascending
    own, other, count = own[order], other[order], count[order]
    first = np.ones(own.size, dtype=bool)
    first[1:] = own[1:] != own[:-1]
    partner = np.zeros(n, dtype=np.int64)
    shared = np.zeros(n, dtype=np.int64)
    partner[own[first] - 1] = other[first]
    shared[own[first] - 1] = count[first]
    return partner, shared


# A pair goes to the distance transform when that is cheaper than its point work (:func:`_point_cost`).
# Costs in units of the compiled scan's work (about 2.5 ns each here): SciPy's transform takes about
# 28 ns per pixel of the box and 35 µs per call.
_EDT_PIXEL_COST = 11
_EDT_CALL_COST = 15_000
_HULL_WORTH = 32  # boundary pixels from which the convex hull is worth computing
_SCAN_COST = 40  # distances a candidate evaluates before its scan of B breaks off (measured: 34 and 38 on average)


def _point_cost(
    own: _Side,
    other: _Side,
    a_codes: NDArray[np.int64],
    b_codes: NDArray[np.int64],
    inter_area: NDArray[np.int64],
    overlap: NDArray[np.int64],
) -> NDArray[np.int64]:
    """The expected work of ``h(A→B)`` from points: the pixels visited (A's 8-boundary, and at most the
    overlap of the boxes within B's octagon), then for each candidate (A's 8-boundary, and at most A's
    pixels outside B within B's octagon) a scan of B's boundary, broken off early (:func:`_directed_squared`)."""
    edge = np.diff(own.edge_pixels.start)[a_codes - 1]
    gathered = edge + np.minimum(inter_area, other.octagon_area[b_codes - 1])
    inner = np.minimum(
        own.area[a_codes] - overlap, other.octagon_area[b_codes - 1] - other.area[b_codes]
    )  # outside B, inside its octagon
    candidates = np.minimum(gathered, edge + np.maximum(inner, 0))
    boundary = np.diff(other.boundary.start)[b_codes - 1]
    cost: NDArray[np.int64] = gathered + candidates * np.minimum(boundary, _SCAN_COST)
    return cost


def _hausdorff_pairs(
    s: _Side,
    g: _Side,
    s_codes: NDArray[np.int64],
    g_codes: NDArray[np.int64],
    overlap: NDArray[np.int64],
    budget: _Budget,
) -> NDArray[np.float64]:
    """Hausdorff distance of each pair (S object, G object, their common pixels), exactly as :func:`hausdorff` gives it.

    A pair is measured either by distance transforms on its union box
    (:func:`hausdorff`), or from points: ``h(A→B) = max d(a, B)`` over the
    candidates of :func:`_directed_squared` (pixels of A outside B; ``d`` is 0
    inside), ``d(a, B)`` being the distance to the nearest 4-boundary pixel of
    B. Squared distances are integers and the square root
    is taken last, so every way gives bit-identical values. Each pair takes the
    way :func:`_point_cost` and the transform's cost say is cheaper; ``overlap``
    (the pair's common pixels) bounds the candidates.
    """
    result = np.zeros(len(s_codes))
    if not len(s_codes):
        return result
    es, eg = s.extremes[s_codes - 1], g.extremes[g_codes - 1]
    union_area = (np.maximum(es[:, 1], eg[:, 1]) - np.minimum(es[:, 0], eg[:, 0]) + 1) * (
        np.maximum(es[:, 3], eg[:, 3]) - np.minimum(es[:, 2], eg[:, 2]) + 1
    )
    _, _, height, width = _box_overlap(s, g, s_codes, g_codes)
    inter_area = height * width
    point_cost = _point_cost(s, g, s_codes, g_codes, inter_area, overlap) + _point_cost(
        g, s, g_codes, s_codes, inter_area, overlap
    )
    by_transform = _EDT_PIXEL_COST * union_area + _EDT_CALL_COST < point_cost
    budget.spend(float(np.sum((_EDT_PIXEL_COST * union_area + _EDT_CALL_COST)[by_transform])))
    for k in np.flatnonzero(by_transform).tolist():
        i, j = int(s_codes[k]), int(g_codes[k])
        box = _union_box(s.box(i), g.box(j))
        result[k] = hausdorff(s.mask(i, box), g.mask(j, box))
    by_points = np.flatnonzero(~by_transform)
    s_points, g_points = s_codes[by_points], g_codes[by_points]
    squared = np.maximum(
        _directed_squared(s, g, s_points, g_points, budget), _directed_squared(g, s, g_points, s_points, budget)
    )
    result[by_points] = np.sqrt(squared.astype(np.float64))
    return result


def _directed_squared(
    own: _Side, other: _Side, a_codes: NDArray[np.int64], b_codes: NDArray[np.int64], budget: _Budget
) -> NDArray[np.int64]:
    """``max over a in A of min over b in B |a - b|²`` for each pair (A of ``own``, B of ``other``).

    When B is one pixel, the farthest pixel of A is a vertex of A's convex hull
    (a convex function peaks at an extreme point), so only those are measured.
    Otherwise the compiled :func:`~podium.metrics.label_scan.directed_squared`
    measures the points of A that can be the farthest against B's 4-boundary (the
    nearest pixel of B to a point outside it is always on it: from any other, a
    step towards the point stays in B and is nearer), charging the budget with the
    pixels it visits and the distances it evaluates.

    The candidates: pixels of A inside B are at distance 0 and never needed. Of
    the others, the candidates are A's 8-boundary and A's pixels strictly inside
    B's octagon: the region where, for each of the 8 king moves v,
    ``v·a < max over b in B of v·b``. From any other pixel of A a king move v
    stays in A and has ``v·(a - b) >= 0`` for every b, so it increases
    ``|a - b|²`` by ``2 v·(a - b) + |v|² > 0`` for every b: that pixel is not the
    farthest.
    """
    out = np.zeros(len(a_codes), dtype=np.int64)
    single = (other.area[b_codes] == 1) & (np.diff(own.edge_pixels.start)[a_codes - 1] > _HULL_WORTH)
    for a in np.unique(a_codes[single]).tolist():
        pairs = np.flatnonzero(single & (a_codes == a))
        hy, hx = own.hull(a)
        by, bx = (
            other.boundary.y[other.boundary.start[b_codes[pairs] - 1]],
            other.boundary.x[other.boundary.start[b_codes[pairs] - 1]],
        )
        budget.spend(hy.size * pairs.size)
        dy, dx = hy[:, None].astype(np.int64) - by[None, :], hx[:, None].astype(np.int64) - bx[None, :]
        out[pairs] = (dy * dy + dx * dx).max(axis=0)
    rest = np.flatnonzero(~single)
    if rest.size:
        out[rest], work = _compiled_directed(own, other, a_codes[rest], b_codes[rest], budget.left)
        budget.spend(work)
    return out


def _compiled_directed(
    own: _Side, other: _Side, a_codes: NDArray[np.int64], b_codes: NDArray[np.int64], work_left: float
) -> tuple[NDArray[np.int64], int]:
    """:func:`~podium.metrics.label_scan.directed_squared` on the arrays of the two sides: the
    squared distances, and the work done (it stops once the work passes ``work_left``)."""
    edge, bd = own.edge_pixels, other.boundary
    return label_scan.directed_squared(
        a_codes,
        b_codes,
        own.codes,
        own.flags,
        edge.y,
        edge.x,
        edge.start,
        own.extremes,
        other.codes,
        bd.y,
        bd.x,
        bd.start,
        other.octagon,
        work_left,
    )


def _box_overlap(
    own: _Side, other: _Side, a_codes: NDArray[np.int64], b_codes: NDArray[np.int64]
) -> tuple[NDArray[np.int64], NDArray[np.int64], NDArray[np.int64], NDArray[np.int64]]:
    """Top, left, height and width of the overlap of the boxes of A and B (height or width 0: none)."""
    ea, eb = own.extremes[a_codes - 1], other.extremes[b_codes - 1]
    top, left = np.maximum(ea[:, 0], eb[:, 0]), np.maximum(ea[:, 2], eb[:, 2])
    height = np.clip(np.minimum(ea[:, 1], eb[:, 1]) - top + 1, 0, None)
    width = np.clip(np.minimum(ea[:, 3], eb[:, 3]) - left + 1, 0, None)
    return top, left, height, width


def _nearest_hausdorff(
    own: _Side, other: _Side, codes: NDArray[np.int64], own_is_s: bool, budget: _Budget
) -> NDArray[np.float64]:
    """The smallest Hausdorff distance from each object in ``codes`` to any object of ``other``.

    ``H(A, B) >= |top_A - top_B|`` (and likewise for bottom, left, right): if B's
    top row is lower, A's top pixel is at least that far from B, else B's top
    pixel is that far from A. So the Chebyshev distance between the 4-vectors of
    extremes is a lower bound. Candidates come from a k-d tree in increasing
    order of it, k doubling, until the bound of the last one examined reaches
    the best distance found.

    >>> own, other = _Side(np.array([[1, 0, 0, 0, 0]])), _Side(np.array([[0, 0, 1, 0, 2]]))
    >>> _nearest_hausdorff(own, other, np.array([1]), True, _Budget(1e6)).tolist()
    [2.0]
    """
    from scipy.spatial import cKDTree

    best = np.full(len(codes), np.inf)
    if not len(codes):
        return best
    tree = cKDTree(other.extremes)
    pending = np.arange(len(codes))
    k = min(2, other.n)
    while pending.size:
        # Every round measures all k candidates again: with ties in the bound, the first
        # candidates of a larger query need not be the ones measured before.
        bound, index = tree.query(own.extremes[codes[pending] - 1], k=k, p=np.inf)
        bound, index = bound.reshape(len(pending), k), index.reshape(len(pending), k) + 1
        mine = np.repeat(codes[pending], k)
        s_side, g_side = (own, other) if own_is_s else (other, own)
        s_codes, g_codes = (mine, index.ravel()) if own_is_s else (index.ravel(), mine)
        nothing_common = np.zeros(len(s_codes), dtype=np.int64)  # the object overlaps nothing
        distances = _hausdorff_pairs(s_side, g_side, s_codes, g_codes, nothing_common, budget).reshape(index.shape)
        best[pending] = distances.min(axis=1)
        pending = pending[(bound[:, -1] < best[pending]) & (k < other.n)]
        k = min(2 * k, other.n)
    return best


def _union_box(a: tuple[slice, slice], b: tuple[slice, slice]) -> tuple[slice, slice]:
    return tuple(slice(min(x.start, y.start), max(x.stop, y.stop)) for x, y in zip(a, b))  # type: ignore[return-value]


def compile_kernels() -> None:
    """Compile the kernels of :mod:`~podium.metrics.label_scan` (or load them from Numba's cache) for
    the label types scoring meets: 8- and 16-bit PNG labels, and 32-bit pieces of binary masks.
    The first time, in a new installation, this takes a few seconds; ``make`` runs it after installing
    (by importing :mod:`podium.scoring.kernels`).
    """
    for kind in (np.uint8, np.uint16, np.int32):
        labels = np.zeros((3, 3), dtype=kind)
        labels[1, 1] = 1
        image_stats(labels, labels.T.copy(), 1.0)


# --- one-shot functions, scikit-learn style ---------------------------------------------------


def _one_image(labels_true: ArrayLike, labels_pred: ArrayLike, empty_hausdorff: float | None) -> ObjectStats:
    truth, segmented = native(np.asarray(labels_true)), native(np.asarray(labels_pred))
    for name, labels in (("labels_true", truth), ("labels_pred", segmented)):
        if labels.ndim != 2 or not np.issubdtype(labels.dtype, np.integer) or (labels.size and labels.min() < 0):
            raise ValueError(f"{name} must be a 2-d array of non-negative integer labels (0 = background)")
    return image_stats(truth, segmented, math.hypot(*truth.shape) if empty_hausdorff is None else empty_hausdorff)


def object_f1_score(labels_true: ArrayLike, labels_pred: ArrayLike) -> float:
    """Object-level F1 of one label image: ``2TP / (2TP + FP + FN)``, 1 when neither side has an object.

    One image: GlaS's official scores pool the objects of every test image
    (:func:`podium.evaluate`), so the mean of this over images is not the official score.

    A segmented object is a true positive when it covers *more than* half of its
    partner gland, so exactly half is not enough:

    >>> truth = np.zeros((4, 8), dtype=int); truth[:, :4] = 1; truth[:, 4:] = 2  # two glands of 16 pixels
    >>> half = np.zeros_like(truth); half[:, :2] = 1  # 8 of gland 1's 16 pixels
    >>> object_f1_score(truth, half)  # TP 0, FP 1, FN 2
    0.0
    >>> more = np.zeros_like(truth); more[:, :3] = 1  # 12 of 16
    >>> object_f1_score(truth, more)  # TP 1, FP 0, FN 1
    0.6666666666666666
    >>> empty = np.zeros_like(truth)
    >>> object_f1_score(empty, empty), object_f1_score(truth, empty)
    (1.0, 0.0)

    To score a test set, merge :func:`image_stats` of every image: F1 pools TP, FP and FN.
    """
    return _one_image(labels_true, labels_pred, None).f1


def object_dice_score(labels_true: ArrayLike, labels_pred: ArrayLike) -> float:
    """Object-level Dice of one label image, objects weighted by area on each side; 1 when neither side has an object.

    One image: GlaS's official scores pool the objects of every test image
    (:func:`podium.evaluate`), so the mean of this over images is not the official score.

    >>> truth = np.zeros((4, 8), dtype=int); truth[:, :4] = 1; truth[:, 4:] = 2
    >>> half = np.zeros_like(truth); half[:, :2] = 1
    >>> object_dice_score(truth, half)  # S side: 2·8/24; G side: (16·(2·8/24) + 16·0) / 32
    0.5
    >>> object_dice_score(truth, truth), object_dice_score(truth, np.zeros_like(truth))
    (1.0, 0.0)
    >>> object_dice_score(np.zeros((2, 2), dtype=int), np.zeros((2, 2), dtype=int))  # no object: 1 by convention
    1.0
    """
    return _one_image(labels_true, labels_pred, None).object_dice


def object_hausdorff_distance(
    labels_true: ArrayLike, labels_pred: ArrayLike, *, empty_hausdorff: float | None = None
) -> float:
    """Object-level Hausdorff distance of one label image, in pixels, same weighting as Dice; 0 when neither side has an object.

    One image: GlaS's official scores pool the objects of every test image
    (:func:`podium.evaluate`), so the mean of this over images is not the official score.

    An object whose image has no object on the other side gets ``empty_hausdorff``:
    by default the image diagonal.

    >>> truth = np.zeros((4, 8), dtype=int); truth[:, :4] = 1; truth[:, 4:] = 2
    >>> shifted = np.zeros_like(truth); shifted[:, 1:5] = 1; shifted[:, 5:] = 2
    >>> object_hausdorff_distance(truth, shifted)  # every object 1 pixel from its partner
    1.0
    >>> object_hausdorff_distance(truth, np.zeros_like(truth))  # the diagonal, sqrt(4² + 8²)
    8.94427190999916
    >>> object_hausdorff_distance(truth, np.zeros_like(truth), empty_hausdorff=math.inf)
    inf
    >>> object_hausdorff_distance(np.zeros((2, 2), dtype=int), np.zeros((2, 2), dtype=int))
    0.0
    """
    return _one_image(labels_true, labels_pred, empty_hausdorff).object_hausdorff
