"""fuzzy-jaccard throughput: podium against decode-only and a naive baseline, in one run.

Builds (once, cached under benchmarks/data/) a synthetic 4-class test set of at
least 200 megapixels, then measures, on the same PNG files:

  (a) decode only: read + decode every truth and submission file with podium's decoder
  (b) ``podium evaluate`` with 1 worker (the real command, process start included)
  (c) ``podium evaluate`` with 2 workers
  (d) naive baseline: Pillow decode, per-class NumPy boolean indexing

Targets (issue 2): (b) >= 70% of (a); (c)/(b) >= 1.7 on 2 cores; (b) >= 3x (d).

    .venv/bin/python benchmarks/fuzzy_jaccard_throughput.py [--megapixels 200] [--size 2000]
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import time
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

import imagecodecs
import numpy as np
from PIL import Image

from podium.synthetic.fuzzy_jaccard import make_prediction, make_scene, write_png

CLASSES = ("building", "road", "vehicle", "water")
HERE = Path(__file__).resolve().parent


def _write_image(args: tuple[Path, int, int]) -> None:
    folder, index, size = args
    rng = np.random.default_rng(index)
    stem = f"image_{index:04d}"
    labels, fields = make_scene((size, size), len(CLASSES), rng, cell=64)
    write_png(folder / "truth" / f"{stem}.png", labels, level=1)
    # Smooth maps, as a network's quantized softmax output is; level 1 is OpenCV's default.
    for name, prediction in zip(CLASSES, make_prediction(fields, rng, noise=0)):
        write_png(folder / "submission" / name / f"{stem}.png", prediction, level=1)


def build(folder: Path, n_images: int, size: int) -> None:
    marker = folder / "complete.json"
    spec = {"n_images": n_images, "size": size, "classes": list(CLASSES), "version": 2}
    if marker.exists() and json.loads(marker.read_text()) == spec:
        return
    print(f"building {n_images} images of {size}x{size} in {folder} ...", flush=True)
    (folder / "truth").mkdir(parents=True, exist_ok=True)
    (folder / "truth" / "classes.txt").write_text("\n".join(CLASSES) + "\n")
    with ProcessPoolExecutor() as pool:
        list(pool.map(_write_image, [(folder, i, size) for i in range(n_images)]))
    marker.write_text(json.dumps(spec))


def files_of(folder: Path) -> list[Path]:
    truth = sorted((folder / "truth").glob("*.png"))
    return truth + [folder / "submission" / c / p.name for p in truth for c in CLASSES]


def decode_only(folder: Path) -> float:
    start = time.perf_counter()
    for path in files_of(folder):
        imagecodecs.png_decode(path.read_bytes())
    return time.perf_counter() - start


def podium(folder: Path, workers: int) -> tuple[float, float]:
    command = [
        sys.executable, "-m", "podium", "evaluate", "fuzzy-jaccard",
        "--truth", str(folder / "truth"), "--submission", str(folder / "submission"),
        "--workers", str(workers), "--json", "-", "--quiet",
    ]  # fmt: skip
    start = time.perf_counter()
    out = subprocess.run(command, capture_output=True, text=True, check=True).stdout
    return time.perf_counter() - start, json.loads(out)["scores"]["fuzzy_jaccard"]


def naive(folder: Path) -> tuple[float, float]:
    """What a hand-written scoring script typically does."""
    start = time.perf_counter()
    inter = np.zeros(len(CLASSES))
    union = np.zeros(len(CLASSES))
    for truth_path in sorted((folder / "truth").glob("*.png")):
        labels = np.array(Image.open(truth_path))
        roi = labels > 0
        for c, name in enumerate(CLASSES):
            p = np.array(Image.open(folder / "submission" / name / truth_path.name)).astype(np.int64)[roi]
            g = np.where(labels[roi] == c + 1, 100, 0)
            inter[c] += np.minimum(p, g).sum()
            union[c] += np.maximum(p, g).sum()
    return time.perf_counter() - start, float(np.mean(inter / union))


def best_of(runs: int, measure):  # type: ignore[no-untyped-def]
    results = [measure() for _ in range(runs)]
    return min(results, key=lambda r: r[0] if isinstance(r, tuple) else r)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--megapixels", type=float, default=200)
    parser.add_argument("--size", type=int, default=2000, help="image side in pixels")
    parser.add_argument("--runs", type=int, default=2, help="repetitions; the best is kept")
    parser.add_argument("--data", type=Path, default=HERE / "data" / "fuzzy-jaccard")
    args = parser.parse_args()
    n_images = int(np.ceil(args.megapixels * 1e6 / args.size**2))
    build(args.data, n_images, args.size)
    megapixels = n_images * args.size**2 / 1e6
    n_files = len(files_of(args.data))
    print(f"test set: {n_images} images x {len(CLASSES)} classes = {megapixels:.0f} MP, {n_files} PNG files\n")

    decode_s = best_of(args.runs, lambda: decode_only(args.data))
    one_s, one_score = best_of(args.runs, lambda: podium(args.data, 1))
    two_s, two_score = best_of(args.runs, lambda: podium(args.data, 2))
    naive_s, naive_score = best_of(args.runs, lambda: naive(args.data))
    assert one_score == two_score, (one_score, two_score)
    assert abs(one_score - naive_score) < 1e-12, (one_score, naive_score)

    rows = [
        ("(a) decode only (imagecodecs)", decode_s),
        ("(b) podium evaluate, 1 worker", one_s),
        ("(c) podium evaluate, 2 workers", two_s),
        ("(d) naive: Pillow + boolean indexing", naive_s),
    ]
    print(f"{'measure':40s} {'seconds':>8s} {'MP/s':>8s}")
    for name, seconds in rows:
        print(f"{name:40s} {seconds:8.2f} {megapixels / seconds:8.1f}")
    print(f"\nscore {one_score:.12f} (1 worker) == {two_score:.12f} (2 workers), naive {naive_score:.12f}")
    print(f"(b) / (a) throughput: {decode_s / one_s:6.2f}   target >= 0.70")
    print(f"(c) / (b) speed-up:   {one_s / two_s:6.2f}   target >= 1.70")
    print(f"(b) / (d) speed-up:   {naive_s / one_s:6.2f}   target >= 3.00")


if __name__ == "__main__":
    main()
