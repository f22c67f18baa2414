"""A pixel-level participant: per-class probability from the distance to a reference colour.

Follows the contract: reads the images folder named in ./input.txt, writes
./<class>/<stem>.png (8-bit, 0..100) for each image, one image at a time, so that a run
stopped by the time budget still leaves every finished image behind.
    --slow S   sleep S seconds per image (to see the 1 megapixel/s budget cut a run short)
"""

from __future__ import annotations

import os
import sys
import time

import numpy as np
from PIL import Image

REFERENCE = {"road": (128, 128, 128), "water": (40, 70, 160), "vegetation": (50, 140, 50)}
SCALE = 60.0  # colour distance at which the probability has fallen to 1/e


def main() -> None:
    slow = float(sys.argv[sys.argv.index("--slow") + 1]) if "--slow" in sys.argv else 0.0
    folder = open("input.txt", encoding="utf-8").read().strip()
    for name in sorted(os.listdir(folder)):
        pixels = np.asarray(Image.open(os.path.join(folder, name)).convert("RGB"), dtype=np.float32)
        stem = os.path.splitext(name)[0]
        for cls, colour in REFERENCE.items():
            distance = np.linalg.norm(pixels - np.array(colour, np.float32), axis=2)
            probability = np.rint(100 * np.exp(-((distance / SCALE) ** 2))).astype(np.uint8)
            os.makedirs(cls, exist_ok=True)
            Image.fromarray(probability).save(os.path.join(cls, f"{stem}.png"))
        time.sleep(slow)


if __name__ == "__main__":
    main()
