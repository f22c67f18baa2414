"""The fuzzy Jaccard kernel against a slow pixel-by-pixel reference and the seed's example."""

from __future__ import annotations

import random
from fractions import Fraction

import numpy as np
import pytest

from podium.metrics.fuzzy_jaccard import FuzzyJaccardStats, ImageSums, fuzzy_jaccard_score

# The worked example of the rules (seed 000): a 5x5 cross and a prediction.
SEED_TRUTH = np.array(
    [
        [0, 0, 100, 0, 0],
        [0, 0, 100, 0, 0],
        [100, 100, 100, 100, 100],
        [0, 0, 100, 0, 0],
        [0, 0, 100, 0, 0],
    ]
)
SEED_PREDICTION = np.array(
    [
        [0, 0, 90, 0, 0],
        [0, 20, 90, 0, 0],
        [100, 100, 100, 100, 100],
        [0, 10, 90, 0, 0],
        [0, 0, 90, 0, 0],
    ]
)


def reference_sums(truth_images, prediction_images, roi_images):
    """Σ min(P, G) and Σ max(P, G) per class, pixel by pixel, G = 100·truth."""
    n_classes = len(truth_images[0])
    inter = [0] * n_classes
    union = [0] * n_classes
    for truths, predictions, roi in zip(truth_images, prediction_images, roi_images):
        for c in range(n_classes):
            height, width = truths[c].shape
            for y in range(height):
                for x in range(width):
                    if roi is not None and not roi[y, x]:
                        continue
                    g = 100 if truths[c][y, x] else 0
                    p = 0 if predictions[c] is None else int(predictions[c][y, x])
                    inter[c] += min(p, g)
                    union[c] += max(p, g)
    return inter, union


def test_seed_worked_example_every_pixel() -> None:
    score = fuzzy_jaccard_score(SEED_TRUTH[None], SEED_PREDICTION[None])
    assert score == pytest.approx(860 / 930, abs=1e-15)
    stats = FuzzyJaccardStats.from_masks([SEED_TRUTH == 100], [SEED_PREDICTION.astype(np.uint8)])
    assert stats == FuzzyJaccardStats((860,), (930,))


def test_seed_worked_example_background_excluded() -> None:
    # With the background outside the ROI only the cross counts: 860 / 900.
    score = fuzzy_jaccard_score(SEED_TRUTH[None], SEED_PREDICTION[None], roi=SEED_TRUTH == 100)
    assert score == pytest.approx(860 / 900, abs=1e-15)


@pytest.mark.parametrize("seed", range(40))
def test_random_sets_match_pixel_reference(seed: int) -> None:
    rng = np.random.default_rng(seed)
    n_classes = int(rng.integers(1, 5))
    truth_images, prediction_images, roi_images = [], [], []
    stats = FuzzyJaccardStats.zeros(n_classes)
    for _ in range(int(rng.integers(1, 4))):
        shape = tuple(int(v) for v in rng.integers(1, 12, size=2))
        labels = rng.integers(0, n_classes + 1, size=shape)
        truths = [labels == c for c in range(1, n_classes + 1)]
        predictions = [
            None
            if rng.random() < 0.2
            else rng.choice([0, 1, 50, 99, 100, int(rng.integers(0, 101))], size=shape).astype(np.uint8)
            for _ in range(n_classes)
        ]
        roi = None if rng.random() < 0.4 else rng.random(shape) < 0.7
        truth_images.append(truths)
        prediction_images.append(predictions)
        roi_images.append(roi)
        from_masks = FuzzyJaccardStats.from_masks(truths, predictions, roi)
        assert FuzzyJaccardStats.from_labels(labels, predictions, roi) == from_masks
        stats = stats.merge(from_masks)
    inter, union = reference_sums(truth_images, prediction_images, roi_images)
    assert stats.intersection == tuple(inter)
    assert stats.union == tuple(union)
    expected = [float(Fraction(i, u)) if u else np.nan for i, u in zip(inter, union)]
    np.testing.assert_allclose(stats.compute(), expected, rtol=0, atol=1e-15)


def test_merge_order_does_not_matter() -> None:
    rng = np.random.default_rng(7)
    parts = []
    for _ in range(30):
        labels = rng.integers(0, 4, size=(9, 7))
        predictions = [rng.integers(0, 101, size=(9, 7)).astype(np.uint8) for _ in range(3)]
        parts.append(FuzzyJaccardStats.from_masks([labels == c for c in (1, 2, 3)], predictions, labels > 0))
    forward = FuzzyJaccardStats.zeros(3)
    for part in parts:
        forward = forward.merge(part)
    shuffled = parts[:]
    random.Random(1).shuffle(shuffled)
    backward = FuzzyJaccardStats.zeros(3)
    for part in shuffled:
        backward = part.merge(backward)
    assert forward == backward
    assert np.array_equal(forward.compute(), backward.compute())


