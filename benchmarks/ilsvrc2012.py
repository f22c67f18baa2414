"""ILSVRC 2012: podium against straightforward baselines, in one run.

  (1) Task 1 on the kit's 50,000-line demo: ``podium evaluate`` end to end (process start included).
      Target: under 1 s on one core.
  (2) Task 2 on the kit's demo with the 50,000 XMLs read from the .tgz: time split between reading
      the boxes and scoring, against a straightforward Python loop (tarfile + ElementTree + a loop
      over images, guesses and boxes). Target: >= 10x faster, same errors.
  (3) Average precision for 120 classes x 10,000 boxes: podium's VOC AP (from the positives' ranks) and
      its scikit-learn mode, against calling scikit-learn's average_precision_score per class.
      Target: >= 3x faster, same values.

Every figure is the best of ``--repeats`` runs, wall and CPU seconds (a command's CPU is its
process's). Task 1 against the kit's own code: ``official_code.py``.
Needs ../shared/data/ilsvrc2012 for (1) and (2).
    .venv/bin/python benchmarks/ilsvrc2012.py [--repeats 3]
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tarfile
import xml.etree.ElementTree as ElementTree
from pathlib import Path

import numpy as np
from sklearn.metrics import average_precision_score
from timing import best_of, machine_header

from podium.core.issues import IssueLog
from podium.formats import ilsvrc
from podium.metrics.average_precision import sklearn_average_precision, voc_average_precision
from podium.metrics.imagenet import localization_errors

KIT = Path(__file__).resolve().parents[2] / "shared" / "data" / "ilsvrc2012"


def podium_command(*args: str) -> dict:
    command = [sys.executable, "-m", "podium", "evaluate", *args, "--json", "-", "--quiet", "--workers", "1"]
    return json.loads(subprocess.run(command, capture_output=True, text=True, check=True).stdout)


def task1(repeats: int) -> None:
    run = best_of(
        repeats,
        lambda: podium_command(
            "ilsvrc2012-cls",
            "--truth",
            str(KIT / "ILSVRC2012_validation_ground_truth.txt"),
            "--submission",
            str(KIT / "demo.val.pred.txt"),
        ),
        what="Task 1",
    )
    print(
        f"(1) Task 1, 50,000 images: podium evaluate {run.wall:.2f} s wall, {run.cpu:.2f} s CPU, end to end (target < 1 s); "
        f"error@5 = {run.value['scores']['error@5']:.4f}\n"
    )


def baseline_task2(truth_path: Path, pred_path: Path, boxes_path: Path, meta: ilsvrc.Synsets) -> list[float]:
    """What a hand-written evaluation does: tarfile + ElementTree, then loops."""
    id_of = meta.id_of_wnid
    truth = [int(line.split()[0]) for line in truth_path.read_text().splitlines()]
    boxes: dict[int, list[tuple[int, list[int]]]] = {}
    with tarfile.open(boxes_path, "r:gz") as archive:
        for member in archive:
            if member.isfile() and member.name.endswith(".xml"):
                root = ElementTree.fromstring(archive.extractfile(member).read())  # type: ignore[union-attr]
                index = int(member.name[-12:-4])
                boxes[index] = [
                    (
                        id_of[o.findtext("name")],
                        [int(o.findtext(f"bndbox/{k}")) for k in ("xmin", "ymin", "xmax", "ymax")],
                    )  # type: ignore[arg-type]
                    for o in root.iter("object")
                ]
    errors = [0] * 5
    for i, line in enumerate(pred_path.read_text().splitlines()):
        values = [int(v) for v in line.split()]
        first_right = 5
        for j in range(min(len(values) // 5, 5)):
            label, x1, y1, x2, y2 = values[5 * j : 5 * j + 5]
            for cls, (X1, Y1, X2, Y2) in boxes[i + 1]:
                iw, ih = min(x2, X2) - max(x1, X1) + 1, min(y2, Y2) - max(y1, Y1) + 1
                if label == truth[i] and cls == label and iw > 0 and ih > 0:
                    union = (x2 - x1 + 1) * (y2 - y1 + 1) + (X2 - X1 + 1) * (Y2 - Y1 + 1) - iw * ih
                    if iw * ih / union >= 0.5:
                        first_right = min(first_right, j)
            if first_right < 5:
                break
        for k in range(5):
            errors[k] += first_right > k
    return [e / len(truth) for e in errors]


def task2(repeats: int) -> None:
    truth_path, pred_path, boxes_path = (
        KIT / "ILSVRC2012_validation_ground_truth.txt",
        KIT / "demo.val.pred.det.txt",
        KIT / "ILSVRC2012_bbox_val.tgz",
    )
    meta = ilsvrc.read_meta(KIT / "meta.mat")
    read = best_of(
        repeats,
        lambda: (
            labels := ilsvrc.read_truth_labels(truth_path),
            ilsvrc.read_val_boxes(boxes_path, len(labels), meta.id_of_wnid),
        ),
        what="reading the boxes",
    )
    labels, boxes = read.value

    def score() -> list[float]:
        guesses = ilsvrc.read_guesses(pred_path, len(labels), 5, IssueLog())
        assert guesses is not None
        counts = localization_errors(labels, guesses.values, boxes, guesses.exact_corners)
        return [counts.error(k) for k in range(1, 6)]

    scored = best_of(repeats, score, what="scoring")
    total = best_of(
        repeats,
        lambda: podium_command(
            "ilsvrc2012-loc",
            "--truth",
            str(truth_path),
            "--submission",
            str(pred_path),
            "--set",
            f"boxes={boxes_path}",
            "--set",
            f"meta={KIT / 'meta.mat'}",
        ),
        what="podium evaluate",
    )
    base = best_of(repeats, lambda: baseline_task2(truth_path, pred_path, boxes_path, meta), what="the baseline")
    ours = scored.value
    assert np.allclose(ours, base.value, atol=1e-12) and abs(total.value["scores"]["loc_error"] - ours[4]) < 1e-15, (
        ours,
        base.value,
    )
    print(f"(2) Task 2, 50,000 images, boxes from the .tgz (errors {[round(e, 4) for e in ours]} both); wall s / CPU s")
    print(
        f"    podium: reading the 50,000 XMLs {read.wall:.2f} / {read.cpu:.2f}, reading the submission + scoring {scored.wall:.2f} / {scored.cpu:.2f}"
    )
    print(f"    podium evaluate end to end (process start, meta.mat, checks)   {total.wall:6.2f} / {total.cpu:.2f}")
    print(f"    straightforward Python loop (tarfile, ElementTree, loops)       {base.wall:6.2f} / {base.cpu:.2f}")
    print(f"    podium speed-up: {base.wall / total.wall:.1f}x   target >= 10x\n")


def task3(repeats: int) -> None:
    rng = np.random.default_rng(0)
    n, classes = 10_000, 120
    truth = rng.integers(0, classes, n)
    scores = np.round(rng.random((n, classes)) + 0.5 * (truth[:, None] == np.arange(classes)), 3)  # ties happen
    positive = truth[:, None] == np.arange(classes)[None, :]
    sklearn = best_of(
        repeats,
        lambda: np.array([average_precision_score(positive[:, c], scores[:, c]) for c in range(classes)]),
        what="scikit-learn",
    )
    ours = best_of(repeats, lambda: sklearn_average_precision(positive, scores), what="podium, scikit-learn mode")
    voc = best_of(repeats, lambda: voc_average_precision(positive, scores), what="podium, VOC AP")
    assert np.allclose(ours.value, sklearn.value, atol=1e-12)
    print(f"(3) AP, {classes} classes x {n:,} boxes (same values as scikit-learn to 1e-12): wall s / CPU s")
    print(f"    scikit-learn average_precision_score, per class   {sklearn.wall:6.3f} / {sklearn.cpu:.3f}")
    print(
        f"    podium, scikit-learn mode                          {ours.wall:6.3f} / {ours.cpu:.3f}  ({sklearn.wall / ours.wall:.1f}x)"
    )
    print(
        f"    podium, VOC AP, from the positives' ranks          {voc.wall:6.3f} / {voc.cpu:.3f}  ({sklearn.wall / voc.wall:.1f}x, target >= 3x)"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()
    machine_header(args.repeats)
    if KIT.is_dir():
        task1(args.repeats)
        task2(args.repeats)
    else:
        print(f"{KIT} not found: skipping (1) and (2)\n")
    task3(args.repeats)


if __name__ == "__main__":
    main()
