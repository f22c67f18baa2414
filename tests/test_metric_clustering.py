"""Clustering metrics against scikit-learn, a slow pair-enumerating reference and IIR §16.3."""

from __future__ import annotations

import itertools
import math
from fractions import Fraction

import numpy as np
import pytest
from sklearn.metrics import normalized_mutual_info_score
from sklearn.metrics.cluster import pair_confusion_matrix

from podium.metrics.clustering import (
    BCubed,
    ContingencyTable,
    PairCounts,
    _Groups,
    _runs,
    bcubed_f_score,
    nmi_score,
    normalized_mutual_information,
    pairwise_f_score,
)

# Manning, Raghavan, Schütze, Introduction to Information Retrieval, §16.3, figure 16.4:
# cluster 1 = 5 x + 1 o, cluster 2 = 1 x + 4 o + 1 d, cluster 3 = 2 x + 3 d.
IIR_TRUE = [0] * 5 + [1] + [0] + [1] * 4 + [2] + [0] * 2 + [2] * 3
IIR_PRED = [1] * 6 + [2] * 6 + [3] * 5


def table(true, pred) -> ContingencyTable:
    return ContingencyTable.from_labels(np.asarray(true), np.asarray(pred))


def slow_pairs(true, pred) -> tuple[int, int, int]:
    tp = fp = fn = 0
    for i, j in itertools.combinations(range(len(true)), 2):
        same_true, same_pred = true[i] == true[j], pred[i] == pred[j]
        tp += same_true and same_pred
        fp += same_pred and not same_true
        fn += same_true and not same_pred
    return tp, fp, fn


def slow_bcubed(true, pred) -> tuple[Fraction, Fraction]:
    n = len(true)
    precision = recall = Fraction(0)
    for e in range(n):
        both = sum(1 for x in range(n) if true[x] == true[e] and pred[x] == pred[e])
        precision += Fraction(both, sum(1 for x in range(n) if pred[x] == pred[e]))
        recall += Fraction(both, sum(1 for x in range(n) if true[x] == true[e]))
    return precision / n, recall / n


def test_textbook_example() -> None:
    counts = PairCounts.of(table(IIR_TRUE, IIR_PRED))
    assert (counts.tp, counts.fp, counts.fn) == (20, 20, 24)
    assert counts.precision == 0.5
    assert counts.recall == pytest.approx(20 / 44, abs=1e-15)
    assert round(counts.recall, 3) == 0.455
    assert round(counts.f_score(), 3) == 0.476
    assert round(nmi_score(IIR_TRUE, IIR_PRED), 2) == 0.36
    assert nmi_score(IIR_TRUE, IIR_PRED) == pytest.approx(normalized_mutual_info_score(IIR_TRUE, IIR_PRED), abs=1e-15)


def random_labels(rng: np.random.Generator, n: int) -> tuple[np.ndarray, np.ndarray]:
    k_true = int(rng.integers(1, n + 1))
    k_pred = int(rng.integers(1, n + 1))
    true = rng.integers(0, k_true, n)
    pred = rng.integers(0, k_pred, n) if rng.random() < 0.7 else (true * 7 + rng.integers(0, 2, n)) % (k_pred + 1)
    return true, pred


