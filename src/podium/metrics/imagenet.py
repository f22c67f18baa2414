"""ILSVRC 2012 metrics: top-k classification error, localization error, VOC average precision.

Flat error with K guesses (the 2012 kit): for an image with truth labels
``g_1..g_n``, ``e = (1/n) Σ_k min_{j ≤ K} d(guess_j, g_k)`` where ``d`` is 0 for
a right guess and 1 otherwise; the error is the mean of ``e`` over images.

- Classification: guess ``j`` is right for ``g_k`` iff its label equals ``g_k``.
- Localization: it must also overlap one of the truth boxes of class ``g_k`` with
  IoU >= 0.5 (the kit's code; its web page says "over 50%"). Corners are
  inclusive pixels: ``iw = min(x2, X2) - max(x1, X1) + 1`` (likewise ``ih``), both
  positive, and ``IoU = iw·ih / ((x2-x1+1)(y2-y1+1) + (X2-X1+1)(Y2-Y1+1) - iw·ih)``.
  Corners may be decimals (the kit uses the value as written). The test
  ``2·iw·ih >= union`` is made in floats wherever a proven error bound
  separates it from equality, and in exact rational arithmetic elsewhere. Any
  instance of the class may serve any guess (no one-to-one matching).

Task 3's average precision is in :mod:`podium.metrics.average_precision`.
"""

from __future__ import annotations

import importlib
import math
from collections.abc import Callable, Hashable, Sequence
from dataclasses import dataclass
from types import ModuleType
from typing import TYPE_CHECKING, TypeAlias

from podium.core.lazy import LazyModule
from podium.metrics.state import Statistics, concatenated, keyed, summed

if TYPE_CHECKING:
    import fractions
    from fractions import Fraction

    import numpy as np
    from numpy.typing import ArrayLike, NDArray
else:
    fractions = LazyModule("fractions")  # Task 2's exact corners: Task 1 never imports it (with decimal, 3 ms)
    np = LazyModule("numpy")

try:  # by name: the import graph (grimp) sees no compiled module, and would read an import of the package
    compiled: ModuleType | None = importlib.import_module("podium.metrics._topk")
except ImportError:  # built without a C compiler (the extension is optional): label_errors counts in Python
    compiled = None


K = 5
_NEVER_TRUTH = -3  # padding of the truth matrix
_NEVER_GUESS = -2  # missing guesses and labels outside the classes
UNIT_ROUNDOFF = 2.0**-53

Corner: TypeAlias = "int | Fraction"  # a box corner as written: an integer, or an exact decimal
TruthBox: TypeAlias = "tuple[int, Corner, Corner, Corner, Corner]"  # (class id, xmin, ymin, xmax, ymax)
ExactCorners: TypeAlias = "Callable[[int, int], Sequence[Fraction]]"  # (image, guess) -> the guess's corners as written


