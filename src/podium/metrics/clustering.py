"""External clustering metrics from one contingency table.

Notation: ``N`` items; ``n_ij`` items of true class ``i`` in predicted cluster
``j``; class sizes ``a_i = Σ_j n_ij``; cluster sizes ``b_j = Σ_i n_ij``.

Pairwise counting, over the unordered pairs of distinct items::

    TP = Σ_ij C(n_ij, 2)            pairs together in both
    TP + FP = Σ_j C(b_j, 2)         pairs together in the prediction
    TP + FN = Σ_i C(a_i, 2)         pairs together in the truth
    precision = TP / (TP + FP)      1 when the prediction puts no pair together
    recall    = TP / (TP + FN)      1 when the truth puts no pair together
    F_β = (1 + β²) P R / (β² P + R) 0 when P = R = 0

Normalized mutual information (Manning et al., IIR §16.3), natural logs::

    I(Ω; C) = Σ_ij (n_ij / N) log(N n_ij / (a_i b_j))
    H(C) = -Σ_i (a_i / N) log(a_i / N),   H(Ω) likewise with b_j
    NMI = I / mean(H(Ω), H(C))            mean: arithmetic (the rules), geometric, min or max

NMI is exactly 1 for identical partitions (up to renaming, including one
cluster on both sides and all singletons on both sides), and 0 when one side
has zero entropy and the other not, as in scikit-learn. It is never NaN.

BCubed (Bagga and Baldwin), averaged over items::

    precision = (1/N) Σ_ij n_ij² / b_j,   recall = (1/N) Σ_ij n_ij² / a_i,   F = 2PR / (P + R)

All counts are exact 64-bit integers; only the final ratios are floats. Sums
of float terms are exactly rounded (:func:`math.fsum`), so a score depends on
the cells of the table only, never on how the labels are named or ordered: a
part of the items scores the same inside a larger set's labels as alone.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from functools import cached_property
from typing import Literal

import numpy as np
from numpy.typing import ArrayLike, NDArray

Average = Literal["arithmetic", "geometric", "min", "max"]
AVERAGES: tuple[Average, ...] = ("arithmetic", "geometric", "min", "max")


@dataclass(frozen=True, eq=False)
class ContingencyTable:
    """The non-zero cells ``(true[k], pred[k]) -> count[k]``, sorted, labels as integers.

    Labels are integer ids that mean the same thing in every part that is
    merged (e.g. identity codes assigned by one truth file).
    """

    true: NDArray[np.int64]
    pred: NDArray[np.int64]
    count: NDArray[np.int64]

    @classmethod
    def from_labels(cls, labels_true: ArrayLike, labels_pred: ArrayLike) -> ContingencyTable:
        """Count the pairs of labels of items; both arrays hold non-negative integers."""
        true = np.asarray(labels_true)
        pred = np.asarray(labels_pred)
        if true.shape != pred.shape or true.ndim != 1:
            raise ValueError(f"labels_true {true.shape} and labels_pred {pred.shape} must be 1-d of one length")
        for name, labels in (("labels_true", true), ("labels_pred", pred)):
            if not np.issubdtype(labels.dtype, np.integer):
                raise ValueError(f"{name} must hold integers (encode other labels first)")
            if labels.size and labels.min() < 0:
                raise ValueError(f"{name} must hold non-negative integers")
        return cls._count(true.astype(np.int64, copy=False), pred.astype(np.int64, copy=False), None)

    @classmethod
    def _count(
        cls, true: NDArray[np.int64], pred: NDArray[np.int64], weight: NDArray[np.int64] | None
    ) -> ContingencyTable:
        if true.size == 0:
            empty = np.zeros(0, np.int64)
            return cls(empty, empty, empty)
        width = int(pred.max()) + 1
        if int(true.max()) >= np.iinfo(np.int64).max // width:
            raise ValueError("labels too large to pair (encode them as 0..n-1 first)")
        if weight is None:
            keys, counts = _runs(np.sort(true * width + pred))
        else:
            keys, inverse = np.unique(true * width + pred, return_inverse=True)
            counts = np.bincount(inverse, weights=weight, minlength=keys.size).astype(np.int64)
        return cls(keys // width, keys % width, counts)

    def merge(self, other: ContingencyTable) -> ContingencyTable:
        """The table of the union of two disjoint sets of items."""
        return self._count(
            np.concatenate([self.true, other.true]),
            np.concatenate([self.pred, other.pred]),
            np.concatenate([self.count, other.count]),
        )

    @cached_property
    def n_items(self) -> int:
        return int(self.count.sum())

    @cached_property
    def classes(self) -> _Groups:
        """The true classes: sizes ``a_i`` and, per cell, the size of its class."""
        return _Groups.of(self.true, self.count)

    @cached_property
    def clusters(self) -> _Groups:
        """The predicted clusters: sizes ``b_j`` and, per cell, the size of its cluster."""
        return _Groups.of(self.pred, self.count)


@dataclass(frozen=True, eq=False)
class _Groups:
    sizes: NDArray[np.int64]  # one per group, in label order
    size_of_cell: NDArray[np.int64]  # per cell of the table

    @classmethod
    def of(cls, labels: NDArray[np.int64], count: NDArray[np.int64]) -> _Groups:
        """The groups of the cells' ``labels`` (one per cell), each weighted by its ``count`` (>= 1).

        Sorted labels (the classes: the table is sorted by them) are cut into runs; labels no
        larger than four times the cells (the clusters, numbered by the reader) are counted by
        ``bincount``; any others go through ``np.unique``. All three give the same sizes.
        """
        if labels.size == 0 or bool((labels[1:] >= labels[:-1]).all()):
            starts = _run_starts(labels)
            sizes = np.add.reduceat(count, starts) if labels.size else np.zeros(0, np.int64)
            return cls(sizes, np.repeat(sizes, np.diff(np.append(starts, labels.size))))
        if int(labels.max()) < 4 * labels.size:
            by_label = np.bincount(labels, weights=count).astype(np.int64)
            return cls(by_label[by_label > 0], by_label[labels])
        _, inverse = np.unique(labels, return_inverse=True)
        sizes = np.bincount(inverse, weights=count).astype(np.int64)
        return cls(sizes, sizes[inverse])


def _run_starts(values: NDArray[np.int64]) -> NDArray[np.intp]:
    """Where each run of equal values of a sorted array starts."""
    return np.flatnonzero(np.concatenate(([True], values[1:] != values[:-1]))) if values.size else np.zeros(0, np.intp)


def _runs(values: NDArray[np.int64]) -> tuple[NDArray[np.int64], NDArray[np.int64]]:
    """The distinct values of a sorted array and how often each occurs, as ``np.unique`` gives them
    with ``return_counts`` (without the argsort it would do)."""
    starts = _run_starts(values)
    return values[starts], np.diff(np.append(starts, values.size)).astype(np.int64)


def _pairs(sizes: NDArray[np.int64]) -> int:
    return int((sizes * (sizes - 1) // 2).sum())


@dataclass(frozen=True)
class PairCounts:
    """Unordered pairs of distinct items: together in both, in the prediction only, in the truth only."""

    tp: int
    fp: int
    fn: int

    @classmethod
    def of(cls, table: ContingencyTable) -> PairCounts:
        tp = _pairs(table.count)
        return cls(tp, _pairs(table.clusters.sizes) - tp, _pairs(table.classes.sizes) - tp)

    @property
    def precision(self) -> float:
        return self.tp / (self.tp + self.fp) if self.tp + self.fp else 1.0

    @property
    def recall(self) -> float:
        return self.tp / (self.tp + self.fn) if self.tp + self.fn else 1.0

    def f_score(self, beta: float = 1.0) -> float:
        return _f(self.precision, self.recall, beta)


def _f(precision: float, recall: float, beta: float = 1.0) -> float:
    b2 = beta * beta
    denominator = b2 * precision + recall
    return (1 + b2) * precision * recall / denominator if denominator else 0.0


def _entropy(sizes: NDArray[np.int64], n: int) -> float:
    """``-Σ (s/N) log(s/N) = log N - (1/N) Σ s log s``."""
    s = sizes.astype(np.float64)
    return max(0.0, float(np.log(n) - math.fsum(s * np.log(s)) / n))


def mutual_information(table: ContingencyTable) -> float:
    """``I(Ω; C)`` in nats."""
    n = table.n_items
    if n == 0:
        return 0.0
    n_ij = table.count.astype(np.float64)
    log_ratio = np.log(n_ij) + np.log(n) - np.log(table.classes.size_of_cell) - np.log(table.clusters.size_of_cell)
    return max(0.0, math.fsum(n_ij * log_ratio) / n)


def normalized_mutual_information(table: ContingencyTable, average: Average = "arithmetic") -> float:
    """NMI with the chosen mean of the two entropies (see the module docstring)."""
    if average not in AVERAGES:
        raise ValueError(f"average must be one of {', '.join(AVERAGES)}, got {average!r}")
    n = table.n_items
    if table.count.size == table.classes.sizes.size == table.clusters.sizes.size:
        return 1.0  # a one-to-one table: identical partitions up to renaming
    h_true = _entropy(table.classes.sizes, n)
    h_pred = _entropy(table.clusters.sizes, n)
    if h_true == 0.0 or h_pred == 0.0:
        return 0.0
    normalizer = {
        "arithmetic": (h_true + h_pred) / 2,
        "geometric": float(np.sqrt(h_true * h_pred)),
        "min": min(h_true, h_pred),
        "max": max(h_true, h_pred),
    }[average]
    return min(1.0, mutual_information(table) / normalizer)


@dataclass(frozen=True)
class BCubed:
    precision: float
    recall: float

    @classmethod
    def of(cls, table: ContingencyTable) -> BCubed:
        n = table.n_items
        if n == 0:
            return cls(1.0, 1.0)
        squares = table.count.astype(np.float64) ** 2
        return cls(
            math.fsum(squares / table.clusters.size_of_cell) / n,
            math.fsum(squares / table.classes.size_of_cell) / n,
        )

    @property
    def f_score(self) -> float:
        return _f(self.precision, self.recall)


# --- one-shot functions, scikit-learn style ---------------------------------------------------


def pairwise_f_score(labels_true: ArrayLike, labels_pred: ArrayLike, *, beta: float = 1.0) -> float:
    """Pairwise F_β of two labelings of the same items (integer labels).

    >>> pairwise_f_score([0, 0, 1, 1], [0, 0, 1, 2])  # pairs: truth {01, 23}, prediction {01}: P 1, R 1/2
    0.6666666666666666
    """
    return PairCounts.of(ContingencyTable.from_labels(labels_true, labels_pred)).f_score(beta)


def nmi_score(labels_true: ArrayLike, labels_pred: ArrayLike, *, average: Average = "arithmetic") -> float:
    """Normalized mutual information of two labelings of the same items (integer labels).

    >>> nmi_score([0, 0, 1, 1], [5, 5, 2, 2]), nmi_score([0, 0, 1, 1], [0, 1, 0, 1])  # label values do not matter
    (1.0, 0.0)
    """
    return normalized_mutual_information(ContingencyTable.from_labels(labels_true, labels_pred), average)


def bcubed_f_score(labels_true: ArrayLike, labels_pred: ArrayLike) -> float:
    """BCubed F of two labelings of the same items (integer labels).

    >>> bcubed_f_score([0, 0, 1, 1], [0, 0, 0, 0])  # precision 1/2, recall 1
    0.6666666666666666
    """
    return BCubed.of(ContingencyTable.from_labels(labels_true, labels_pred)).f_score
