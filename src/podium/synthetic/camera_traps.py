"""Synthetic camera-trap sets: truth boxes and a detector's imperfect boxes and classes."""

from __future__ import annotations

from pathlib import Path

import numpy as np


def _box(rng: np.random.Generator) -> tuple[float, float, float, float]:
    w, h = rng.uniform(0.05, 0.4), rng.uniform(0.05, 0.4)
    return rng.uniform(w / 2, 1 - w / 2), rng.uniform(h / 2, 1 - h / 2), w, h


def _text(box: tuple[float, ...]) -> str:
    return " ".join(f"{v:.4f}" for v in box)


def write_tables(
    folder: Path, n_photos: int, seed: int = 0, empty_share: float = 0.3, false_per_photo: float = 0.15
) -> tuple[Path, Path]:
    """``folder/truth.tsv`` (every photo, empty ones with empty BBox) and ``folder/submission/team.tsv``."""
    rng = np.random.default_rng(seed)
    truth_rows, pred_rows = ["Name\tBBox\tClass"], ["Name\tBBox\tClass"]
    for i in range(n_photos):
        name = f"IMG_{i:06d}.jpg"
        animals = 0 if rng.random() < empty_share else int(rng.integers(1, 6))
        if not animals:
            truth_rows.append(f"{name}\t\t")
        for _ in range(animals):
            box, cls = _box(rng), int(rng.random() < 0.6)
            truth_rows.append(f"{name}\t{_text(box)}\t{cls}")
            if rng.random() < 0.85:  # detected, a little off, usually the right class
                jitter = tuple(np.clip(np.array(box) + rng.normal(0, 0.015, 4), 0.01, 0.99))
                pred_rows.append(f"{name}\t{_text(jitter)}\t{cls if rng.random() < 0.85 else 1 - cls}")
                if rng.random() < 0.08:  # a duplicate detection
                    pred_rows.append(f"{name}\t{_text(jitter)}\t{cls}")
        for _ in range(int(rng.poisson(false_per_photo))):  # false detections
            pred_rows.append(f"{name}\t{_text(_box(rng))}\t{int(rng.random() < 0.5)}")
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "submission").mkdir(exist_ok=True)
    truth, submission = folder / "truth.tsv", folder / "submission" / "team.tsv"
    truth.write_text("\n".join(truth_rows) + "\n")
    submission.write_text("\n".join(pred_rows) + "\n")
    return truth, submission.parent


def write_demo(folder: Path) -> tuple[Path, Path]:
    return write_tables(folder, n_photos=300, seed=2019)
