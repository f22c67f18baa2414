"""Synthetic GlaS-like sets: elliptical glands, some touching, and an imperfect segmentation."""

from __future__ import annotations

from pathlib import Path

import numpy as np
from PIL import Image


def make_glands(shape: tuple[int, int], n_glands: int, rng: np.random.Generator, first_label: int = 1) -> np.ndarray:
    """A label image of ``n_glands`` random ellipses; later ones overwrite (touch) earlier ones."""
    labels = np.zeros(shape, dtype=np.uint16)
    yy, xx = np.mgrid[: shape[0], : shape[1]]
    for k in range(n_glands):
        cy, cx = rng.uniform(0, shape[0]), rng.uniform(0, shape[1])
        ry, rx = rng.uniform(12, shape[0] / 6), rng.uniform(12, shape[1] / 6)
        angle = rng.uniform(0, np.pi)
        dy, dx = yy - cy, xx - cx
        u = dx * np.cos(angle) + dy * np.sin(angle)
        v = -dx * np.sin(angle) + dy * np.cos(angle)
        labels[(u / rx) ** 2 + (v / ry) ** 2 <= 1] = first_label + k
    return labels


def segment(truth: np.ndarray, rng: np.random.Generator, first_label: int = 1) -> np.ndarray:
    """A plausible segmentation: shifted glands, some merged, missed or split, a few false ones."""
    out = np.zeros_like(truth)
    next_label = first_label
    for value in np.unique(truth[truth > 0]):
        if rng.random() < 0.08:
            continue  # missed
        mask = np.roll(truth == value, (int(rng.integers(-4, 5)), int(rng.integers(-4, 5))), axis=(0, 1))
        if rng.random() < 0.1:  # split in two
            cols = np.flatnonzero(mask.any(axis=0))
            half = mask.copy()
            half[:, : cols[len(cols) // 2]] = False
            out[mask & ~half] = next_label
            out[half] = next_label + 1
            next_label += 2
        else:
            out[mask] = next_label
            next_label += 1
    false = make_glands(truth.shape, int(rng.integers(0, 3)), rng, first_label=next_label)
    out[(false > 0) & (out == 0)] = false[(false > 0) & (out == 0)]
    return out


def write_set(folder: Path, n_images: int, shape: tuple[int, int], glands: int, seed: int = 0) -> tuple[Path, Path]:
    """``truth/<stem>_anno.png`` and ``submission/<stem>_seg.png`` (16-bit labels above 255)."""
    rng = np.random.default_rng(seed)
    truth_dir, sub_dir = folder / "truth", folder / "submission"
    truth_dir.mkdir(parents=True, exist_ok=True)
    sub_dir.mkdir(parents=True, exist_ok=True)
    for i in range(n_images):
        stem = f"test{'AB'[i % 2]}_{i // 2 + 1}"
        truth = make_glands(shape, glands, rng, first_label=300)
        Image.fromarray(truth).save(truth_dir / f"{stem}_anno.png")
        Image.fromarray(segment(truth, rng, first_label=1000)).save(sub_dir / f"{stem}_seg.png")
    return truth_dir, sub_dir


def write_demo(folder: Path) -> tuple[Path, Path]:
    return write_set(folder, n_images=6, shape=(261, 388), glands=10, seed=2015)
