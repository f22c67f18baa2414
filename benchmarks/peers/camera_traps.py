"""camera-traps as a user writes it in plain Python: the csv module and float() read both tables,
the rules' greedy loop runs photo by photo; prints the points.

    python benchmarks/peers/camera_traps.py TRUTH SUBMISSION   # prints {"points": ...}
"""

from __future__ import annotations

import csv
import json
import sys
from collections import defaultdict
from pathlib import Path


def read(path: Path) -> dict[str, list[tuple[list[float], int]]]:
    boxes: dict[str, list[tuple[list[float], int]]] = defaultdict(list)
    with open(path, newline="") as f:
        reader = csv.reader(f, delimiter="\t")
        next(reader)
        for name, box, cls in reader:
            boxes[name]  # every photo of the truth, even without boxes
            if box:
                boxes[name].append(([float(v) for v in box.split()], int(cls)))
    return boxes


def iou(a: list[float], b: list[float]) -> float:
    ax1, ay1, ax2, ay2 = a[0] - a[2] / 2, a[1] - a[3] / 2, a[0] + a[2] / 2, a[1] + a[3] / 2
    bx1, by1, bx2, by2 = b[0] - b[2] / 2, b[1] - b[3] / 2, b[0] + b[2] / 2, b[1] + b[3] / 2
    inter = max(0.0, min(ax2, bx2) - max(ax1, bx1)) * max(0.0, min(ay2, by2) - max(ay1, by1))
    return inter / (a[2] * a[3] + b[2] * b[3] - inter)


def baseline(truth_path: Path, pred_path: Path) -> int:
    truth, pred = read(truth_path), read(pred_path)
    points = 0
    for photo, truths in truth.items():
        taken: set[int] = set()
        for box, cls in pred.get(photo, []):
            best, best_iou = -1, 0.5
            for k, (tbox, _) in enumerate(truths):
                if k not in taken:
                    value = iou(box, tbox)
                    if value > best_iou:
                        best, best_iou = k, value
            if best < 0:
                points -= 1
            else:
                taken.add(best)
                points += 1 + (5 if cls == truths[best][1] else -5)
        points -= len(truths) - len(taken)
    return points


if __name__ == "__main__":
    print(json.dumps({"points": baseline(Path(sys.argv[1]), Path(sys.argv[2]))}))