@pytest.mark.parametrize("seed", range(60))
def test_random_labelings_agree_with_sklearn(seed: int) -> None:
    rng = np.random.default_rng(seed)
    true, pred = random_labels(rng, int(rng.integers(1, 400)))
    t = table(true, pred)
    (_tn2, fp2), (fn2, tp2) = pair_confusion_matrix(true, pred)  # ordered pairs
    counts = PairCounts.of(t)
    assert (counts.tp, counts.fp, counts.fn) == (tp2 // 2, fp2 // 2, fn2 // 2)
    for average in ("arithmetic", "geometric", "min", "max"):
        expected = normalized_mutual_info_score(true, pred, average_method=average)
        assert normalized_mutual_information(t, average) == pytest.approx(expected, abs=1e-12)


@pytest.mark.parametrize("seed", range(40))
def test_random_small_labelings_agree_with_pair_enumeration(seed: int) -> None:
    rng = np.random.default_rng(1000 + seed)
    true, pred = random_labels(rng, int(rng.integers(1, 25)))
    counts = PairCounts.of(table(true, pred))
    tp, fp, fn = slow_pairs(true.tolist(), pred.tolist())
    assert (counts.tp, counts.fp, counts.fn) == (tp, fp, fn)
    precision = Fraction(tp, tp + fp) if tp + fp else Fraction(1)
    recall = Fraction(tp, tp + fn) if tp + fn else Fraction(1)
    assert counts.precision == float(precision) and counts.recall == float(recall)
    for beta in (0.5, 1.0, 2.0):
        b2 = Fraction(beta) ** 2
        f = (1 + b2) * precision * recall / (b2 * precision + recall) if precision + recall else 0
        assert counts.f_score(beta) == pytest.approx(float(f), abs=1e-15)
    bc = BCubed.of(table(true, pred))
    p, r = slow_bcubed(true.tolist(), pred.tolist())
    assert bc.precision == pytest.approx(float(p), abs=1e-14)
    assert bc.recall == pytest.approx(float(r), abs=1e-14)


@pytest.mark.parametrize("seed", range(20))
def test_groups_by_runs_bincount_or_unique_agree_with_unique(seed: int) -> None:
    """Sorted labels (runs), dense ones (bincount, absent labels skipped) and sparse ones (np.unique)."""
    rng = np.random.default_rng(seed)
    n = int(rng.integers(0, 300))
    labels = rng.integers(0, int(rng.integers(1, 3 * n + 2)), n)
    count = rng.integers(1, 50, n)
    for variant in (np.sort(labels), labels, labels * 10**12 + 7):
        groups = _Groups.of(variant, count)
        _, inverse, occurrences = np.unique(variant, return_inverse=True, return_counts=True)
        sizes = np.bincount(inverse, weights=count, minlength=occurrences.size).astype(np.int64)
        assert np.array_equal(groups.sizes, sizes) and np.array_equal(groups.size_of_cell, sizes[inverse])
    distinct, occurrences = _runs(np.sort(labels))
    assert all(
        np.array_equal(a, b)
        for a, b in zip((distinct, occurrences), np.unique(labels, return_counts=True), strict=True)
    )


def test_merged_parts_give_the_whole() -> None:
    rng = np.random.default_rng(5)
    true, pred = random_labels(rng, 3000)
    whole = table(true, pred)
    merged = table(true[:0], pred[:0])
    for part in np.array_split(rng.permutation(3000), 7):
        merged = table(true[part], pred[part]).merge(merged)
    for field in ("true", "pred", "count"):
        assert np.array_equal(getattr(whole, field), getattr(merged, field))


@pytest.mark.parametrize(
    ("true", "pred", "nmi"),
    [
        ([0, 0, 0], [5, 5, 5], 1.0),  # one cluster on both sides
        ([0, 1, 2, 3], [3, 2, 1, 0], 1.0),  # all singletons on both sides
        ([0, 0, 1, 1], [1, 1, 0, 0], 1.0),  # identical up to renaming
        ([0, 0, 1, 1], [0, 0, 0, 0], 0.0),  # one side has zero entropy
        ([0, 0, 0, 0], [0, 1, 2, 3], 0.0),
        ([0], [0], 1.0),
    ],
)
def test_nmi_conventions(true, pred, nmi) -> None:
    for average in ("arithmetic", "geometric", "min", "max"):
        assert nmi_score(true, pred, average=average) == nmi


def test_pair_conventions() -> None:
    singletons = PairCounts.of(table([0, 0, 1], [0, 1, 2]))
    assert singletons.precision == 1.0 and singletons.recall == 0.0 and singletons.f_score() == 0.0
    no_true_pairs = PairCounts.of(table([0, 1, 2], [0, 0, 1]))
    assert no_true_pairs.recall == 1.0 and no_true_pairs.precision == 0.0
    both_empty = PairCounts.of(table([0, 1], [0, 1]))
    assert both_empty.precision == both_empty.recall == both_empty.f_score() == 1.0
    assert not math.isnan(pairwise_f_score([0], [0]))
    assert bcubed_f_score([0, 0, 1], [0, 0, 1]) == 1.0


@pytest.mark.parametrize(
    ("true", "pred", "message"),
    [
        ([0, 1], [0], "one length"),
        ([0.5, 1], [0, 1], "integers"),
        ([0, -1], [0, 1], "non-negative"),
    ],
)
def test_input_checks(true, pred, message) -> None:
    with pytest.raises(ValueError, match=message):
        ContingencyTable.from_labels(np.asarray(true), np.asarray(pred))
