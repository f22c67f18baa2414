"""The benchmarks' transcription of the organizers' code (``benchmarks/official_transcription.py``)
gives the official values on the GlaS fixture and podium's on random images, so that the speed
comparison of ``benchmarks/official_code.py`` is against code that computes the same thing."""

from __future__ import annotations

import importlib.util
import math
import sys
from pathlib import Path

import numpy as np
import pytest
from PIL import Image

from podium.metrics.object_segmentation import image_stats

ROOT = Path(__file__).resolve().parents[1]
_spec = importlib.util.spec_from_file_location(
    "official_transcription", ROOT / "benchmarks" / "official_transcription.py"
)
assert _spec and _spec.loader
transcription = importlib.util.module_from_spec(_spec)
sys.modules["official_transcription"] = transcription
_spec.loader.exec_module(transcription)

# The organizers' MATLAB code (v6), run in Octave 7.3 on shared/data/glas-fixture: F1, Dice, Hausdorff per image.
OFFICIAL = {
    1: (0.714285714286, 0.770418686291, 195.047305572),
    2: (1.0, 0.89498848525, 70.6106104352),
    3: (1.0, 0.985365272049, 10.798029055),
    4: (1.0, 0.967007607798, 8.75605856794),
}


@pytest.mark.parametrize("index", [1, 2, 3, 4])
def test_the_fixture_gives_the_official_values(shared: Path, index: int) -> None:
    folder = shared / "data" / "glas-fixture"
    g = np.asarray(Image.open(folder / "truth" / f"testA_{index}_anno.png"))
    s = np.asarray(Image.open(folder / "submission" / f"testA_{index}_seg.png"))
    got = (transcription.f1_score(s, g), transcription.object_dice(s, g), transcription.object_hausdorff(s, g))
    assert got == pytest.approx(OFFICIAL[index], rel=1e-11)


def random_labels(rng: np.random.Generator, shape: tuple[int, int], n: int) -> np.ndarray:
    image = np.zeros(shape, dtype=np.uint16)
    for label in range(1, n + 1):
        y, x = rng.integers(0, shape[0]), rng.integers(0, shape[1])
        image[y : y + rng.integers(2, 12), x : x + rng.integers(2, 12)] = label
    return image


@pytest.mark.parametrize("seed", range(25))
def test_dice_and_hausdorff_equal_podiums(seed: int) -> None:
    rng = np.random.default_rng(seed)
    g = random_labels(rng, (30, 40), int(rng.integers(1, 7)))
    s = random_labels(rng, (30, 40), int(rng.integers(1, 7)))
    stats = image_stats(g, s, math.inf)
    assert transcription.object_dice(s, g) == pytest.approx(stats.object_dice, rel=1e-12)
    assert transcription.object_hausdorff(s, g) == pytest.approx(stats.object_hausdorff, rel=1e-12)


@pytest.mark.parametrize("seed", range(25))
def test_f1_counts_false_negatives_as_the_code_does(seed: int) -> None:
    """TP and FP as podium counts them; FN the ground-truth objects that no segmented object chose."""
    rng = np.random.default_rng(100 + seed)
    g = random_labels(rng, (30, 40), int(rng.integers(1, 7)))
    s = random_labels(rng, (30, 40), int(rng.integers(1, 7)))
    stats = image_stats(g, s, math.inf)
    chosen = set()
    for label in set(np.unique(s).tolist()) - {0}:
        under = g[s == label]
        under = under[under > 0]
        if under.size:
            values, counts = np.unique(under, return_counts=True)
            chosen.add(int(values[np.argmax(counts)]))
    fn = len(set(np.unique(g).tolist()) - {0}) - len(chosen)
    got = transcription.f1_score(s, g)
    if stats.tp:
        assert got == pytest.approx(2 * stats.tp / (2 * stats.tp + stats.fp + fn), rel=1e-12)
    else:
        assert math.isnan(got) or got == (1.0 if not (stats.fp or stats.fn) else 0.0)


def test_eval_flat_matches_podium(tmp_path: Path) -> None:
    rng = np.random.default_rng(1)
    truth, guesses = rng.integers(1, 11, 300), rng.integers(1, 11, (300, 5))
    (tmp_path / "truth.txt").write_text("".join(f"{t}\n" for t in truth))
    (tmp_path / "pred.txt").write_text("".join(" ".join(map(str, row)) + "\n" for row in guesses))
    for k in range(1, 6):
        expected = np.mean([t not in row[:k] for t, row in zip(truth, guesses)])
        assert transcription.eval_flat(tmp_path / "pred.txt", tmp_path / "truth.txt", k) == pytest.approx(
            expected, abs=1e-15
        )
