"""Fuzzy (min/max) Jaccard index over a region of interest, pooled over images.

For one class, a truth mask ``G`` with values in {0, 100} and a prediction ``P``
holding integer probabilities 0..100, over the pixels ``x`` of the region of
interest (ROI) of every image ``k`` of the test set::

    D = sum_k sum_{x in ROI_k} min(P_k(x), G_k(x))
        ---------------------------------------------
        sum_k sum_{x in ROI_k} max(P_k(x), G_k(x))

The score of a submission is the mean of ``D`` over the classes. Because G is
0 or 100 and P never exceeds 100, ``min(P, G) = P * [G = 100]`` and
``max(P, G) = 100 * [G = 100] + P * [G = 0]``, so each image contributes three
integer sums per class: the number of class pixels, the sum of P over them and
the sum of P over the ROI. The statistics are exact integers: merging them in
any order, on any number of workers, gives the same pooled score.

Convention: a class whose denominator is 0 over the whole set (no truth pixel
and no predicted probability in the ROI) has no defined ``D``; it is reported
as NaN by :meth:`FuzzyJaccardStats.compute` and left out of the mean.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from numpy.typing import ArrayLike, NDArray

from podium.accel.jit import kernels_loaded
from podium.metrics.state import Statistics, summed

MAX_PROBABILITY = 100


@dataclass(frozen=True)
class FuzzyJaccardStats(Statistics):
    """Per-class sums ``intersection = Σ min(P, G)`` and ``union = Σ max(P, G)``."""

    intersection: tuple[int, ...] = summed(())
    union: tuple[int, ...] = summed(())

    @classmethod
    def zeros(cls, n_classes: int) -> FuzzyJaccardStats:
        return cls((0,) * n_classes, (0,) * n_classes)

    @classmethod
    def from_masks(
        cls,
        truth: Sequence[NDArray[np.bool_]],
        predictions: Sequence[NDArray[np.uint8] | None],
        roi: NDArray[np.bool_] | None = None,
    ) -> FuzzyJaccardStats:
        """Statistics of one image whose truth is one boolean mask per class.

        ``truth[c]`` is True where G = 100 for class ``c``; ``predictions[c]`` is
        a uint8 array of values 0..100 (not checked here: readers reject larger
        values), or ``None`` for an image the submission did not process, which
        counts as all zeros; ``roi`` is the boolean region of interest, ``None``
        meaning every pixel. Truth pixels outside the ROI are ignored.
        """
        if _compiled_fits([*truth, *predictions], roi):
            return cls._compiled([(g, 1) for g in truth], predictions, roi)
        sums = _ClassSums(roi)
        for g, p in zip(truth, predictions, strict=True):
            sums.add(g, p)
        return cls(tuple(sums.intersection), tuple(sums.union))

    @classmethod
    def from_labels(
        cls,
        labels: NDArray[np.integer],
        predictions: Sequence[NDArray[np.uint8] | None],
        roi: NDArray[np.bool_] | None = None,
    ) -> FuzzyJaccardStats:
        """Statistics of one image whose truth is a label image: class ``c`` is label ``c + 1``.

        Same as :meth:`from_masks` with ``truth[c] = labels == c + 1``, without
        holding every mask in memory at once.
        """
        if _compiled_fits([labels, *predictions], roi):
            return cls._compiled([(labels, c + 1) for c in range(len(predictions))], predictions, roi)
        sums = _ClassSums(roi)
        mask = np.empty(labels.shape, dtype=bool)
        for c, p in enumerate(predictions):
            np.equal(labels, c + 1, out=mask)
            sums.add(mask, p)
        return cls(tuple(sums.intersection), tuple(sums.union))

    @classmethod
    def _compiled(
        cls,
        truth: Sequence[tuple[NDArray[np.integer] | NDArray[np.bool_], int]],
        predictions: Sequence[NDArray[np.uint8] | None],
        roi: NDArray[np.bool_] | None,
    ) -> FuzzyJaccardStats:
        """The statistics in one compiled pass per class (:mod:`~podium.metrics.fuzzy_jaccard_sums`);
        ``truth[c]`` is an array and the value marking class ``c`` in it."""
        from podium.metrics.fuzzy_jaccard_sums import class_sums

        intersection: list[int] = []
        union: list[int] = []
        for (array, value), p in zip(truth, predictions, strict=True):
            if p is None:  # all zeros: only the truth pixels count
                inside = array == value if roi is None else (array == value) & roi
                intersection.append(0)
                union.append(MAX_PROBABILITY * int(np.count_nonzero(inside)))
                continue
            n, sum_in, sum_roi = class_sums(array, value, p, roi)
            intersection.append(sum_in)
            union.append(MAX_PROBABILITY * n + sum_roi - sum_in)
        return cls(tuple(intersection), tuple(union))

    def compute(self) -> NDArray[np.float64]:
        """Per-class ``D``; NaN for a class whose union is 0."""
        return np.array(
            [i / u if u else np.nan for i, u in zip(self.intersection, self.union)],
            dtype=np.float64,
        )


def _compiled_fits(arrays: Sequence[NDArray[np.generic] | None], roi: NDArray[np.bool_] | None) -> bool:
    """Whether to take the compiled pass: a kernel is loaded in this process (else loading Numba
    would cost more than the pass saves) and the arrays have the types it is shipped compiled for
    (the readers': uint8 or uint16 labels, boolean masks and ROI, uint8 predictions)."""
    return (
        kernels_loaded()
        and all(a is None or a.dtype in _COMPILED_TYPES for a in arrays)
        and (roi is None or roi.dtype == np.bool_)
    )


_COMPILED_TYPES = (np.dtype(np.uint8), np.dtype(np.uint16), np.dtype(np.bool_))


class _ClassSums:
    """Accumulates ``Σ min(P, G)`` and ``Σ max(P, G)`` class by class over one image."""

    def __init__(self, roi: NDArray[np.bool_] | None) -> None:
        self.roi = roi
        self.buffer: NDArray[np.uint8] | None = None
        self.inside: NDArray[np.bool_] | None = None
        self.intersection: list[int] = []
        self.union: list[int] = []

    def add(self, g: NDArray[np.bool_], p: NDArray[np.uint8] | None) -> None:
        """Add one class: truth mask ``g``, prediction ``p`` (``None`` = all zeros)."""
        if self.roi is not None:
            if self.inside is None:
                self.inside = np.empty(g.shape, dtype=bool)
            g = np.logical_and(g, self.roi, out=self.inside)
        n_truth = int(np.count_nonzero(g))
        if p is None:
            self.intersection.append(0)
            self.union.append(MAX_PROBABILITY * n_truth)
            return
        sum_in = self._masked_sum(p, g)
        sum_roi = _sum(p) if self.roi is None else self._masked_sum(p, self.roi)
        self.intersection.append(sum_in)
        self.union.append(MAX_PROBABILITY * n_truth + sum_roi - sum_in)

    def _masked_sum(self, p: NDArray[np.uint8], mask: NDArray[np.bool_]) -> int:
        """``Σ p[mask]`` without boolean indexing: multiply into a reused buffer, then sum."""
        if self.buffer is None or self.buffer.shape != p.shape:
            self.buffer = np.empty_like(p)
        return _sum(np.multiply(p, mask, out=self.buffer))


def _sum(values: NDArray[np.uint8]) -> int:
    """Exact sum of 0..100 values: rows in uint32 (exact below 42 million columns), then uint64."""
    rows = values.reshape(-1, values.shape[-1]) if values.ndim else values.reshape(1, 1)
    return int(rows.sum(axis=1, dtype=np.uint32).sum(dtype=np.uint64))


def fuzzy_jaccard_score(
    y_true: ArrayLike,
    y_pred: ArrayLike,
    *,
    roi: ArrayLike | None = None,
    average: str | None = "macro",
) -> float | NDArray[np.float64]:
    """Fuzzy Jaccard index of one image (see the module docstring for the formula).

    Parameters
    ----------
    y_true : array-like of shape (n_classes, *image_shape)
        Truth masks, boolean or with values in {0, 100}.
    y_pred : array-like of shape (n_classes, *image_shape)
        Integer probabilities 0..100.
    roi : array-like of shape image_shape, optional
        Boolean region of interest; every pixel when omitted.
    average : {"macro", None}
        ``"macro"``: mean of the defined per-class values (NaN if none is
        defined); ``None``: the per-class values, NaN where undefined.

    To pool several images, add up :meth:`FuzzyJaccardStats.from_masks` with
    :meth:`FuzzyJaccardStats.merge` instead of averaging per-image scores.

    >>> fuzzy_jaccard_score([[[100, 0]], [[0, 100]]], [[[100, 50]], [[0, 0]]], average=None).tolist()  # 100/150 and 0/100
    [0.6666666666666666, 0.0]
    >>> fuzzy_jaccard_score([[[0, 0]], [[0, 100]]], [[[0, 0]], [[0, 100]]], average=None).tolist()  # class 1: 0/0, undefined
    [nan, 1.0]
    >>> fuzzy_jaccard_score([[[0, 0]], [[0, 100]]], [[[0, 0]], [[0, 100]]])  # the mean leaves it out
    1.0
    """
    truth = np.asarray(y_true)
    pred = np.asarray(y_pred)
    if truth.shape != pred.shape or truth.ndim < 2:
        raise ValueError(f"y_true {truth.shape} and y_pred {pred.shape} must have one shape (n_classes, ...)")
    if truth.dtype != np.bool_:
        if not np.isin(truth, (0, MAX_PROBABILITY)).all():
            raise ValueError("y_true must be boolean or hold only 0 and 100")
        truth = truth == MAX_PROBABILITY
    if not np.issubdtype(pred.dtype, np.integer) or pred.min(initial=0) < 0 or pred.max(initial=0) > MAX_PROBABILITY:
        raise ValueError("y_pred must hold integers from 0 to 100")
    mask = None if roi is None else np.asarray(roi, dtype=bool)
    if mask is not None and mask.shape != truth.shape[1:]:
        raise ValueError(f"roi {mask.shape} must have the image shape {truth.shape[1:]}")
    stats = FuzzyJaccardStats.from_masks(list(truth), list(pred.astype(np.uint8)), mask)
    per_class = stats.compute()
    if average is None:
        return per_class
    if average != "macro":
        raise ValueError(f"average must be 'macro' or None, got {average!r}")
    return float(np.nanmean(per_class)) if not np.isnan(per_class).all() else float("nan")
