"""The camera-trap boxes and what both ways of matching them share (:mod:`~podium.metrics.detection_points`
in NumPy, :mod:`~podium.metrics.detection_matching` compiled): the boxes of a table, their corners, the
float decisions, the photo grouping and the rounding-error constants of the IoU bound."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from fractions import Fraction
from math import lcm

import numpy as np
from numpy.typing import ArrayLike, NDArray

UNIT_ROUNDOFF = 2.0**-53
ERROR_UNITS = 128  # bounds the absolute rounding error of the intersection and of the union (see detection_points.iou_error_bound)


@dataclass(frozen=True)
class Boxes:
    """Boxes of a table, in file order: photo index, (xc, yc, w, h), class, and their decimal text."""

    photo: NDArray[np.int64]
    xywh: NDArray[np.float64]  # (n, 4)
    cls: NDArray[np.int8]
    texts: Sequence[str]  # per box: the decimal text of xc, yc, w, h, separated by single spaces

    @classmethod
    def from_rows(cls, rows: ArrayLike) -> Boxes:
        """Boxes from rows ``(photo, xc, yc, w, h, class)``; their decimal text is each float's shortest repr."""
        table = np.asarray(rows, dtype=np.float64).reshape(-1, 6)
        xywh = table[:, 1:5]
        return cls(
            table[:, 0].astype(np.int64),
            xywh,
            table[:, 5].astype(np.int8),
            [" ".join(map(repr, row)) for row in xywh.tolist()],
        )

    def exact(self, k: int) -> tuple[list[int], int]:
        """Box ``k`` as written, exactly: four integers over one denominator, a power of ten when the
        four are plain decimals (``"0.25 0.5 0.1 0.125"``: ``[250, 500, 100, 125], 1000``).

        >>> Boxes.from_rows([(0, 0.25, 0.5, 0.1, 0.125, 1), (0, 1e-05, 0.5, 0.5, 0.5, 1)]).exact(1)
        ([1, 50000, 50000, 50000], 100000)
        """
        numerators, places = [], []
        for text in self.texts[k].split(" "):
            whole, _, fraction = text.partition(".")
            digits = whole + fraction
            unsigned = digits[1:] if digits[:1] in ("+", "-") else digits
            if unsigned.isascii() and unsigned.isdigit():  # a plain decimal: sign, digits, at most one dot
                numerators.append(int(digits))
                places.append(len(fraction))
            else:  # an exponent: Fraction reads it exactly
                return self._exact_fractions(k)
        most = max(places)
        return [n * 10 ** (most - p) for n, p in zip(numerators, places)], 10**most

    def _exact_fractions(self, k: int) -> tuple[list[int], int]:
        values = [Fraction(t) for t in self.texts[k].split(" ")]
        denominator = lcm(*(v.denominator for v in values))
        return [v.numerator * (denominator // v.denominator) for v in values], denominator


Corners = tuple[NDArray[np.float64], NDArray[np.float64], NDArray[np.float64], NDArray[np.float64]]


def corners(xywh: NDArray[np.float64]) -> Corners:
    """The columns ``x1, y1, x2, y2`` of ``(xc, yc, w, h)`` boxes: ``xc ∓ w/2``, ``yc ∓ h/2``, computed
    once per box (a box is in many pairs), by both ways of deciding (:func:`~podium.metrics.detection_points.greedy_matching`)."""
    xc, yc, w, h = xywh.T
    return xc - w / 2, yc - h / 2, xc + w / 2, yc + h / 2


@dataclass(frozen=True)
class FloatDecisions:
    """What floats decide: the candidate pairs, the photos left to exact arithmetic, the others matched.

    Candidates (``IoU > 0.5`` by more than the error bound, or within it of 0.5) are ordered by photo,
    prediction, IoU descending and then the earlier truth row.
    """

    truth_of: NDArray[np.int64]  # matched in the photos floats decide; -1 elsewhere
    p_c: NDArray[np.int64]
    t_c: NDArray[np.int64]
    iou_c: NDArray[np.float64]
    exact_photos: NDArray[np.int64]  # a candidate near 0.5 or near a tie: ascending
    contested: NDArray[np.int64]  # a truth box the candidate of several predictions: ascending


def photo_count(pred_photo: NDArray[np.int64], truth_photo: NDArray[np.int64]) -> int:
    """How many photos the two sides' indices span."""
    return int(max(pred_photo.max(initial=-1), truth_photo.max(initial=-1))) + 1


def photo_groups(photo: NDArray[np.int64], n_photos: int) -> tuple[NDArray[np.int64], NDArray[np.int64]]:
    """The rows ordered by photo, file order kept within a photo, and where each photo's rows start
    (``n_photos + 1`` offsets)."""
    start = np.zeros(n_photos + 1, np.int64)
    np.cumsum(np.bincount(photo, minlength=n_photos), out=start[1:])
    return np.argsort(photo, kind="stable"), start
