"""The float decisions of the camera-trap matching, compiled: photo by photo, in one pass over the pairs.

:func:`podium.metrics.detection_points.greedy_matching` first decides with floats what floats can
decide, then redoes in rational arithmetic the photos they cannot. This module is the first step
for processes that have Numba loaded (a service worker, or a table large enough for the compiled
scan) and for matchings of many pairs of boxes; the NumPy version in :mod:`~podium.metrics.detection_points` is the same step for the
others. Both give the same :class:`~podium.metrics.detection_boxes.FloatDecisions`, bit for bit
(the tests compare them on random and adversarial boxes): every pair's IoU and error bound come
from the same corners by the same operations in the same order, and the candidates of each
prediction are ranked the same way (IoU descending, then the earlier truth row).

Per photo, for each prediction in file order: its candidates are the truth boxes of the photo
with ``IoU > 0.5 + bound`` or ``|IoU - 0.5| <= bound`` (near one half), ranked. The photo needs
exact arithmetic when a candidate is near one half or two consecutive candidates of a prediction
are within their bounds of each other (a possible tie); it is *contested* when a truth box is a
candidate of two predictions. Every other photo is decided here by the rules' loop: each
prediction takes its best candidate not yet taken. Only the candidates are stored, never every
pair, so a photo of many boxes costs its pairs' time but not their memory.

The kernels check their preconditions at entry (:func:`_check_groups`: the photos' groups index
boxes that exist) and before each candidate is stored (room for it), never in the loop over
pairs; :func:`_candidate`, called per pair, is given only indices those checks allow.
"""

from __future__ import annotations

import numpy as np
from numpy.typing import NDArray

from podium.accel.jit import compiled
from podium.metrics.detection_boxes import (
    ERROR_UNITS,
    UNIT_ROUNDOFF,
    Boxes,
    FloatDecisions,
    corners,
    photo_count,
    photo_groups,
)

SORTED_BY_INSERTION = 16  # a prediction's candidates up to this many are ranked by insertion, more by a merge sort


def float_decisions(pred: Boxes, truth: Boxes) -> FloatDecisions:
    """The decisions of :func:`podium.metrics.detection_points.numpy_float_decisions`, compiled."""
    n_photos = photo_count(pred.photo, truth.photo)
    p_order, p_start = photo_groups(pred.photo, n_photos)
    t_order, t_start = photo_groups(truth.photo, n_photos)
    p_corners, t_corners = np.stack(corners(pred.xywh)), np.stack(corners(truth.xywh))
    n_candidates = _count_candidates(p_order, p_start, p_corners, t_order, t_start, t_corners)
    truth_of = np.full(len(pred.photo), -1, np.int64)
    p_c, t_c, iou_c = (
        np.empty(n_candidates, np.int64),
        np.empty(n_candidates, np.int64),
        np.empty(n_candidates, np.float64),
    )
    exact, contested = np.zeros(n_photos, np.bool_), np.zeros(n_photos, np.bool_)
    _decide(p_order, p_start, p_corners, t_order, t_start, t_corners, truth_of, p_c, t_c, iou_c, exact, contested)
    return FloatDecisions(truth_of, p_c, t_c, iou_c, np.flatnonzero(exact), np.flatnonzero(contested))


@compiled
def _candidate(
    a: NDArray[np.float64], i: int, b: NDArray[np.float64], j: int
) -> tuple[bool, bool, float, float]:  # pragma: no cover - compiled
    """Whether corner boxes ``a[:, i]`` and ``b[:, j]`` are candidates, whether their IoU is near one
    half, the IoU and the bound on its rounding error, as :func:`~podium.metrics.detection_points.pair_ious`
    and :func:`~podium.metrics.detection_points.numpy_float_decisions` compute them. Precondition, its
    callers': ``a`` and ``b`` of 4 rows, ``i`` and ``j`` columns of them (:func:`_check_groups`)."""
    iw = max(min(a[2, i], b[2, j]) - max(a[0, i], b[0, j]), 0.0)
    ih = max(min(a[3, i], b[3, j]) - max(a[1, i], b[1, j]), 0.0)
    inter = iw * ih
    union = (a[2, i] - a[0, i]) * (a[3, i] - a[1, i]) + (b[2, j] - b[0, j]) * (b[3, j] - b[1, j]) - inter
    iou = inter / union if union > 0 else 0.0
    e = ERROR_UNITS * UNIT_ROUNDOFF
    bound = e * (1 + iou) / (union - e) + UNIT_ROUNDOFF if union > 2 * e else np.inf
    near = abs(iou - 0.5) <= bound
    return iou > 0.5 + bound or near, near, iou, bound


@compiled
def _count_candidates(
    p_order: NDArray[np.int64],
    p_start: NDArray[np.int64],
    p_corners: NDArray[np.float64],
    t_order: NDArray[np.int64],
    t_start: NDArray[np.int64],
    t_corners: NDArray[np.float64],
) -> int:  # pragma: no cover - compiled
    """How many (prediction, truth box) pairs of a photo are candidates, to size the candidate arrays:
    every pair is computed twice, here and in :func:`_decide` (11 of 37 ms on the benchmark's 1.4
    million pairs), so that no pair is ever stored. Checked: :func:`_check_groups` on both sides."""
    _check_groups(p_order, p_start, p_corners, t_start.size)
    _check_groups(t_order, t_start, t_corners, p_start.size)
    count = 0
    for photo in range(p_start.size - 1):
        for p in p_order[p_start[photo] : p_start[photo + 1]]:
            for t in t_order[t_start[photo] : t_start[photo + 1]]:
                count += _candidate(p_corners, p, t_corners, t)[0]
    return count


