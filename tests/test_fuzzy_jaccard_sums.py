"""The compiled fuzzy-jaccard sums (:mod:`podium.metrics.fuzzy_jaccard_sums`) against the NumPy passes and the pixel reference."""

from __future__ import annotations

import subprocess
import sys

import numpy as np
import pytest

from podium.metrics import fuzzy_jaccard
from podium.metrics.fuzzy_jaccard import FuzzyJaccardStats
from podium.metrics.fuzzy_jaccard_sums import class_sums, compile_kernels
from test_metric_fuzzy_jaccard import reference_sums


@pytest.fixture(scope="module", autouse=True)
def _loaded() -> None:
    compile_kernels()  # loads the shipped code; the statistics then take the compiled pass


def _random_image(rng: np.random.Generator, n_classes: int, dtype: type) -> tuple[np.ndarray, list, np.ndarray | None]:
    shape = (int(rng.integers(1, 70)), int(rng.integers(1, 70)))
    labels = rng.integers(0, n_classes + 2, size=shape).astype(dtype)  # n_classes + 1: an ignored value
    predictions = [
        None
        if rng.random() < 0.15
        else rng.choice([0, 1, 99, 100, int(rng.integers(0, 101))], size=shape).astype(np.uint8)
        for _ in range(n_classes)
    ]
    roi = None if rng.random() < 0.4 else rng.random(shape) < rng.random()
    return labels, predictions, roi


@pytest.mark.parametrize("seed", range(30))
def test_compiled_statistics_equal_numpy_and_the_pixel_reference(seed: int, monkeypatch: pytest.MonkeyPatch) -> None:
    rng = np.random.default_rng(seed)
    n_classes = int(rng.integers(1, 6))
    labels, predictions, roi = _random_image(rng, n_classes, np.uint16 if seed % 3 == 0 else np.uint8)
    masks = [labels == c for c in range(1, n_classes + 1)]
    assert fuzzy_jaccard._compiled_fits([labels, *predictions], roi)
    compiled = FuzzyJaccardStats.from_labels(labels, predictions, roi)
    compiled_masks = FuzzyJaccardStats.from_masks(masks, predictions, roi)
    monkeypatch.setattr(fuzzy_jaccard, "kernels_loaded", lambda: False)
    assert (
        compiled
        == compiled_masks
        == FuzzyJaccardStats.from_labels(labels, predictions, roi)
        == FuzzyJaccardStats.from_masks(masks, predictions, roi)
    )
    inter, union = reference_sums([masks], [predictions], [roi])
    assert compiled == FuzzyJaccardStats(tuple(inter), tuple(union))


def test_large_sums_are_exact() -> None:
    """Sums far past 32 bits (a 2000x2000 map of 100 is 400 million; 3000x3000 of 255-free values, 900 million)."""
    labels = np.ones((3000, 3000), np.uint8)
    prediction = np.full((3000, 3000), 100, np.uint8)
    assert class_sums(labels, 1, prediction, None) == (9_000_000, 900_000_000, 900_000_000)
    assert class_sums(labels, 1, prediction, labels == 1) == (9_000_000, 900_000_000, 900_000_000)


def test_numba_is_left_alone_where_no_kernel_is_loaded(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(fuzzy_jaccard, "kernels_loaded", lambda: False)
    assert not fuzzy_jaccard._compiled_fits([np.zeros((2, 2), np.uint8)], None)


def test_types_it_is_not_shipped_for_take_numpy() -> None:
    assert not fuzzy_jaccard._compiled_fits([np.zeros((2, 2), np.int64)], None)
    assert not fuzzy_jaccard._compiled_fits([np.zeros((2, 2), np.uint8)], np.zeros((2, 2), np.uint8))


def test_shapes_are_checked() -> None:
    with pytest.raises(ValueError, match="one shape"):
        class_sums(np.zeros((2, 3), np.uint8), 1, np.zeros((3, 2), np.uint8), None)


# In a fresh process: whether evaluating a demo set loaded Numba.
FRESH = r"""
import sys, tempfile
from pathlib import Path
import podium
with tempfile.TemporaryDirectory() as folder:
    demo = podium.demo("fuzzy-jaccard", Path(folder))
    podium.evaluate("fuzzy-jaccard", demo.truth, demo.submission)
print("numba" in sys.modules)
"""


def test_an_evaluation_never_loads_numba_for_the_compiled_pass() -> None:
    """Loading it costs a fresh process more CPU than the pass saves, even on 200 MP of images."""
    out = subprocess.run([sys.executable, "-c", FRESH], capture_output=True, text=True, check=True, timeout=120).stdout
    assert out.strip() == "False"
