"""camera-traps: podium against a straightforward pure-Python implementation of the rules, in one run.

100,000 synthetic photos with ~3 truth and ~4 predicted boxes each. The baseline reads both tables
with the csv module and float(), and runs the rules' greedy loop photo by photo in plain Python.
podium runs as the real command (process start included). Both must give identical points.
Target (issue 5): podium >= 10x faster end to end.

    .venv/bin/python benchmarks/camera_traps.py [--photos 100000]
"""

from __future__ import annotations

import argparse
import csv
import json
import subprocess
import sys
import time
from collections import defaultdict
from pathlib import Path

from podium.synthetic.camera_traps import write_tables

HERE = Path(__file__).resolve().parent


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


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--photos", type=int, default=100_000)
    parser.add_argument("--runs", type=int, default=3)
    args = parser.parse_args()
    folder = HERE / "data" / f"camera-traps-{args.photos}"
    truth, submission = folder / "truth.tsv", folder / "submission" / "team.tsv"
    if not truth.exists():
        write_tables(folder, args.photos, seed=1, empty_share=0.05, false_per_photo=1.5)
    n_truth = sum(1 for line in truth.open() if line.split("\t")[1:2] != [""]) - 1
    n_pred = sum(1 for _ in submission.open()) - 1
    print(f"{args.photos:,} photos: {n_truth:,} truth boxes ({n_truth / args.photos:.1f}/photo), "
          f"{n_pred:,} predicted ({n_pred / args.photos:.1f}/photo)\n")  # fmt: skip

    def run_baseline() -> tuple[float, int]:
        start = time.perf_counter()
        points = baseline(truth, submission)
        return time.perf_counter() - start, points

    def run_podium() -> tuple[float, int]:
        command = [sys.executable, "-m", "podium", "evaluate", "camera-traps", "--truth", str(truth),
                   "--submission", str(submission), "--json", "-", "--quiet"]  # fmt: skip
        start = time.perf_counter()
        doc = json.loads(subprocess.run(command, capture_output=True, text=True, check=True).stdout)
        return time.perf_counter() - start, doc["scores"]["points"]

    base_s, base_points = min(run_baseline() for _ in range(args.runs))
    podium_s, podium_points = min(run_podium() for _ in range(args.runs))
    assert base_points == podium_points, (base_points, podium_points)
    print(f"{'pure-Python baseline (csv, float, greedy loop)':48s} {base_s:6.2f} s   points {base_points}")
    print(f"{'podium evaluate (process start included)':48s} {podium_s:6.2f} s   points {podium_points}")
    print(f"\npodium speed-up: {base_s / podium_s:.1f}x   target >= 10x")


if __name__ == "__main__":
    main()
