"""Synthetic face-clustering sets: a truth CSV and a plausible, imperfect submission."""

from __future__ import annotations

from pathlib import Path

import numpy as np
from PIL import Image


def make_labels(
    n_images: int, n_identities: int, rng: np.random.Generator, error_rate: float = 0.1
) -> tuple[np.ndarray, np.ndarray]:
    """Truth identity codes, and cluster numbers 1..K that get ``error_rate`` of the images wrong.

    Wrong images either join another identity's cluster or become singletons,
    as a real clusterer's mistakes do.
    """
    identity = rng.integers(0, n_identities, n_images)
    cluster = identity.copy()
    wrong = np.flatnonzero(rng.random(n_images) < error_rate)
    singletons = rng.random(wrong.size) < 0.5
    cluster[wrong[~singletons]] = rng.integers(0, n_identities, int((~singletons).sum()))
    cluster[wrong[singletons]] = n_identities + np.arange(int(singletons.sum()))
    _, numbers = np.unique(cluster, return_inverse=True)  # renumber 1..K, every number used
    return identity, numbers + 1


def image_names(n_images: int) -> list[str]:
    width = len(str(n_images))
    return [f"face_{i:0{width}d}.jpg" for i in range(n_images)]


def write_csvs(folder: Path, n_images: int, n_identities: int, seed: int = 0) -> tuple[Path, Path]:
    """``folder/truth.csv`` (with header) and ``folder/submission/team.csv`` (the rules' form)."""
    rng = np.random.default_rng(seed)
    identity, cluster = make_labels(n_images, n_identities, rng)
    names = image_names(n_images)
    folder.mkdir(parents=True, exist_ok=True)
    truth = folder / "truth.csv"
    truth.write_text("image,identity\n" + "".join(f"{n},person_{i}\n" for n, i in zip(names, identity)))
    submission = folder / "submission"
    submission.mkdir(exist_ok=True)
    (submission / "team.csv").write_text("".join(f"{n[:-4]}, {c}\n" for n, c in zip(names, cluster)))
    return truth, submission


def write_demo(folder: Path) -> tuple[Path, Path]:
    """The demo set, with ``folder/images``: a small photo per image whose grey level is its person's."""
    truth, submission = write_csvs(folder, n_images=200, n_identities=25, seed=2018)
    images = folder / "images"
    images.mkdir(exist_ok=True)
    people = sorted({line.split(",")[1] for line in truth.read_text().splitlines()[1:]})
    for line in truth.read_text().splitlines()[1:]:
        name, person = line.split(",")
        Image.new("L", (16, 16), 10 * people.index(person)).save(images / name, quality=95)
    return truth, submission
