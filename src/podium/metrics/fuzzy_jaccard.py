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
from typing import Any

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
        return ImageSums.of_masks(truth, roi).add_all(predictions)

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
        return ImageSums.of_labels(labels, roi).add_all(predictions)

    def compute(self) -> NDArray[np.float64]:
        """Per-class ``D``; NaN for a class whose union is 0."""
        return np.array(
            [i / u if u else np.nan for i, u in zip(self.intersection, self.union)],
            dtype=np.float64,
        )


class ImageSums:
    """The statistics of one image, taken one class at a time: :meth:`add` takes a prediction's sums at
    once, so that one buffer can hold every class's prediction in turn (the challenge decodes each map
    into it), and :attr:`stats` gives them.

    In NumPy, a class is taken in blocks of :data:`_ROWS` rows, whose temporaries stay in the
    processor's cache: the block's truth mask (``labels == c + 1``, and the ROI), its count, and
    two exact sums (:func:`_block_sum`) of the prediction times the mask and times the ROI; 1.6 to
    2.3 ms of CPU a 2000x2000 map, where the passes over whole images, summing each row in uint32,
    took 3 to 5. Where a compiled kernel is loaded in this process (:func:`_compiled_fits`), one
    compiled pass per class takes them (:mod:`~podium.metrics.fuzzy_jaccard_sums`). Both give the
    same integers.
    """

    def __init__(
        self,
        truth: Sequence[NDArray[np.bool_]] | NDArray[np.integer],
        roi: NDArray[np.bool_] | None,
        labelled: bool,
    ) -> None:
        self.truth = truth
        self.roi = roi
        self.labelled = labelled
        self.intersection: list[int] = []
        self.union: list[int] = []
        self._mask: NDArray[np.bool_] = np.empty(0, bool)  # a block's, reused from block to block
        self._work: NDArray[np.uint8] = np.empty(0, np.uint8)

    @classmethod
    def of_masks(cls, truth: Sequence[NDArray[np.bool_]], roi: NDArray[np.bool_] | None = None) -> ImageSums:
        """An image whose truth is one boolean mask per class (see :meth:`FuzzyJaccardStats.from_masks`)."""
        return cls(truth, roi, labelled=False)

    @classmethod
    def of_labels(cls, labels: NDArray[np.integer], roi: NDArray[np.bool_] | None = None) -> ImageSums:
        """An image whose truth is a label image (see :meth:`FuzzyJaccardStats.from_labels`)."""
        return cls(labels, roi, labelled=True)

    def next_truth(self) -> tuple[NDArray[Any], int]:
        """The next class's truth as ``(array, value)``: its pixels are ``array == value`` inside :attr:`roi`
        (a label image and the class's label, or the class's mask and 1)."""
        c = len(self.intersection)
        array, value = (self.truth, c + 1) if self.labelled else (self.truth[c], 1)
        assert isinstance(array, np.ndarray)
        return array, value

    def add_sums(self, n: int, sum_in: int, sum_roi: int) -> None:
        """Take the next class's sums taken elsewhere (a reader summing a map as it decodes it):
        its truth pixels' count, the prediction's sum over them and over the ROI."""
        self.intersection.append(sum_in)
        self.union.append(MAX_PROBABILITY * n + sum_roi - sum_in)

    def add(self, p: NDArray[np.uint8] | None) -> None:
        """Take the sums of the next class's prediction ``p`` (uint8, or ``None``: all zeros); the
        array may be overwritten afterwards."""
        array, value = self.next_truth()
        if p is not None and p.dtype != np.uint8:
            raise ValueError(f"predictions must be uint8 arrays, not {p.dtype}")
        if p is not None and _compiled_fits([array, p], self.roi):
            from podium.metrics.fuzzy_jaccard_sums import class_sums

            n, sum_in, sum_roi = class_sums(array, value, p, self.roi)
        else:
            n, sum_in, sum_roi = self._numpy_sums(array, value, p)
        self.add_sums(n, sum_in, sum_roi)

    def add_all(self, predictions: Sequence[NDArray[np.uint8] | None]) -> FuzzyJaccardStats:
        """:meth:`add` every class's prediction, in order; the image's statistics."""
        if not self.labelled and len(self.truth) != len(predictions):
            raise ValueError(f"{len(self.truth)} truth masks but {len(predictions)} predictions")
        for p in predictions:
            self.add(p)
        return self.stats

    @property
    def stats(self) -> FuzzyJaccardStats:
        """The statistics of the classes added so far."""
        return FuzzyJaccardStats(tuple(self.intersection), tuple(self.union))

    def _numpy_sums(self, array: NDArray[Any], value: int, p: NDArray[np.uint8] | None) -> tuple[int, int, int]:
        """``(n, Σ p over the truth, Σ p over the ROI)``, the truth being ``array == value`` inside the
        ROI, block by block; ``p`` ``None`` counts as zeros."""
        truth, roi = _rows(array), None if self.roi is None else _rows(self.roi)
        prediction = None if p is None else _rows(p)
        if self._mask.shape[1:] != truth.shape[1:]:
            self._mask = np.empty((_ROWS, truth.shape[1]), bool)
            self._work = np.empty((_ROWS, truth.shape[1]), np.uint8)
        n = sum_in = sum_roi = 0
        for at in range(0, truth.shape[0], _ROWS):
            rows = slice(at, at + _ROWS)
            mask, work = self._mask[: truth[rows].shape[0]], self._work[: truth[rows].shape[0]]
            g = np.equal(truth[rows], value, out=mask) if self.labelled else truth[rows]
            if roi is not None:
                g = np.logical_and(g, roi[rows], out=mask)
            n += int(np.count_nonzero(g))
            if prediction is not None:
                sum_in += _block_sum(np.multiply(prediction[rows], g.view(np.uint8), out=work))
                inside = (
                    prediction[rows]
                    if roi is None
                    else np.multiply(prediction[rows], roi[rows].view(np.uint8), out=work)
                )
                sum_roi += _block_sum(inside)
        return n, sum_in, sum_roi


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
_ROWS = 256  # rows taken at once; at most 257, so that a column of a block sums exactly in uint16 (257 * 255 = 65,535)


def _rows(a: NDArray[Any]) -> NDArray[Any]:
    """``a`` as a 2-D array of its last axis' rows."""
    return a.reshape(-1, a.shape[-1]) if a.ndim else a.reshape(1, 1)


def _block_sum(block: NDArray[np.uint8]) -> int:
    """Exact sum of at most 257 rows of bytes: added row on row in uint16 (NumPy's vectorised
    loop; summing each row in uint32 is 1.5 times slower), then the columns in uint64."""
    return int(block.sum(axis=0, dtype=np.uint16).sum(dtype=np.uint64))


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
