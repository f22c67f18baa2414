"""Synthetic ILSVRC 2012 files: ground truth, meta.mat, VOC XML boxes and submissions.

The synthetic ``meta.mat`` has the kit's layout: IDs 1..1000 for leaf classes whose
WNIDs are NOT in sorted order, so label-space mistakes show as they do on real data.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from podium.synthetic.demo import Demo

N_CLASSES = 1000


def write_meta(path: Path, seed: int = 0) -> dict[int, str]:
    """A meta.mat with 1000 leaf synsets in shuffled WNID order; returns ID -> WNID."""
    from scipy.io import savemat

    rng = np.random.default_rng(seed)
    wnids = [f"n{v:08d}" for v in rng.choice(10**8, N_CLASSES, replace=False)]
    dtype = [("ILSVRC2012_ID", "O"), ("WNID", "O"), ("words", "O"), ("num_children", "O")]
    synsets = np.array([(i + 1, w, f"class {i + 1}", 0) for i, w in enumerate(wnids)], dtype=dtype)
    path.parent.mkdir(parents=True, exist_ok=True)
    savemat(path, {"synsets": synsets})
    return {i + 1: w for i, w in enumerate(wnids)}


def _guesses(truth: np.ndarray, rng: np.random.Generator, top1: float = 0.6, top5: float = 0.85) -> np.ndarray:
    guesses = rng.integers(1, N_CLASSES + 1, (len(truth), 5))
    u = rng.random(len(truth))
    guesses[u < top1, 0] = truth[u < top1]
    later = (u >= top1) & (u < top5)
    guesses[later, rng.integers(1, 5, int(later.sum()))] = truth[later]
    return guesses


def write_classification(folder: Path, n_images: int = 2000, seed: int = 0) -> Demo:
    rng = np.random.default_rng(seed)
    truth = rng.integers(1, N_CLASSES + 1, n_images)
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "ground_truth.txt").write_text("".join(f"{t}\n" for t in truth))
    (folder / "submission").mkdir(exist_ok=True)
    lines = [" ".join(map(str, g)) for g in _guesses(truth, rng)]
    (folder / "submission" / "team.txt").write_text("\n".join(lines) + "\n")
    return Demo(folder / "ground_truth.txt", folder / "submission")


def _box(rng: np.random.Generator) -> tuple[int, int, int, int]:
    x1, y1 = int(rng.integers(0, 300)), int(rng.integers(0, 200))
    return x1, y1, x1 + int(rng.integers(20, 200)), y1 + int(rng.integers(20, 170))


def write_localization(folder: Path, n_images: int = 1000, seed: int = 0) -> Demo:
    rng = np.random.default_rng(seed)
    wnid_of = write_meta(folder / "meta.mat", seed)
    truth = rng.integers(1, N_CLASSES + 1, n_images)
    (folder / "ground_truth.txt").write_text("".join(f"{t}\n" for t in truth))
    (folder / "boxes").mkdir(exist_ok=True)
    lines = []
    for i, (label, guesses) in enumerate(zip(truth, _guesses(truth, rng))):
        boxes = [_box(rng) for _ in range(int(rng.integers(1, 4)))]
        objects = "".join(
            f"<object><name>{wnid_of[int(label)]}</name><bndbox><xmin>{b[0]}</xmin><ymin>{b[1]}</ymin>"
            f"<xmax>{b[2]}</xmax><ymax>{b[3]}</ymax></bndbox></object>"
            for b in boxes
        )
        (folder / "boxes" / f"ILSVRC2012_val_{i + 1:08d}.xml").write_text(f"<annotation>{objects}</annotation>")
        groups = []
        for g in guesses:
            x1, y1, x2, y2 = boxes[0] if g == label and rng.random() < 0.7 else _box(rng)
            groups.append(f"{g} {x1} {y1} {x2} {y2}")
        lines.append(" ".join(groups))
    (folder / "submission").mkdir(exist_ok=True)
    (folder / "submission" / "team.txt").write_text("\n".join(lines) + "\n")
    return Demo(
        folder / "ground_truth.txt",
        folder / "submission",
        {"boxes": str(folder / "boxes"), "meta": str(folder / "meta.mat")},
    )


def write_fine(folder: Path, n_boxes: int = 600, n_classes: int = 20, seed: int = 0) -> Demo:
    rng = np.random.default_rng(seed)
    classes = np.arange(1, n_classes + 1)
    truth = rng.choice(classes, n_boxes)
    scores = rng.random((n_boxes, n_classes))
    scores[np.arange(n_boxes), truth - 1] += rng.random(n_boxes)  # informative, imperfect
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "truth.txt").write_text("".join(f"{t}\n" for t in truth))
    (folder / "submission").mkdir(exist_ok=True)
    (folder / "submission" / "team.txt").write_text("".join(" ".join(f"{v:.6f}" for v in row) + "\n" for row in scores))
    return Demo(folder / "truth.txt", folder / "submission")
