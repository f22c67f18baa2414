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

from dataclasses import dataclass
from typing import Sequence

import numpy as np
from numpy.typing import ArrayLike, NDArray

MAX_PROBABILITY = 100


@dataclass(frozen=True)
class FuzzyJaccardStats:
    """Per-class sums ``intersection = Σ min(P, G)`` and ``union = Σ max(P, G)``."""

    intersection: tuple[int, ...]
    union: tuple[int, ...]

    @classmethod
    def zeros(cls, n_classes: int) -> FuzzyJaccardStats:
        return cls((0,) * n_classes, (0,) * n_classes)

    @classmethod
    def from_image(
        cls,
        truth: Sequence[NDArray[np.bool_]],
        predictions: Sequence[NDArray[np.uint8] | None],
        roi: NDArray[np.bool_] | None = None,
    ) -> FuzzyJaccardStats:
        """Statistics of one image.

        ``truth[c]`` is the boolean mask of class ``c`` (G = 100 where True);
        ``predictions[c]`` is a uint8 array of values 0..100 (not checked here:
        readers reject larger values), or ``None`` for an image the submission
        did not process, which counts as all zeros; ``roi`` is the boolean
        region of interest, ``None`` meaning every pixel. Truth pixels outside
        the ROI are ignored.
        """
        buffer: NDArray[np.uint8] | None = None
        inter: list[int] = []
        union: list[int] = []
        for g, p in zip(truth, predictions, strict=True):
            if roi is not None:
                g = g & roi
            n_truth = int(np.count_nonzero(g))
            if p is None:
                inter.append(0)
                union.append(MAX_PROBABILITY * n_truth)
                continue
            if buffer is None or buffer.shape != p.shape:
                buffer = np.empty_like(p)
            sum_in = _masked_sum(p, g, buffer)
            sum_roi = int(p.sum(dtype=np.uint64)) if roi is None else _masked_sum(p, roi, buffer)
            inter.append(sum_in)
            union.append(MAX_PROBABILITY * n_truth + sum_roi - sum_in)
        return cls(tuple(inter), tuple(union))

    def merge(self, other: FuzzyJaccardStats) -> FuzzyJaccardStats:
        """Statistics of the union of two disjoint sets of images."""
        if len(self.union) != len(other.union):
            raise ValueError("cannot merge statistics of different numbers of classes")
        return FuzzyJaccardStats(
            tuple(a + b for a, b in zip(self.intersection, other.intersection)),
            tuple(a + b for a, b in zip(self.union, other.union)),
        )

    def compute(self) -> NDArray[np.float64]:
        """Per-class ``D``; NaN for a class whose union is 0."""
        return np.array(
            [i / u if u else np.nan for i, u in zip(self.intersection, self.union)],
            dtype=np.float64,
        )


def _masked_sum(p: NDArray[np.uint8], mask: NDArray[np.bool_], buffer: NDArray[np.uint8]) -> int:
    """``Σ p[mask]`` without boolean indexing: multiply into a reused buffer, then sum."""
    np.multiply(p, mask, out=buffer)
    return int(buffer.sum(dtype=np.uint64))


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

    To pool several images, add up :meth:`FuzzyJaccardStats.from_image` with
    :meth:`FuzzyJaccardStats.merge` instead of averaging per-image scores.
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
    stats = FuzzyJaccardStats.from_image(list(truth), list(pred.astype(np.uint8)), mask)
    per_class = stats.compute()
    if average is None:
        return per_class
    if average != "macro":
        raise ValueError(f"average must be 'macro' or None, got {average!r}")
    return float(np.nanmean(per_class)) if not np.isnan(per_class).all() else float("nan")