@dataclass(frozen=True)
class ErrorCounts(Statistics):
    """Exact, mergeable totals: misses at K = 1..5 summed by number of truth labels per image."""

    images: int = summed()
    misses: dict[int, tuple[int, ...]] = keyed()  # n labels -> misses at K=1..5
    per_image: NDArray[np.float64] | tuple[()] = concatenated(
        default_factory=lambda: np.zeros((0, K)), compare=False
    )  # (images, K) errors; () from the plain kernel, :func:`label_errors`

    @classmethod
    def of(cls, found: NDArray[np.bool_], valid: NDArray[np.bool_], per_image: bool = True) -> ErrorCounts:
        """From ``found[i, k, K-1]`` (truth label k of image i found within K guesses); ``per_image=False``
        leaves the (images, K) errors out (a table of scores needs only the counts)."""
        if (
            len(found) and valid.shape[1] == 1 and valid.all()
        ):  # the kit's truth, one label per image: no mask, no counts to copy
            missed_by_k = len(found) - found.sum(axis=(0, 1))
            errors = (~found[:, 0, :]).astype(np.float64) if per_image else np.zeros((0, K))
            return cls(len(found), {1: tuple(int(v) for v in missed_by_k)}, errors)
        n_labels = valid.sum(axis=1)
        missed = (~found & valid[:, :, None]).sum(axis=1)  # (images, K)
        present = np.flatnonzero(np.bincount(n_labels))  # np.unique would import numpy.ma, 15 ms of a new process
        misses = {
            int(n): tuple(int(v) for v in (missed if present.size == 1 else missed[n_labels == n]).sum(axis=0))
            for n in present
        }
        errors = missed / np.maximum(n_labels, 1)[:, None] if per_image else np.zeros((0, K))
        return cls(len(found), misses, errors)

    def error(self, k: int) -> float:
        """Mean per-image error with ``k`` guesses (0 for no image): the sum of each image's misses over its labels,
        over a common denominator, divided as integers (Python rounds an integer quotient correctly, as it does a
        fraction's value)."""
        if not self.images:
            return 0.0
        denominator = math.lcm(*self.misses)
        return sum(values[k - 1] * (denominator // n) for n, values in self.misses.items()) / (
            denominator * self.images
        )


def _found(truth: NDArray[np.int64], right: NDArray[np.bool_] | None, labels: NDArray[np.int64]) -> NDArray[np.bool_]:
    """``found[i, k, K-1]``: truth label k of image i has a right guess among the first K (``right`` None: every guess
    whose label is right)."""
    hit = truth[:, :, None] == labels[:, None, :]
    if right is not None:
        hit &= right[:, None, :]
    return np.logical_or.accumulate(hit, axis=2)


def guess_labels(guesses: NDArray[np.float64], n_classes: int = 1000) -> NDArray[np.int64]:
    """Guess labels as integers; missing guesses and labels outside 1..n_classes never match."""
    labels = guesses[..., 0]
    inside = (labels >= 1) & (labels <= n_classes)  # NaN is neither
    return (labels if inside.all() else np.where(inside, labels, _NEVER_GUESS)).astype(np.int64)


def classification_errors(
    truth: NDArray[np.int64], guesses: NDArray[np.float64], per_image: bool = True
) -> ErrorCounts:
    """``truth``: (images, labels) padded with -1; ``guesses``: (images, 5, ≥1), label first, NaN = none;
    ``per_image=False``: the counts alone (:meth:`ErrorCounts.of`)."""
    truth = np.where(truth < 0, _NEVER_TRUTH, truth)
    return ErrorCounts.of(_found(truth, None, guess_labels(guesses)), truth != _NEVER_TRUTH, per_image)


def label_errors(truth: Sequence[Hashable], guesses: Sequence[Hashable]) -> ErrorCounts:
    """The counts of :func:`classification_errors` for one truth label per image and :data:`K` guesses per
    image (``guesses`` flat, image after image), as values equal exactly when the labels are (integers, or
    a file's canonical tokens: :mod:`podium.formats.label_tokens`); ``per_image`` is left empty (``()``).

    Its kernel is compiled (``podium.metrics._topk``) for two buffers of one integer format (``array('H')``,
    NumPy integer arrays): 800,000 images in about 2 ms. Other sequences, and every input where podium was
    built without a C compiler, take the same rule in Python: 50,000 images in about 10 ms, a tenth of
    what a new process spends importing NumPy.

    >>> label_errors([3, 7], [3, 1, 1, 1, 1, 1, 7, 7, 1, 1]).misses  # image 2 is found by its 2nd guess
    {1: (1, 0, 0, 0, 0)}
    >>> label_errors([3, 7], [3, 1, 1, 1, 1, 1, 7, 7, 1, 1]).error(1)
    0.5
    """
    n = len(truth)
    if len(guesses) != K * n:
        raise ValueError(f"{len(guesses)} guesses for {n} images: {K} per image")
    missed = None
    if compiled is not None:
        try:
            missed = compiled.misses(truth, guesses, K)
        except (TypeError, BufferError):  # not two buffers of one integer format: the rule in Python
            pass
    return ErrorCounts(n, {1: missed or _misses(truth, guesses)} if n else {}, ())


def _misses(truth: Sequence[Hashable], guesses: Sequence[Hashable]) -> tuple[int, ...]:
    """The images that the first 1..K guesses all miss: the rule of :func:`label_errors`, in Python."""
    rows = [iter(guesses)] * K  # zip draws K guesses from it for each image
    assert K == 5  # the kit's five guesses, tried in order: the first that names the label
    first = [
        0 if label == a else 1 if label == b else 2 if label == c else 3 if label == d else 4 if label == e else K
        for label, a, b, c, d, e in zip(truth, *rows)
    ]
    found, missed = 0, []
    for j in range(K):
        found += first.count(j)
        missed.append(len(truth) - found)
    return tuple(missed)


def localization_errors(
    truth: NDArray[np.int64],
    guesses: NDArray[np.float64],
    boxes: list[list[TruthBox]],
    exact_corners: ExactCorners | None = None,
    per_image: bool = True,
) -> ErrorCounts:
    """Like :func:`classification_errors`; a guess must also localize (IoU >= 0.5, +1 convention).

    ``exact_corners(i, j)`` gives guess j of image i as written, for the rare
    comparisons floats cannot decide; by default, the exact value of the floats.
    """
    truth = np.where(truth < 0, _NEVER_TRUTH, truth)
    labels = guess_labels(guesses)
    right = localized(labels, guesses[..., 1:5], boxes, exact_corners)
    return ErrorCounts.of(_found(truth, right, labels), truth != _NEVER_TRUTH, per_image)


def localized(
    labels: NDArray[np.int64],
    corners: NDArray[np.float64],
    boxes: list[list[TruthBox]],
    exact_corners: ExactCorners | None = None,
) -> NDArray[np.bool_]:
    """``right[i, j]``: guess j of image i overlaps a truth box of its own class with IoU >= 0.5.

    >>> localized(np.array([[7]]), np.array([[[0.0, 0.0, 9.0, 9.0]]]), [[(7, 0, 0, 4, 9)]]).tolist()  # IoU 50/100
    [[True]]
    >>> localized(np.array([[7]]), np.array([[[0.0, 0.0, 9.0, 9.0]]]), [[(7, 0, 0, fractions.Fraction(39, 10), 9)]]).tolist()  # 49/100
    [[False]]
    """
    counts = np.array([len(b) for b in boxes], dtype=np.int64)
    flat_boxes = [b for image in boxes for b in image]
    flat = np.array(flat_boxes, dtype=np.float64).reshape(-1, 5)
    n_images, n_guess = labels.shape
    image_of_guess = np.repeat(np.arange(n_images), n_guess)
    per_guess = counts[image_of_guess]
    guess_idx = np.repeat(np.arange(n_images * n_guess), per_guess)
    start = np.concatenate([[0], np.cumsum(counts)[:-1]])[image_of_guess]
    offsets = np.arange(len(guess_idx)) - np.repeat(np.cumsum(per_guess) - per_guess, per_guess)
    box_idx = np.repeat(start, per_guess) + offsets
    same_class = labels.ravel()[guess_idx] == flat[box_idx, 0]
    guess_idx, box_idx = guess_idx[same_class], box_idx[same_class]
    g = corners.reshape(-1, 4)[guess_idx]
    b = flat[box_idx, 1:]
    iw = np.minimum(g[:, 2], b[:, 2]) - np.maximum(g[:, 0], b[:, 0]) + 1
    ih = np.minimum(g[:, 3], b[:, 3]) - np.maximum(g[:, 1], b[:, 1]) + 1
    inter = iw * ih
    union = (
        (g[:, 2] - g[:, 0] + 1) * (g[:, 3] - g[:, 1] + 1) + (b[:, 2] - b[:, 0] + 1) * (b[:, 3] - b[:, 1] + 1) - inter
    )
    margin = 2 * inter - union
    ok = (iw > 0) & (ih > 0) & (margin >= 0)
    # Proven bounds (M = 1 + the largest |corner| of the pair): each side is off by at most 5uM,
    # 2·iw·ih - union by at most 250uM²; both are doubled. Integer corners below 2**26 give exact floats.
    scale = 1 + np.maximum(np.abs(g).max(axis=1), np.abs(b).max(axis=1))
    side_bound = 10 * UNIT_ROUNDOFF * scale
    unsure = (
        (np.abs(iw) <= side_bound)
        | (np.abs(ih) <= side_bound)
        | (np.abs(margin) <= 512 * UNIT_ROUNDOFF * scale * scale)
    )
    unsure &= np.isfinite(g).all(axis=1)
    for k in np.flatnonzero(unsure).tolist():
        image, guess = divmod(int(guess_idx[k]), n_guess)
        exact = exact_corners(image, guess) if exact_corners else [fractions.Fraction(v) for v in corners[image, guess]]
        ok[k] = _exact_localized(exact, flat_boxes[int(box_idx[k])][1:])
    right = np.zeros(n_images * n_guess, dtype=bool)
    right[guess_idx[ok]] = True
    return right.reshape(n_images, n_guess)


def _exact_localized(g: Sequence[Fraction], b: Sequence[Corner]) -> bool:
    """The kit's test in rational arithmetic: ``iw > 0``, ``ih > 0`` and ``2·iw·ih >= union``."""
    iw = min(g[2], b[2]) - max(g[0], b[0]) + 1
    ih = min(g[3], b[3]) - max(g[1], b[1]) + 1
    inter = iw * ih
    union = (g[2] - g[0] + 1) * (g[3] - g[1] + 1) + (b[2] - b[0] + 1) * (b[3] - b[1] + 1) - inter
    return bool(iw > 0 and ih > 0 and 2 * inter >= union)


# --- one-shot functions, scikit-learn style ---------------------------------------------------


def _truth_matrix(y_true: Sequence[int] | Sequence[Sequence[int]]) -> NDArray[np.int64]:
    """Truth labels as an (images, labels) matrix padded with -1; a label below 1 or an image without one is refused."""
    rows = [[label] if isinstance(label, (int, np.integer)) else list(label) for label in y_true]
    if any(not r for r in rows):
        raise ValueError(
            f"y_true[{next(i for i, r in enumerate(rows) if not r)}] has no label: every image has at least one"
        )
    _labels_from_1("y_true", [label for r in rows for label in r])
    width = max((len(r) for r in rows), default=1)
    return np.array([r + [-1] * (width - len(r)) for r in rows], dtype=np.int64).reshape(len(rows), width)


def _labels_from_1(name: str, labels: ArrayLike) -> None:
    """Refuse labels below 1: ILSVRC2012_IDs run from 1 to 1000, and 0-based labels (torchvision's) would be silently miscounted."""
    values = np.asarray(labels, dtype=np.float64)
    low = values[~np.isnan(values)].min(initial=1)
    if low < 1:
        raise ValueError(
            f"{name} holds label {low:g}: labels are ILSVRC2012_IDs, 1 to 1000 (0-based labels, as torchvision's, need + 1)"
        )


def _guesses(guesses: ArrayLike, group: int) -> NDArray[np.float64]:
    array = np.asarray(guesses, dtype=np.float64)
    array = array.reshape(len(array), -1, group) if array.size else np.zeros((len(array), 0, group))
    if array.shape[1] > K:
        raise ValueError(f"at most {K} guesses per image")
    return np.concatenate([array, np.full((len(array), K - array.shape[1], group), np.nan)], axis=1)


def top_k_error(y_true: Sequence[int] | Sequence[Sequence[int]], guesses: ArrayLike, *, k: int = K) -> float:
    """Flat classification error with the first ``k`` guesses (ILSVRC 2012 Task 1).

    ``y_true`` holds each image's label (1..1000) or its list of labels;
    ``guesses[i]`` the labels guessed for image ``i``, best first (at most 5).
    An image's error is the share of its truth labels that no guess names.

    >>> top_k_error([3, 7], [[3, 1], [1, 7]], k=1), top_k_error([3, 7], [[3, 1], [1, 7]], k=2)
    (0.5, 0.0)
    >>> top_k_error([[3, 7]], [[3]])  # one of two labels found
    0.5
    >>> top_k_error([], [])  # no image: 0 by the kit's convention
    0.0
    >>> top_k_error([0, 6], [[0], [6]])  # 0-based labels are refused, not miscounted
    Traceback (most recent call last):
    ValueError: y_true holds label 0: labels are ILSVRC2012_IDs, 1 to 1000 (0-based labels, as torchvision's, need + 1)
    """
    truth, guessed = _truth_matrix(y_true), _guesses(guesses, 1)
    _labels_from_1("guesses", guessed)
    if len(truth) != len(guessed):
        raise ValueError(f"y_true has {len(truth)} images and guesses {len(guessed)}")
    return classification_errors(truth, guessed).error(k)


def localization_error(
    y_true: Sequence[int] | Sequence[Sequence[int]], guesses: ArrayLike, boxes: list[list[TruthBox]], *, k: int = K
) -> float:
    """Flat localization error with the first ``k`` guesses (ILSVRC 2012 Task 2).

    ``guesses[i]`` holds rows ``(label, xmin, ymin, xmax, ymax)``, best first;
    ``boxes[i]`` the truth boxes ``(class, xmin, ymin, xmax, ymax)`` of image
    ``i``. A guess is right when its label is a truth label and its box overlaps a
    box of that class with IoU >= 0.5 (inclusive pixel corners), so exactly 0.5 counts:

    >>> localization_error([7], [[(7, 0, 0, 9, 9)]], [[(7, 0, 0, 4, 9)]])  # IoU 50/100
    0.0
    >>> localization_error([7], [[(7, 0, 0, 9, 9)]], [[(7, 0, 0, 3, 9)]])  # IoU 40/100
    1.0
    >>> localization_error([7], [[(5, 0, 0, 9, 9)]], [[(7, 0, 0, 9, 9)]])  # the right box with the wrong label
    1.0
    """
    truth, guessed = _truth_matrix(y_true), _guesses(guesses, 5)
    _labels_from_1("guesses", guessed[:, :, 0])
    if not len(truth) == len(guessed) == len(boxes):
        raise ValueError(
            f"y_true, guesses and boxes must have one length (images), not {len(truth)}, {len(guessed)}, {len(boxes)}"
        )
    return localization_errors(truth, guessed, boxes).error(k)
