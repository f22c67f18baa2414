"""The three sums of one class of one fuzzy-jaccard image, compiled: one pass over truth, prediction and ROI.

:class:`~podium.metrics.fuzzy_jaccard.FuzzyJaccardStats` needs, per class and image, the number of
truth pixels in the region of interest, the sum of the prediction over them and its sum over the
whole region. In NumPy that is several passes over the image (the mask made, intersected with the
ROI, counted; the prediction multiplied by it and summed, then the same with the ROI), taken block
by block of rows (:class:`~podium.metrics.fuzzy_jaccard.ImageSums`): 1.6 to 2.3 ms of CPU per
2000x2000 map; this loop reads each array once (0.7 ms). The sums are exact integers either way:
the tests compare both on random images.

This module imports Numba, whose first kernel costs a fresh process 0.45 to 0.7 s of CPU (Numba's
import, 0.2 s, then its typing set-up, which imports SciPy); the loop saves 0.2 to 0.4 ms per megapixel of
map, so the statistics take it in a process that has a kernel loaded already
(:func:`podium.accel.jit.kernels_loaded`: a service worker, a GlaS pool) and the NumPy passes
otherwise. Loading it for large sets does not pay either: ``podium evaluate`` on 200 MP (50 images
of 2000x2000, 4 classes) took 4.49 s of CPU that way, 4.30 s without (load 11), when the NumPy passes
still took 5 ms a map.
"""

from __future__ import annotations

import numpy as np
from numpy.typing import NDArray

from podium.accel.jit import compiled

NO_ROI = np.ones(0, np.uint8)  # the whole image is the region of interest


def class_sums(
    truth: NDArray[np.integer] | NDArray[np.bool_],
    value: int,
    prediction: NDArray[np.uint8],
    roi: NDArray[np.bool_] | None,
) -> tuple[int, int, int]:
    """``(n, Σ P over the truth, Σ P over the ROI)`` where the truth is ``truth == value`` inside ``roi``.

    ``truth`` is a label image (uint8 or uint16) or a boolean mask (then ``value`` is 1);
    ``prediction`` is uint8 of values 0..100 and ``roi`` boolean (``None``: every pixel), all of
    one shape. A mismatch of shapes is a ``ValueError``.
    """
    if truth.dtype == np.bool_:
        truth = truth.view(np.uint8)
    if prediction.shape != truth.shape or (roi is not None and roi.shape != truth.shape):
        raise ValueError(f"truth {truth.shape}, prediction {prediction.shape} and roi must have one shape")
    inside = NO_ROI if roi is None else np.ascontiguousarray(roi).view(np.uint8).reshape(-1)
    n, total_in, total_roi = _sums(
        np.ascontiguousarray(truth).reshape(-1), value, np.ascontiguousarray(prediction).reshape(-1), inside
    )
    return int(n), int(total_in), int(total_roi)


@compiled
def _sums(
    truth: NDArray[np.uint8] | NDArray[np.uint16], value: int, prediction: NDArray[np.uint8], roi: NDArray[np.uint8]
) -> tuple[np.int64, np.int64, np.int64]:  # pragma: no cover - compiled
    """The sums of :func:`class_sums` on flat arrays; an empty ``roi`` is every pixel.
    Precondition, checked (``ValueError``): ``prediction`` and a non-empty ``roi`` have ``truth``'s size.

    The loop is branch-free in int64 (an unsigned or 32-bit accumulator makes Numba widen to
    float or loses the vectorisation: 1.5 to 14 times slower here).

    >>> _sums(np.array([1, 2, 1], np.uint8), 1, np.array([10, 20, 30], np.uint8), np.array([1, 1, 0], np.uint8))
    (1, 10, 30)
    """
    size = truth.size
    if prediction.size != size or (roi.size != 0 and roi.size != size):
        raise ValueError("_sums: prediction and roi must have the size of truth")
    n = np.int64(0)
    total_in = np.int64(0)
    total_roi = np.int64(0)
    if roi.size == 0:
        for i in range(size):
            p = np.int64(prediction[i])
            hit = np.int64(truth[i] == value)
            n += hit
            total_in += p * hit
            total_roi += p
    else:
        for i in range(size):
            p = np.int64(prediction[i])
            r = np.int64(roi[i] != 0)
            hit = np.int64(truth[i] == value) * r
            n += hit
            total_in += p * hit
            total_roi += p * r
    return n, total_in, total_roi


def compile_kernels() -> None:
    """Compile :func:`_sums` (or load it from Numba's cache) for 8 and 16-bit truths, with and without a ROI."""
    prediction = np.zeros((1, 2), np.uint8)
    for truth in (np.zeros((1, 2), np.uint8), np.zeros((1, 2), np.uint16)):
        class_sums(truth, 1, prediction, None)
        class_sums(truth, 1, prediction, np.ones((1, 2), bool))