def test_missing_prediction_counts_as_zeros() -> None:
    truth = np.array([[True, False], [True, True]])
    assert FuzzyJaccardStats.from_masks([truth], [None]) == FuzzyJaccardStats.from_masks(
        [truth], [np.zeros((2, 2), np.uint8)]
    )


def test_undefined_class_is_nan_and_left_out_of_the_mean() -> None:
    truth = np.zeros((2, 3, 3), dtype=bool)
    truth[0, 0, 0] = True
    prediction = np.zeros((2, 3, 3), dtype=np.uint8)
    prediction[0, 0, 0] = 40
    per_class = fuzzy_jaccard_score(truth, prediction, average=None)
    assert per_class[0] == pytest.approx(0.4, abs=1e-15)
    assert np.isnan(per_class[1])
    assert fuzzy_jaccard_score(truth, prediction) == pytest.approx(0.4, abs=1e-15)
    assert np.isnan(fuzzy_jaccard_score(np.zeros((1, 2, 2), bool), np.zeros((1, 2, 2), np.uint8)))


@pytest.mark.parametrize(
    ("truth", "prediction", "message"),
    [
        (np.zeros((1, 2, 2)), np.zeros((1, 2, 3), np.uint8), "one shape"),
        (np.full((1, 2, 2), 50), np.zeros((1, 2, 2), np.uint8), "only 0 and 100"),
        (np.zeros((1, 2, 2)), np.full((1, 2, 2), 101), "integers from 0 to 100"),
        (np.zeros((1, 2, 2)), np.full((1, 2, 2), -1), "integers from 0 to 100"),
        (np.zeros((1, 2, 2)), np.full((1, 2, 2), 0.5), "integers from 0 to 100"),
    ],
)
def test_one_shot_input_checks(truth, prediction, message) -> None:
    with pytest.raises(ValueError, match=message):
        fuzzy_jaccard_score(truth, prediction)


def test_merge_refuses_other_class_counts() -> None:
    with pytest.raises(ValueError):
        FuzzyJaccardStats.zeros(2).merge(FuzzyJaccardStats.zeros(3))


def numpy_reference(labels, predictions, roi):
    """The statistics by boolean indexing in int64, the plain way (exact at any size)."""
    inside = np.ones(labels.shape, bool) if roi is None else roi
    inter, union = [], []
    for c, p in enumerate(predictions):
        g = (labels == c + 1) & inside
        values = np.zeros(labels.shape, np.int64) if p is None else p.astype(np.int64)
        inter.append(int(values[g].sum()))
        union.append(int(100 * g.sum() + values[inside].sum() - values[g].sum()))
    return FuzzyJaccardStats(tuple(inter), tuple(union))


@pytest.mark.parametrize("height", [1, 127, 128, 129, 257, 258, 600])
def test_images_of_many_row_blocks_sum_exactly(height: int) -> None:
    """The NumPy passes go by blocks of rows summed in uint16: every block boundary, and the
    largest byte in every pixel of a tall image, still give the exact sums."""
    rng = np.random.default_rng(height)
    width = int(rng.integers(1, 40))
    labels = rng.integers(0, 4, size=(height, width)).astype(np.uint16)
    predictions = [
        np.full((height, width), 255, np.uint8),
        rng.integers(0, 101, size=(height, width)).astype(np.uint8),
        None,
    ]
    for roi in (None, labels != 0, rng.random((height, width)) < 0.5):
        expected = numpy_reference(labels, predictions, roi)
        assert FuzzyJaccardStats.from_labels(labels, predictions, roi) == expected
        assert FuzzyJaccardStats.from_labels(labels.astype(np.int64), predictions, roi) == expected
        masks = [labels == c for c in (1, 2, 3)]
        assert FuzzyJaccardStats.from_masks(masks, predictions, roi) == expected
        strided = [None if p is None else np.repeat(p[..., None], 2, axis=2)[..., 0] for p in predictions]
        assert FuzzyJaccardStats.from_labels(labels, strided, roi) == expected


def test_image_sums_take_each_prediction_when_added() -> None:
    """:class:`ImageSums` takes a class's sums as it is added, so one buffer can hold each map in turn."""
    rng = np.random.default_rng(7)
    labels = rng.integers(0, 3, size=(300, 50)).astype(np.uint8)
    maps = [rng.integers(0, 101, size=labels.shape).astype(np.uint8) for _ in range(2)]
    sums, buffer = ImageSums.of_labels(labels, labels != 0), np.empty(labels.shape, np.uint8)
    for p in maps:
        buffer[:] = p
        sums.add(buffer)
    buffer[:] = 0
    assert sums.stats == numpy_reference(labels, maps, labels != 0)


def test_predictions_of_another_type_are_refused() -> None:
    with pytest.raises(ValueError, match="uint8"):
        FuzzyJaccardStats.from_labels(np.ones((2, 2), np.uint8), [np.ones((2, 2), np.int64)])
