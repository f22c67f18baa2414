"""Synthetic test sets of the fuzzy-jaccard challenge (label layout) and submissions."""

from __future__ import annotations

from pathlib import Path

import imagecodecs
import numpy as np
from numpy.typing import NDArray

from podium.synthetic.fields import smooth_field

DEMO_CLASSES = ("building", "road", "water")


def make_scene(
    shape: tuple[int, int], n_classes: int, rng: np.random.Generator, cell: int = 48
) -> tuple[NDArray[np.uint8], NDArray[np.float32]]:
    """A label image (0 = background, about half the pixels) and the fields it came from.

    Each pixel takes the class whose smooth random field is highest there;
    ``fields[0]`` is the background's.
    """
    fields = np.stack([smooth_field(shape, cell, rng) for _ in range(n_classes + 1)])
    fields[0] += 0.08 * n_classes  # background wins about half the pixels
    return fields.argmax(axis=0).astype(np.uint8), fields


def make_prediction(
    fields: NDArray[np.float32], rng: np.random.Generator, sharpness: float = 25.0, noise: int = 6
) -> list[NDArray[np.uint8]]:
    """Per-class probability maps 0..100 of a plausible, imperfect detector."""
    predictions = []
    for c in range(1, fields.shape[0]):
        others = np.delete(fields, c, axis=0).max(axis=0)
        logit = sharpness * (fields[c] - others) + rng.normal(0.0, 0.6, size=1).astype(np.float32)
        probability = 100.0 / (1.0 + np.exp(-logit))
        probability += rng.integers(-noise, noise + 1, size=probability.shape)
        predictions.append(np.clip(np.rint(probability), 0, 100).astype(np.uint8))
    return predictions


def write_png(path: Path, pixels: NDArray[np.uint8], level: int = 6) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(imagecodecs.png_encode(pixels, level=level))


def write_set(
    folder: Path,
    n_images: int,
    shape: tuple[int, int],
    classes: tuple[str, ...],
    seed: int = 0,
    level: int = 6,
) -> tuple[Path, Path]:
    """Write ``folder/truth`` (classes.txt + label images) and ``folder/submission``."""
    rng = np.random.default_rng(seed)
    truth, submission = folder / "truth", folder / "submission"
    truth.mkdir(parents=True, exist_ok=True)
    (truth / "classes.txt").write_text("".join(f"{c}\n" for c in classes), encoding="utf-8")
    for i in range(n_images):
        stem = f"image_{i:04d}"
        labels, fields = make_scene(shape, len(classes), rng)
        write_png(truth / f"{stem}.png", labels, level)
        for name, prediction in zip(classes, make_prediction(fields, rng)):
            write_png(submission / name / f"{stem}.png", prediction, level)
    return truth, submission


def write_demo(folder: Path) -> tuple[Path, Path]:
    return write_set(folder, n_images=8, shape=(240, 320), classes=DEMO_CLASSES, seed=2015)
