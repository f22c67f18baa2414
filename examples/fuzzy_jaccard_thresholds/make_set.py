"""A small synthetic pixel-level test set: colour photos of 'road' (grey), 'water' (blue) and
'vegetation' (green) on brown background, with the truth in podium's label layout.

    python examples/fuzzy_jaccard_thresholds/make_set.py OUT [--images 12] [--size 512]
writes OUT/images/<stem>.png (RGB) and OUT/truth/classes.txt + OUT/truth/<stem>.png (labels).
"""

from __future__ import annotations

import argparse
from pathlib import Path

import numpy as np
from PIL import Image

from podium.synthetic.fuzzy_jaccard import make_scene

CLASSES = ("road", "water", "vegetation")
COLOURS = np.array([[120, 90, 60], [128, 128, 128], [40, 70, 160], [50, 140, 50]], dtype=np.float32)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("out", type=Path)
    parser.add_argument("--images", type=int, default=12)
    parser.add_argument("--size", type=int, default=512)
    args = parser.parse_args()
    rng = np.random.default_rng(7)
    (args.out / "images").mkdir(parents=True, exist_ok=True)
    (args.out / "truth").mkdir(parents=True, exist_ok=True)
    (args.out / "truth" / "classes.txt").write_text("\n".join(CLASSES) + "\n")
    for i in range(args.images):
        labels, _ = make_scene((args.size, args.size), len(CLASSES), rng, cell=64)
        photo = COLOURS[labels] + rng.normal(0, 28, (args.size, args.size, 3))
        Image.fromarray(np.clip(photo, 0, 255).astype(np.uint8)).save(args.out / "images" / f"tile_{i:03d}.png")
        Image.fromarray(labels).save(args.out / "truth" / f"tile_{i:03d}.png")
    print(f"{args.images} images of {args.size}x{args.size} in {args.out}")


if __name__ == "__main__":
    main()
