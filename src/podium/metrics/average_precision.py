"""Average precision of ranked items, one class per column (ILSVRC 2012 Task 3).

PASCAL VOC 2010+ all-points AP (the later ILSVRC kits' ``VOCap.m``), the
default: rank the items by confidence, descending, ties keeping their order;
precision ``P_n = TP_n / n`` at each rank, made monotone from the right (the
envelope ``P̂_n = max_{m >= n} P_m``); AP is the area under the stepwise
precision-recall curve, ``Σ_n (R_n - R_{n-1}) P̂_n``. Recall rises by ``1/N+`` at
each positive and nowhere else, so AP is the mean of the envelope at the ranks of
the positives.

scikit-learn's ``average_precision_score``, for comparison: ``Σ (R_n - R_{n-1}) P_n``
over distinct confidences (tied items form one step), without the envelope.

A class without positives has no AP (NaN): 0/0.

References: M. Everingham et al., *The PASCAL Visual Object Classes (VOC) Challenge*,
IJCV 88 (2010), section 4.2 and the 2010 development kit; scikit-learn,
``sklearn.metrics.average_precision_score``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

import numpy as np
from numpy.typing import ArrayLike, NDArray

from podium.metrics.state import Statistics, concatenated

Method = Literal["voc", "sklearn"]


@dataclass(frozen=True)
class RankedBoxes(Statistics):
    """The state of average precision: each item's line, true class and confidences per class.

    Merging concatenates; ties of confidence keep line order, so AP sorts by line
    first and never depends on the order in which parts were merged.
    """

    lines: NDArray[np.int64] = concatenated()
    truth: NDArray[np.int64] = concatenated()
    scores: NDArray[np.float64] = concatenated()  # (items, classes)

    def per_class(self, classes: NDArray[np.int64], method: Method = "voc") -> NDArray[np.float64]:
        """The AP of each class of ``classes`` (the columns of :attr:`scores`), NaN for a class without positives."""
        order = np.argsort(self.lines)  # lines are unique: any sort gives the same order
        positive = self.truth[order][:, None] == classes[None, :]
        average = voc_average_precision if method == "voc" else sklearn_average_precision
        return average(positive, self.scores[order])


def average_precision_score(y_true: ArrayLike, y_score: ArrayLike, *, method: Method = "voc") -> float:
    """The AP of one class: ``y_true`` says which items are positives, ``y_score`` their confidences.

    >>> average_precision_score([1, 0, 1], [0.9, 0.8, 0.7])  # ranks 1 and 3: (1 + 2/3) / 2
    0.8333333333333333
    >>> average_precision_score([1, 0, 1], [0.5, 0.5, 0.5])  # ties keep item order under VOC ...
    0.8333333333333333
    >>> average_precision_score([1, 0, 1], [0.5, 0.5, 0.5], method="sklearn")  # ... and form one step in scikit-learn
    0.6666666666666666
    >>> average_precision_score([0, 1, 0, 1], [0.9, 0.8, 0.7, 0.6])  # the envelope lifts rank 2 to rank 4's 1/2
    0.5
    >>> average_precision_score([0, 0], [0.4, 0.3])  # no positive: undefined
    nan
    >>> average_precision_score([], [])
    nan
    """
    truth = np.asarray(y_true, dtype=bool).reshape(-1, 1)
    scores = np.asarray(y_score, dtype=np.float64).reshape(-1, 1)
    if truth.shape != scores.shape:
        raise ValueError(f"y_true has {truth.shape[0]} items and y_score {scores.shape[0]}")
    average = voc_average_precision if method == "voc" else sklearn_average_precision
    return float(average(truth, scores)[0])


def descending_order(rows: NDArray[np.float64]) -> NDArray[np.int64]:
    """For each row, the indices that sort it by descending value, equal values in index order.

    This is ``np.argsort(-rows, axis=1, kind="stable")``, five times faster
    (120 rows of 10,000: 14 ms against 70 ms): an unstable sort (NumPy's SIMD
    quicksort), then, in the rows that hold equal values, every run of equal
    values put back in index order by one integer sort of ``run << bits | index``
    (runs keep their places, indices sort within them). NaNs count as equal to
    each other, and -0.0 as equal to 0.0, as the stable sort has them.

    >>> descending_order(np.array([[0.5, 0.9, 0.5, 0.5, 0.1]]))
    array([[1, 0, 2, 3, 4]])
    """
    ranked = -np.ascontiguousarray(rows, dtype=np.float64)
    order = np.argsort(ranked, axis=1)
    n = ranked.shape[1]
    if n < 2:
        return order
    values = np.take_along_axis(ranked, order, axis=1)
    tied = (values[:, 1:] == values[:, :-1]) | (np.isnan(values[:, 1:]) & np.isnan(values[:, :-1]))
    with_ties = np.flatnonzero(tied.any(axis=1))
    if with_ties.size:
        every = with_ties.size == len(ranked)  # then no copies of the rows
        runs = np.zeros((with_ties.size, n), dtype=np.int64)
        np.cumsum(~(tied if every else tied[with_ties]), axis=1, out=runs[:, 1:])
        bits = (n - 1).bit_length()
        runs <<= bits
        runs |= order if every else order[with_ties]
        runs.sort(axis=1)
        runs &= (1 << bits) - 1
        if every:
            return runs
        order[with_ties] = runs
    return order


def voc_average_precision(positive: NDArray[np.bool_], scores: NDArray[np.float64]) -> NDArray[np.float64]:
    """VOC 2010+ all-points AP of every column: ``positive`` and ``scores`` are (items, classes).

    A class without positives gets NaN. All classes are ranked at once, row by row.
    """
    order = descending_order(scores.T)  # one row per class; ties keep line order
    hits = np.take_along_axis(np.ascontiguousarray(positive.T), order, axis=1)
    tp = np.cumsum(hits, axis=1, dtype=np.float64)
    precision = tp / np.arange(1, hits.shape[1] + 1)
    envelope = np.maximum.accumulate(precision[:, ::-1], axis=1)[:, ::-1]
    n_pos = hits.sum(axis=1)
    # Recall rises by 1/n_pos at each positive and nowhere else, so VOCap.m's sum over recall
    # steps is the mean of the envelope over the ranks of the positives.
    with np.errstate(invalid="ignore", divide="ignore"):
        ap = np.where(hits, envelope, 0.0).sum(axis=1) / n_pos
    ap[n_pos == 0] = np.nan
    return ap


def sklearn_average_precision(positive: NDArray[np.bool_], scores: NDArray[np.float64]) -> NDArray[np.float64]:
    """scikit-learn's ``average_precision_score`` per column: ``Σ (R_n - R_{n-1}) P_n`` over distinct confidences; NaN without positives."""
    out = np.full(positive.shape[1], np.nan)
    for c in range(positive.shape[1]):
        y, s = positive[:, c], scores[:, c]
        if not y.any():
            continue
        order = np.argsort(-s)  # the order within tied scores does not matter: a tie is one step
        y, s = y[order], s[order]
        last = np.r_[np.flatnonzero(np.diff(s)), len(s) - 1]  # the last item of each group of tied scores
        tp = np.cumsum(y)[last]
        precision = tp / (last + 1)
        recall = tp / y.sum()
        out[c] = float(np.sum(np.diff(np.r_[0.0, recall]) * precision))
    return out