@compiled
def _rank(
    t_c: NDArray[np.int64], iou_c: NDArray[np.float64], bound_c: NDArray[np.float64], first: int, end: int
) -> None:  # pragma: no cover - compiled
    """Order ``first:end`` by IoU descending, keeping the order (earlier truth first) of equal IoUs.
    Checked: the arrays of one size and ``0 <= first <= end <=`` it."""
    if iou_c.size != t_c.size or bound_c.size != t_c.size or first < 0 or end < first or end > t_c.size:
        raise ValueError("_rank: the candidates' span is outside their arrays")
    if end - first > SORTED_BY_INSERTION:
        order = np.argsort(-iou_c[first:end], kind="mergesort") + first  # stable
        t_c[first:end], iou_c[first:end], bound_c[first:end] = t_c[order], iou_c[order], bound_c[order]
        return
    for k in range(first + 1, end):
        t, iou, bound = t_c[k], iou_c[k], bound_c[k]
        j = k
        while j > first and iou_c[j - 1] < iou:
            t_c[j], iou_c[j], bound_c[j] = t_c[j - 1], iou_c[j - 1], bound_c[j - 1]
            j -= 1
        t_c[j], iou_c[j], bound_c[j] = t, iou, bound


@compiled
def _decide(
    p_order: NDArray[np.int64],
    p_start: NDArray[np.int64],
    p_corners: NDArray[np.float64],
    t_order: NDArray[np.int64],
    t_start: NDArray[np.int64],
    t_corners: NDArray[np.float64],
    truth_of: NDArray[np.int64],
    p_c: NDArray[np.int64],
    t_c: NDArray[np.int64],
    iou_c: NDArray[np.float64],
    exact: NDArray[np.bool_],
    contested: NDArray[np.bool_],
) -> None:  # pragma: no cover - compiled
    """Fill the candidates in order (photo, prediction, rank), flag the photos, and match the photos
    floats decide (see the module docstring).

    Checked: :func:`_check_groups` on both sides, one flag per photo, one match per prediction, the
    candidate arrays of one size, and room for each candidate before it is stored."""
    _check_groups(p_order, p_start, p_corners, t_start.size)
    _check_groups(t_order, t_start, t_corners, p_start.size)
    n_photos = p_start.size - 1
    if (
        exact.size != n_photos
        or contested.size != n_photos
        or truth_of.size != p_corners.shape[1]
        or t_c.size != p_c.size
        or iou_c.size != p_c.size
    ):
        raise ValueError("_decide: the output arrays disagree in size")
    bound_c = np.empty(p_c.size, np.float64)
    uses = np.zeros(t_order.size, np.int64)  # per truth box: of how many predictions it is a candidate
    taken = np.zeros(t_order.size, np.bool_)
    k = 0
    for photo in range(p_start.size - 1):
        photo_first = k
        for p in p_order[p_start[photo] : p_start[photo + 1]]:
            first = k
            for t in t_order[t_start[photo] : t_start[photo + 1]]:
                candidate, near, iou, bound = _candidate(p_corners, p, t_corners, t)
                if candidate:
                    if k >= p_c.size:
                        raise ValueError("_decide: more candidates than the arrays hold")
                    p_c[k], t_c[k], iou_c[k], bound_c[k] = p, t, iou, bound
                    exact[photo] |= near
                    uses[t] += 1
                    contested[photo] |= uses[t] > 1
                    k += 1
            _rank(t_c, iou_c, bound_c, first, k)
            for j in range(first + 1, k):
                exact[photo] |= iou_c[j - 1] - iou_c[j] <= bound_c[j - 1] + bound_c[j]
        if exact[photo]:
            continue
        for j in range(photo_first, k):  # by prediction, best first: the rules' loop (a matched prediction is done)
            if truth_of[p_c[j]] < 0 and not taken[t_c[j]]:
                truth_of[p_c[j]] = t_c[j]
                taken[t_c[j]] = True


@compiled
def _check_groups(
    order: NDArray[np.int64], start: NDArray[np.int64], corners_: NDArray[np.float64], other_starts: int
) -> None:  # pragma: no cover - compiled
    """``ValueError`` unless ``corners_`` has 4 rows, ``start`` is as long as the other side's
    (one entry per photo, and one more) and rises from 0 to ``order.size``, and ``order`` names
    columns of ``corners_`` (:func:`~podium.metrics.detection_boxes.photo_groups` builds them so)."""
    if (
        corners_.shape[0] != 4
        or start.size < 1
        or start.size != other_starts
        or start[0] != 0
        or start[start.size - 1] != order.size
    ):
        raise ValueError("_check_groups: the photos' groups and the boxes disagree")
    for photo in range(start.size - 1):
        if start[photo + 1] < start[photo]:
            raise ValueError("_check_groups: the photos' groups are not in order")
    if order.size and (order.min() < 0 or order.max() >= corners_.shape[1]):
        raise ValueError("_check_groups: a group names a box that does not exist")


def compile_kernels() -> None:
    """Compile the kernels (or load them from Numba's cache) on two photos: one a tie, one plain."""
    boxes = Boxes.from_rows([(0, 0.5, 0.5, 0.2, 0.2, 1), (1, 0.5, 0.5, 0.2, 0.2, 1), (1, 0.3, 0.3, 0.2, 0.2, 0)])
    float_decisions(boxes, boxes)
