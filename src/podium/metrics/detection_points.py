"""Points of the camera-trap contest: greedy box matching at IoU > 0.5, then ±1 and ±5 points.

Boxes are ``(xc, yc, w, h)``, normalized. Photo by photo, predictions are taken
in file order; each is matched to the not-yet-matched truth box with the
largest IoU, provided ``IoU > 0.5`` strictly (ties go to the earlier truth
row). A truth box is found at most once.

- Detection: +1 per matched prediction, -1 per unmatched prediction, -1 per
  truth box left unmatched.
- Classification, over matched pairs: +5 if the 0/1 class is right, -5 if not.
- ``score = max(0, X) / (6 (M + N))`` with X all points and M + N the number of
  truth objects; with no truth object, 1 if there is no prediction, else 0.

``IoU > 0.5`` is decided exactly, for boxes of any size. Every float IoU comes
with a proven bound on its rounding error (:func:`iou_error_bound`); the float
decides when it is farther than that bound from 0.5 and from every competing
IoU. Otherwise the photo is redone in rational arithmetic from the boxes'
decimal text, so float rounding never turns an IoU of exactly 0.5 into a match.
That arithmetic is on integers: a pair's eight decimals are scaled to one power of
ten (:meth:`Boxes.exact`), so an exact IoU costs a few integer products and one
:class:`~fractions.Fraction` (50,000 photos of five predictions at IoU exactly 0.5, each
written differently: the matching takes 3.3 s of CPU, where fractions throughout took 15.8 s).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from fractions import Fraction
from math import lcm
from typing import Any

import numpy as np
from numpy.typing import ArrayLike, NDArray

from podium.accel.jit import kernels_loaded
from podium.metrics.detection_boxes import (
    ERROR_UNITS,
    UNIT_ROUNDOFF,
    Boxes,
    Corners,
    FloatDecisions,
    corners,
    photo_count,
    photo_groups,
)
from podium.metrics.state import Statistics, summed

COLD_PAIRS = 4_000_000  # pairs of boxes from which a process without Numba loads it to match (see _compiled_pays)
Count = Any  # an int (a test set's total), or an int array (one total per photo)
KNOWN_IOUS = 100_000  # exact IoUs kept by the boxes' texts (duplicates are computed once), at most


@dataclass(frozen=True)
class PointCounts(Statistics):
    """Mergeable totals: of a test set (integers), or of each photo (arrays of one length).

    The formulas below are the only ones: the scores of a test set, the points
    of each photo and the bootstrap's resamples all use them.

    >>> counts = PointCounts(matched=3, false_detections=1, missed=1, class_right=2, class_wrong=1, truth_objects=4, predictions=4)
    >>> counts.detection_points, counts.classification_points, counts.points, counts.max_points, counts.score
    (1, 5, 6, 24, 0.25)
    >>> PointCounts().score, PointCounts(false_detections=1, predictions=1).score  # no truth object: 1 only if nothing was predicted
    (1.0, 0.0)
    >>> PointCounts().precision is None, PointCounts().f1 is None  # 0/0 is undefined
    (True, True)
    """

    matched: Count = summed()
    false_detections: Count = summed()  # unmatched predictions
    missed: Count = summed()  # unmatched truth boxes
    class_right: Count = summed()
    class_wrong: Count = summed()
    truth_objects: Count = summed()
    predictions: Count = summed()

    @property
    def detection_points(self) -> Count:
        """+1 per matched prediction, -1 per false detection, -1 per missed truth object."""
        return self.matched - self.false_detections - self.missed

    @property
    def classification_points(self) -> Count:
        """+5 per matched pair of the right class, -5 per matched pair of the wrong class."""
        return 5 * (self.class_right - self.class_wrong)

    @property
    def points(self) -> Count:
        return self.detection_points + self.classification_points

    @property
    def max_points(self) -> Count:
        """6 per truth object: a matched prediction of the right class."""
        return 6 * self.truth_objects

    @property
    def score(self) -> float:
        return float(points_score(self.points, self.max_points, self.predictions))

    @property
    def precision(self) -> float | None:
        """matched / predictions."""
        return self.matched / self.predictions if self.predictions else None

    @property
    def recall(self) -> float | None:
        """matched / truth objects."""
        return self.matched / self.truth_objects if self.truth_objects else None

    @property
    def f1(self) -> float | None:
        """2 matched / (predictions + truth objects)."""
        total = self.predictions + self.truth_objects
        return 2 * self.matched / total if total else None

    @property
    def class_accuracy(self) -> float | None:
        """right classes / matched pairs."""
        return self.class_right / self.matched if self.matched else None


def points_score(points: ArrayLike, max_points: ArrayLike, predictions: ArrayLike) -> NDArray[np.float64]:
    """``max(0, points) / max_points``; with no truth object (``max_points = 0``), 1 if nothing was predicted, else 0.

    Element-wise, so that a bootstrap scores all its resamples at once.

    >>> points_score([6, -3, 0, 0], [24, 12, 0, 0], [4, 3, 0, 2]).tolist()
    [0.25, 0.0, 1.0, 0.0]
    """
    points, max_points, predictions = (np.asarray(a, dtype=np.float64) for a in (points, max_points, predictions))
    has_truth = max_points > 0
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(
            has_truth, np.maximum(points, 0) / np.where(has_truth, max_points, 1), (predictions == 0).astype(np.float64)
        )


def _gathered(columns: Corners, index: NDArray[np.int64]) -> Corners:
    """The corners of the boxes ``index`` (the columns of every box are then left to be freed)."""
    x1, y1, x2, y2 = columns
    return x1[index], y1[index], x2[index], y2[index]


def pair_ious(a: Corners, b: Corners) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    """IoU of corner boxes ``a[:][k]`` and ``b[:][k]``, and the bound on its rounding error."""
    (ax1, ay1, ax2, ay2), (bx1, by1, bx2, by2) = a, b
    iw = np.clip(np.minimum(ax2, bx2) - np.maximum(ax1, bx1), 0, None)
    ih = np.clip(np.minimum(ay2, by2) - np.maximum(ay1, by1), 0, None)
    inter = iw * ih
    union = (ax2 - ax1) * (ay2 - ay1) + (bx2 - bx1) * (by2 - by1) - inter
    iou = np.divide(inter, union, out=np.zeros_like(inter), where=union > 0)
    return iou, iou_error_bound(iou, union)


def iou_error_bound(iou: NDArray[np.float64], union: NDArray[np.float64]) -> NDArray[np.float64]:
    """A proven bound on ``|float IoU - exact IoU|`` for coordinates in [-1e-9, 1 + 1e-9].

    With ``u = 2**-53``: each decimal is read with error at most ``1.01u``; a
    corner ``xc ± w/2`` then has error at most ``3.1u``; a side ``min - max``
    (clipped at 0) at most ``7.3u``; the intersection ``iw·ih`` (sides at most
    1.01) at most ``15.8u``; each area likewise, and the union at most ``52u``.
    With ``e = 128u`` bounding both absolute errors, ``|Î - I| <= e(1 + I)/(U - e) + u``
    (``U`` the float union). A union of ``2e`` or less gets an infinite bound: the
    exact arithmetic decides. The bound is absolute in the coordinates, so tiny
    boxes (near 1e-9 wide) always go to exact arithmetic.

    >>> float(iou_error_bound(np.array([0.5]), np.array([0.02]))[0]) < 1e-11
    True
    >>> float(iou_error_bound(np.array([0.5]), np.array([1e-18]))[0])
    inf
    """
    e = ERROR_UNITS * UNIT_ROUNDOFF
    bound = np.full_like(iou, np.inf)
    usable = union > 2 * e
    bound[usable] = e * (1 + iou[usable]) / (union[usable] - e) + UNIT_ROUNDOFF
    return bound


def exact_iou(a: Sequence[Fraction | int], b: Sequence[Fraction | int]) -> Fraction:
    """IoU of two ``(xc, yc, w, h)`` boxes in rational arithmetic: no rounding anywhere. Integers
    (the boxes scaled to one denominator, which the ratio does not depend on) keep it to integer
    products and one fraction.

    >>> exact_iou([Fraction(1, 2)] * 2 + [Fraction(1, 10)] * 2, [Fraction(1, 2), Fraction(1, 2), Fraction(1, 20), Fraction(1, 10)])
    Fraction(1, 2)
    >>> exact_iou([10, 10, 2, 2], [10, 10, 1, 2])  # the same boxes over 20
    Fraction(1, 2)
    """
    ax1, ay1, ax2, ay2 = 2 * a[0] - a[2], 2 * a[1] - a[3], 2 * a[0] + a[2], 2 * a[1] + a[3]  # doubled corners
    bx1, by1, bx2, by2 = 2 * b[0] - b[2], 2 * b[1] - b[3], 2 * b[0] + b[2], 2 * b[1] + b[3]
    inter = max(0, min(ax2, bx2) - max(ax1, bx1)) * max(0, min(ay2, by2) - max(ay1, by1))
    union = 4 * a[2] * a[3] + 4 * b[2] * b[3] - inter
    return Fraction(inter, union) if union > 0 else Fraction(0)


@dataclass(frozen=True)
class Matching:
    """``truth_of[k]``: the truth box matched to prediction ``k``, or -1."""

    truth_of: NDArray[np.int64]
    exact_photos: int  # photos whose comparisons were near 0.5 or near a tie, decided exactly
    contested: NDArray[np.int64]  # photos where a truth box is a candidate of several predictions
    candidates: tuple[NDArray[np.int64], NDArray[np.int64], NDArray[np.float64]]  # (pred, truth, IoU) pairs


def greedy_matching(pred: Boxes, truth: Boxes) -> Matching:
    """The rules' matching over all photos (see the module docstring).

    Floats decide every comparison that their error bounds separate (from 0.5
    and from competing IoUs), by a compiled pass (:mod:`podium.metrics.detection_matching`)
    where it pays (:func:`_compiled_pays`), else by NumPy (:func:`numpy_float_decisions`);
    the two give the same decisions. The other photos are redone here in exact arithmetic.
    """
    if _compiled_pays(pred, truth):
        from podium.metrics.detection_matching import float_decisions  # imported here: Numba loads only where it pays

        decided = float_decisions(pred, truth)
    else:
        decided = numpy_float_decisions(pred, truth)
    truth_of, p_c, t_c = decided.truth_of, decided.p_c, decided.t_c
    photo_c = pred.photo[p_c]
    exact_known: dict[tuple[str, str], Fraction] = {}  # exact IoUs by the two boxes' texts
    starts, ends = (
        np.searchsorted(photo_c, decided.exact_photos, side="left"),
        np.searchsorted(photo_c, decided.exact_photos, side="right"),
    )
    for start, end in zip(starts.tolist(), ends.tolist()):
        _exact_greedy(pred, truth, p_c[start:end], t_c[start:end], truth_of, exact_known)
    return Matching(truth_of, int(decided.exact_photos.size), decided.contested, (p_c, t_c, decided.iou_c))


def _compiled_pays(pred: Boxes, truth: Boxes) -> bool:
    """Whether the compiled pass decides: in a process where a kernel has run (Numba is set up), and
    in any process from ``COLD_PAIRS`` pairs of boxes of the same photo on. The NumPy passes hold
    every pair's two indices, 16 bytes each (64 MB at that count; the IoUs go in blocks), where
    the compiled pass keeps only the candidates; below it, they take less time than Numba's start (about a second; NumPy takes
    about 0.13 µs a pair). Measured in benchmarks/README.md, camera-traps."""
    if kernels_loaded():
        return True
    n_photos = photo_count(pred.photo, truth.photo)
    pairs = int(np.bincount(pred.photo, minlength=n_photos) @ np.bincount(truth.photo, minlength=n_photos))
    return pairs >= COLD_PAIRS


def numpy_float_decisions(pred: Boxes, truth: Boxes) -> FloatDecisions:
    """The float decisions by whole-array passes over every pair of a photo: in processes without Numba.

    Photos where no truth box is a candidate of two predictions need no loop: each
    prediction takes its best candidate. The contested ones run the rules' loop.
    """
    p_idx, t_idx = _same_photo_pairs(pred.photo, truth.photo)
    pred_corners, truth_corners = corners(pred.xywh), corners(truth.xywh)
    p_c, t_c, iou_c, near_c, bound_c = (
        np.concatenate(column)
        for column in zip(
            *(
                _candidates(
                    pred_corners, truth_corners, p_idx[start : start + PAIR_BLOCK], t_idx[start : start + PAIR_BLOCK]
                )
                for start in range(0, max(len(p_idx), 1), PAIR_BLOCK)
            )
        )
    )
    photo_c = pred.photo[p_c]
    order = np.lexsort((t_c, -iou_c, p_c, photo_c))  # by photo, prediction, IoU descending, earlier truth
    p_c, t_c, iou_c, near_c, bound_c, photo_c = (
        p_c[order],
        t_c[order],
        iou_c[order],
        near_c[order],
        bound_c[order],
        photo_c[order],
    )

    first = np.ones(len(p_c), dtype=bool)
    first[1:] = p_c[1:] != p_c[:-1]
    tie = np.zeros(len(p_c), dtype=bool)
    tie[1:] = ~first[1:] & (iou_c[:-1] - iou_c[1:] <= bound_c[:-1] + bound_c[1:])
    exact_photos = np.unique(photo_c[near_c | tie])
    shared = np.bincount(t_c, minlength=len(truth.photo)) > 1
    contested = np.unique(truth.photo[np.flatnonzero(shared)])

    truth_of = np.full(len(pred.photo), -1, dtype=np.int64)
    plain = first & ~np.isin(photo_c, contested) & ~np.isin(photo_c, exact_photos)
    truth_of[p_c[plain]] = t_c[plain]
    looped = np.isin(photo_c, np.setdiff1d(contested, exact_photos))
    _greedy_rounds(p_c[looped], t_c[looped], photo_c[looped], truth_of, len(truth.photo))
    return FloatDecisions(truth_of, p_c, t_c, iou_c, exact_photos, contested)


def _greedy_rounds(
    preds: NDArray[np.int64],
    truths: NDArray[np.int64],
    photos: NDArray[np.int64],
    truth_of: NDArray[np.int64],
    n_truth: int,
) -> None:
    """:func:`_greedy` on many photos at once: candidate rows by photo, prediction, best first.

    Round ``r`` takes the ``r``-th prediction of every photo together, each its best candidate
    that no earlier prediction of its photo took: a truth box belongs to one photo, so the
    predictions of one round never compete, and each photo's predictions go in the rules' order.
    As many rounds as the most predictions with candidates in one photo, each over its own rows
    (19,305 contested photos of camera-traps' 100,000: 0.05 s against 0.28 s photo by photo).

    >>> truth_of = np.full(3, -1)
    >>> _greedy_rounds(np.array([0, 0, 1, 1, 2]), np.array([5, 6, 5, 6, 7]), np.array([0, 0, 0, 0, 1]), truth_of, 8)
    >>> truth_of.tolist()
    [5, 6, 7]
    """
    if not preds.size:
        return
    new_pred = np.ones(preds.size, dtype=bool)
    new_pred[1:] = preds[1:] != preds[:-1]
    ordinal = np.cumsum(new_pred) - 1  # each row's prediction, numbered over all photos
    new_photo = np.ones(preds.size, dtype=bool)
    new_photo[1:] = photos[1:] != photos[:-1]
    rank = ordinal - np.maximum.accumulate(np.where(new_photo, ordinal, 0))  # the prediction's place in its photo
    by_round = np.argsort(rank, kind="stable")  # rows of round 0, then 1, ..., each in the rules' order
    bounds = np.searchsorted(rank[by_round], np.arange(int(rank.max()) + 2))
    taken = np.zeros(n_truth, dtype=bool)
    for start, end in zip(bounds[:-1].tolist(), bounds[1:].tolist()):
        rows = by_round[start:end]
        rows = rows[~taken[truths[rows]]]
        first = np.ones(rows.size, dtype=bool)
        first[1:] = preds[rows[1:]] != preds[rows[:-1]]
        chosen = rows[first]
        truth_of[preds[chosen]] = truths[chosen]
        taken[truths[chosen]] = True


PAIR_BLOCK = 1 << 16  # pairs a pass: its arrays (a few MB) are reused block after block, not first touched


def _candidates(
    pred_corners: Corners, truth_corners: Corners, p_idx: NDArray[np.int64], t_idx: NDArray[np.int64]
) -> tuple[NDArray[np.int64], NDArray[np.int64], NDArray[np.float64], NDArray[np.bool_], NDArray[np.float64]]:
    """The pairs ``(p_idx[k], t_idx[k])`` whose IoU is above 0.5 or too near it for floats to say:
    their predictions, truth boxes, IoUs, nearness and error bounds, in pair order.

    Done in blocks of ``PAIR_BLOCK`` pairs, the IoUs of 100,000 camera-trap photos (1.5 million
    pairs) take a fresh process 0.2 s less than in one pass: every pass's arrays are new memory,
    whose pages the system fills with zeros at first touch."""
    iou, bound = pair_ious(_gathered(pred_corners, p_idx), _gathered(truth_corners, t_idx))
    near = np.abs(iou - 0.5) <= bound
    candidate = (iou > 0.5 + bound) | near
    return p_idx[candidate], t_idx[candidate], iou[candidate], near[candidate], bound[candidate]


def _same_photo_pairs(
    pred_photo: NDArray[np.int64], truth_photo: NDArray[np.int64]
) -> tuple[NDArray[np.int64], NDArray[np.int64]]:
    """Every (prediction, truth box) pair of the same photo."""
    t_order, t_start = photo_groups(truth_photo, photo_count(pred_photo, truth_photo))
    per_pred = np.diff(t_start)[pred_photo]
    p_idx = np.repeat(np.arange(len(pred_photo)), per_pred)
    offsets = np.arange(len(p_idx)) - np.repeat(np.cumsum(per_pred) - per_pred, per_pred)
    t_idx = t_order[np.repeat(t_start[:-1][pred_photo], per_pred) + offsets]
    return p_idx, t_idx


def _greedy(preds: list[int], truths: list[int], truth_of: NDArray[np.int64]) -> None:
    """The rules' loop for one photo; each prediction's candidates come best first."""
    taken: set[int] = set()
    done: set[int] = set()
    for p, t in zip(preds, truths):
        if p not in done and t not in taken:
            truth_of[p] = t
            taken.add(t)
            done.add(p)


def _exact_greedy(
    pred: Boxes,
    truth: Boxes,
    preds: NDArray[np.int64],
    truths: NDArray[np.int64],
    truth_of: NDArray[np.int64],
    known: dict[tuple[str, str], Fraction],
) -> None:
    """The rules' loop for one photo with exact IoUs: candidates re-decided, ties to the earlier truth.

    ``known`` holds the exact IoUs already computed, by the two boxes' texts: boxes written alike
    (duplicates, the usual cause of exact ties) are computed once. It is emptied when it reaches
    ``KNOWN_IOUS``, so that boxes all written differently cannot grow it without end."""
    half = Fraction(1, 2)
    ranked: list[tuple[int, Fraction, int]] = []
    if len(known) >= KNOWN_IOUS:
        known.clear()
    for p, t in zip(preds.tolist(), truths.tolist()):
        key = (pred.texts[p], truth.texts[t])
        value = known.get(key)
        if value is None:
            (a, a_over), (b, b_over) = pred.exact(p), truth.exact(t)
            over = lcm(a_over, b_over)
            value = known[key] = exact_iou([v * (over // a_over) for v in a], [v * (over // b_over) for v in b])
        if value > half:
            ranked.append((p, -value, t))
    ranked.sort()
    _greedy([p for p, _, _ in ranked], [t for _, _, t in ranked], truth_of)


def count_points(pred: Boxes, truth: Boxes, truth_of: NDArray[np.int64]) -> PointCounts:
    """The totals of a matching (``truth_of[k]``: the truth box of prediction ``k``, or -1)."""
    matched = truth_of >= 0
    right = int(np.count_nonzero(pred.cls[matched] == truth.cls[truth_of[matched]]))
    n_matched = int(np.count_nonzero(matched))
    return PointCounts(
        matched=n_matched,
        false_detections=len(truth_of) - n_matched,
        missed=len(truth.photo) - n_matched,
        class_right=right,
        class_wrong=n_matched - right,
        truth_objects=len(truth.photo),
        predictions=len(pred.photo),
    )


def count_points_per_photo(pred: Boxes, truth: Boxes, truth_of: NDArray[np.int64], n_photos: int) -> PointCounts:
    """The totals of each photo ``0..n_photos-1``, as arrays: their sum is :func:`count_points`."""
    matched = truth_of >= 0
    right = np.zeros(len(truth_of), dtype=bool)
    right[matched] = pred.cls[matched] == truth.cls[truth_of[matched]]
    n_matched = np.bincount(pred.photo[matched], minlength=n_photos)
    n_right = np.bincount(pred.photo[right], minlength=n_photos)
    n_truth = np.bincount(truth.photo, minlength=n_photos)
    n_pred = np.bincount(pred.photo, minlength=n_photos)
    return PointCounts(
        matched=n_matched,
        false_detections=n_pred - n_matched,
        missed=n_truth - n_matched,
        class_right=n_right,
        class_wrong=n_matched - n_right,
        truth_objects=n_truth,
        predictions=n_pred,
    )


# --- one-shot functions, scikit-learn style ---------------------------------------------------


def point_counts(truth: ArrayLike, pred: ArrayLike) -> PointCounts:
    """The rules' matching and counts of two box lists, rows ``(photo, xc, yc, w, h, class)`` in file order.

    Photos are integers; boxes are normalized. A prediction matches only at
    ``IoU > 0.5``, strictly, decided exactly:

    >>> truth = [(0, 0.5, 0.5, 0.2, 0.2, 1)]
    >>> point_counts(truth, [(0, 0.5, 0.5, 0.2, 0.2, 1)]).points  # matched, right class: +1 +5
    6
    >>> half = point_counts(truth, [(0, 0.5, 0.5, 0.1, 0.2, 1)])  # IoU exactly 0.5: no match
    >>> half.matched, half.false_detections, half.missed, half.points
    (0, 1, 1, -2)
    """
    pred_boxes, truth_boxes = Boxes.from_rows(pred), Boxes.from_rows(truth)
    return count_points(pred_boxes, truth_boxes, greedy_matching(pred_boxes, truth_boxes).truth_of)


def camera_trap_score(truth: ArrayLike, pred: ArrayLike) -> float:
    """``max(0, points) / (6 · truth objects)`` of :func:`point_counts`; without truth objects 1 if nothing was predicted, else 0.

    >>> camera_trap_score([(0, 0.5, 0.5, 0.2, 0.2, 1)], [(0, 0.5, 0.5, 0.2, 0.2, 0)])  # matched, wrong class: (1 - 5) < 0
    0.0
    >>> camera_trap_score([(0, 0.5, 0.5, 0.2, 0.2, 1), (1, 0.3, 0.3, 0.1, 0.1, 0)], [(0, 0.5, 0.5, 0.2, 0.2, 1)])  # (6 - 1) / 12
    0.4166666666666667
    >>> camera_trap_score([], []), camera_trap_score([], [(0, 0.5, 0.5, 0.2, 0.2, 1)])  # empty sides
    (1.0, 0.0)
    """
    return point_counts(truth, pred).score
