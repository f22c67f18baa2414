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

``IoU > 0.5`` is decided exactly: ``IoU > 1/2 ⇔ 3·|A ∩ B| > |A| + |B|``. The
float IoU decides when it is farther than ``NEAR`` from 0.5; otherwise (and to
break near ties) the boxes' decimal text is compared in rational arithmetic.
"""

from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction
from typing import Sequence

import numpy as np
from numpy.typing import NDArray

NEAR = 1e-9


@dataclass(frozen=True)
class Boxes:
    """Boxes of a table, in file order: photo index, (xc, yc, w, h), class, and exact text."""

    photo: NDArray[np.int64]
    xywh: NDArray[np.float64]  # (n, 4)
    cls: NDArray[np.int8]
    text: Sequence[tuple[str, str, str, str]]  # decimal text of xc, yc, w, h

    def exact(self, k: int) -> tuple[Fraction, Fraction, Fraction, Fraction]:
        return tuple(Fraction(t) for t in self.text[k])  # type: ignore[return-value]


@dataclass(frozen=True)
class PointCounts:
    """Mergeable totals."""

    matched: int = 0
    false_detections: int = 0  # unmatched predictions
    missed: int = 0  # unmatched truth boxes
    class_right: int = 0
    class_wrong: int = 0
    truth_objects: int = 0
    predictions: int = 0

    def merge(self, other: PointCounts) -> PointCounts:
        return PointCounts(*(a + b for a, b in zip(self.__dict__.values(), other.__dict__.values())))

    @property
    def detection_points(self) -> int:
        return self.matched - self.false_detections - self.missed

    @property
    def classification_points(self) -> int:
        return 5 * (self.class_right - self.class_wrong)

    @property
    def points(self) -> int:
        return self.detection_points + self.classification_points

    @property
    def max_points(self) -> int:
        return 6 * self.truth_objects

    @property
    def score(self) -> float:
        if not self.truth_objects:
            return 1.0 if not self.predictions else 0.0
        return max(0, self.points) / self.max_points


def _corners(xywh: NDArray[np.float64]) -> NDArray[np.float64]:
    xc, yc, w, h = xywh.T
    return np.stack([xc - w / 2, yc - h / 2, xc + w / 2, yc + h / 2], axis=1)


def _iou(a: NDArray[np.float64], b: NDArray[np.float64]) -> NDArray[np.float64]:
    """IoU of corner boxes ``a[k]`` and ``b[k]``."""
    iw = np.clip(np.minimum(a[:, 2], b[:, 2]) - np.maximum(a[:, 0], b[:, 0]), 0, None)
    ih = np.clip(np.minimum(a[:, 3], b[:, 3]) - np.maximum(a[:, 1], b[:, 1]), 0, None)
    inter = iw * ih
    union = (a[:, 2] - a[:, 0]) * (a[:, 3] - a[:, 1]) + (b[:, 2] - b[:, 0]) * (b[:, 3] - b[:, 1]) - inter
    return np.divide(inter, union, out=np.zeros_like(inter), where=union > 0)


def exact_iou(a: Sequence[Fraction], b: Sequence[Fraction]) -> Fraction:
    """IoU of two ``(xc, yc, w, h)`` boxes in rational arithmetic."""
    ax1, ay1, ax2, ay2 = a[0] - a[2] / 2, a[1] - a[3] / 2, a[0] + a[2] / 2, a[1] + a[3] / 2
    bx1, by1, bx2, by2 = b[0] - b[2] / 2, b[1] - b[3] / 2, b[0] + b[2] / 2, b[1] + b[3] / 2
    inter = max(Fraction(0), min(ax2, bx2) - max(ax1, bx1)) * max(Fraction(0), min(ay2, by2) - max(ay1, by1))
    union = a[2] * a[3] + b[2] * b[3] - inter
    return inter / union if union > 0 else Fraction(0)


@dataclass(frozen=True)
class Matching:
    """``truth_of[k]``: the truth box matched to prediction ``k``, or -1."""

    truth_of: NDArray[np.int64]
    exact_photos: int  # photos decided in rational arithmetic
    contested: NDArray[np.int64]  # photos where a box has several candidates: the order may matter


def greedy_matching(pred: Boxes, truth: Boxes) -> Matching:
    """The rules' matching over all photos (see the module docstring)."""
    p_idx, t_idx = _same_photo_pairs(pred.photo, truth.photo)
    iou = _iou(_corners(pred.xywh[p_idx]), _corners(truth.xywh[t_idx]))
    sure = iou > 0.5 + NEAR
    near = np.abs(iou - 0.5) <= NEAR
    candidate = sure | near
    p_c, t_c, iou_c, near_c = p_idx[candidate], t_idx[candidate], iou[candidate], near[candidate]

    # A photo is simple when no truth box is a candidate of two predictions and nothing is near
    # 0.5 or near a tie: there greedy order cannot matter and floats decide.
    hard_photo = np.zeros(int(max(pred.photo.max(initial=-1), truth.photo.max(initial=-1))) + 1, dtype=bool)
    hard_photo[pred.photo[p_c[near_c]]] = True
    shared = np.bincount(t_c, minlength=len(truth.photo)) > 1
    hard_photo[truth.photo[np.flatnonzero(shared)]] = True
    order = np.lexsort((t_c, -iou_c, p_c))  # per prediction: IoU descending, earlier truth first
    p_s, t_s, iou_s = p_c[order], t_c[order], iou_c[order]
    first = np.ones(len(p_s), dtype=bool)
    first[1:] = p_s[1:] != p_s[:-1]
    runner_up = np.zeros(len(p_s), dtype=bool)
    runner_up[1:] = first[:-1] & ~first[1:] & (iou_s[:-1] - iou_s[1:] <= NEAR)
    hard_photo[pred.photo[p_s[runner_up]]] = True

    truth_of = np.full(len(pred.photo), -1, dtype=np.int64)
    easy = first & ~hard_photo[pred.photo[p_s]]
    truth_of[p_s[easy]] = t_s[easy]
    hard = np.flatnonzero(hard_photo)
    for photo in hard:
        _exact_greedy(photo, pred, truth, truth_of)
    several = np.bincount(p_c, minlength=len(pred.photo)) > 1
    contested = np.union1d(pred.photo[np.flatnonzero(several)], truth.photo[np.flatnonzero(shared)])
    return Matching(truth_of, int(hard.size), np.union1d(contested, hard))


