"""Arrays in the other byte order (big-endian on this machine: a 16-bit TIFF of mode ``I;16B``,
a file read with ``>u2``) score exactly as their native twins, through every public metric
function and through the label image reader."""

from __future__ import annotations

import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from PIL import Image

from podium import metrics
from podium.formats.label_images import read_label_image

SWAPPED = ">" if sys.byteorder == "little" else "<"


def _swapped(values: Any, kind: str) -> np.ndarray:
    """``values`` as an array of ``kind`` in the byte order this machine does not use."""
    return np.asarray(values).astype(np.dtype(kind).newbyteorder(SWAPPED))


def _labels(seed: int) -> np.ndarray:
    rng = np.random.default_rng(seed)
    labels = np.zeros((40, 50), np.uint16)
    for code in range(1, 9):
        y, x = rng.integers(0, 30), rng.integers(0, 40)
        labels[y : y + rng.integers(3, 10), x : x + rng.integers(3, 10)] = code * 300
    return labels


def _boxes(seed: int) -> np.ndarray:
    rng = np.random.default_rng(seed)
    xy, wh = rng.uniform(0.2, 0.8, (12, 2)), rng.uniform(0.05, 0.3, (12, 2))
    return np.column_stack([rng.integers(0, 3, 12), xy, wh, rng.integers(0, 2, 12)]).astype(np.float64)


CASES: dict[str, tuple[Callable[..., Any], Callable[[int], tuple[np.ndarray, ...]], str]] = {
    "object_f1_score": (metrics.object_f1_score, lambda s: (_labels(s), _labels(s + 1)), "u2"),
    "object_dice_score": (metrics.object_dice_score, lambda s: (_labels(s), _labels(s + 1)), "u4"),
    "object_hausdorff_distance": (metrics.object_hausdorff_distance, lambda s: (_labels(s), _labels(s + 1)), "i8"),
    "fuzzy_jaccard_score": (
        metrics.fuzzy_jaccard_score,
        lambda s: (
            np.random.default_rng(s).integers(0, 2, (2, 9, 9)) * 100,
            np.random.default_rng(s + 1).integers(0, 101, (2, 9, 9)),
        ),
        "i2",
    ),
    "pairwise_f_score": (
        metrics.pairwise_f_score,
        lambda s: (np.random.default_rng(s).integers(0, 5, 60), np.random.default_rng(s + 1).integers(0, 5, 60)),
        "i4",
    ),
    "bcubed_f_score": (
        metrics.bcubed_f_score,
        lambda s: (np.random.default_rng(s).integers(0, 5, 60), np.random.default_rng(s + 1).integers(0, 5, 60)),
        "u2",
    ),
    "nmi_score": (
        metrics.nmi_score,
        lambda s: (np.random.default_rng(s).integers(0, 5, 60), np.random.default_rng(s + 1).integers(0, 5, 60)),
        "i8",
    ),
    "camera_trap_score": (metrics.camera_trap_score, lambda s: (_boxes(s), _boxes(s + 1)), "f8"),
    "point_counts": (lambda t, p: metrics.point_counts(t, p).points, lambda s: (_boxes(s), _boxes(s + 1)), "f8"),
    "top_k_error": (
        metrics.top_k_error,
        lambda s: (np.random.default_rng(s).integers(1, 6, 30), np.random.default_rng(s + 1).integers(1, 6, (30, 5))),
        "i4",
    ),
    "average_precision_score": (
        metrics.average_precision_score,
        lambda s: (np.random.default_rng(s).integers(0, 2, 50), np.random.default_rng(s + 1).random(50)),
        "f8",
    ),
}


def test_every_public_metric_is_covered() -> None:
    assert set(CASES) | {"localization_error"} == set(metrics.__all__)


@pytest.mark.parametrize("name", sorted(CASES))
def test_public_metrics_read_either_byte_order(name: str) -> None:
    """Each argument in the other byte order (one kind of integer or float per function): the same score."""
    function, make, kind = CASES[name]
    truth, pred = make(3)
    expected = function(truth, pred)
    swapped = function(_swapped(truth, kind), _swapped(pred, kind))
    assert swapped == expected or (np.isnan(swapped) and np.isnan(expected))


def test_localization_error_reads_either_byte_order() -> None:
    guesses = np.array([[(7, 0, 0, 9, 9), (3, 1, 1, 5, 5)], [(3, 0, 0, 4, 9), (7, 2, 2, 9, 9)]], dtype=np.float64)
    boxes = [[(7, 0, 0, 4, 9)], [(7, 0, 0, 9, 9)]]
    assert metrics.localization_error(
        _swapped([7, 7], "i4"), _swapped(guesses, "f8"), boxes
    ) == metrics.localization_error([7, 7], guesses, boxes)


def test_a_big_endian_16_bit_tiff_reads_in_native_order(tmp_path: Path) -> None:
    """Pillow's ``I;16B`` decodes to ``>u2``; the reader hands the kernels native integers."""
    labels = _labels(5)
    path = tmp_path / "big.tif"
    Image.frombytes("I;16B", labels.shape[::-1], labels.astype(">u2").tobytes()).save(path)
    read = read_label_image(path)
    assert read.dtype.isnative and np.array_equal(read, labels)
    assert metrics.object_f1_score(read, labels) == 1.0


def test_a_big_endian_tiff_scores_end_to_end(tmp_path: Path) -> None:
    """The GlaS demo with one prediction rewritten as a big-endian 16-bit TIFF scores as before (0.8.5: exit 70, TypingError)."""
    from conftest import run_json
    from podium.challenges import get

    demo = get("glas").write_demo(tmp_path)
    code, before = run_json("glas", demo.truth, demo.submission)
    png = sorted(demo.submission.glob("*.png"))[0]
    labels = read_label_image(png)
    Image.frombytes("I;16B", labels.shape[::-1], labels.astype(">u2").tobytes()).save(png.with_suffix(".tif"))
    png.unlink()
    assert Image.open(png.with_suffix(".tif")).mode == "I;16B"
    code_after, after = run_json("glas", demo.truth, demo.submission)
    assert code == code_after == 0 and before["scores"] == after["scores"]