def _same_photo_pairs(pred_photo: NDArray[np.int64], truth_photo: NDArray[np.int64]) -> tuple[NDArray[np.int64], NDArray[np.int64]]:
    """Every (prediction, truth box) pair of the same photo, predictions in file order."""
    t_order = np.argsort(truth_photo, kind="stable")
    n_photos = int(max(pred_photo.max(initial=-1), truth_photo.max(initial=-1))) + 1
    t_count = np.bincount(truth_photo, minlength=n_photos)
    t_start = np.concatenate([[0], np.cumsum(t_count)[:-1]])
    per_pred = t_count[pred_photo]
    p_idx = np.repeat(np.arange(len(pred_photo)), per_pred)
    offsets = np.arange(len(p_idx)) - np.repeat(np.cumsum(per_pred) - per_pred, per_pred)
    t_idx = t_order[np.repeat(t_start[pred_photo], per_pred) + offsets]
    return p_idx, t_idx


def _exact_greedy(photo: int, pred: Boxes, truth: Boxes, truth_of: NDArray[np.int64]) -> None:
    """The rules' greedy loop for one photo, every comparison in rational arithmetic."""
    preds = np.flatnonzero(pred.photo == photo)
    truths = np.flatnonzero(truth.photo == photo)
    exact_truth = {int(t): truth.exact(int(t)) for t in truths}
    taken: set[int] = set()
    for p in preds.tolist():
        box = pred.exact(p)
        best, best_iou = -1, Fraction(1, 2)
        for t in truths.tolist():  # file order: a later truth must be strictly better
            if t in taken:
                continue
            value = exact_iou(box, exact_truth[t])
            if value > best_iou:
                best, best_iou = t, value
        truth_of[p] = best
        if best >= 0:
            taken.add(best)


def count_points(pred: Boxes, truth: Boxes, truth_of: NDArray[np.int64]) -> PointCounts:
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
