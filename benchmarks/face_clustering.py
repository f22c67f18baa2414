"""face-clustering: podium against scikit-learn and pandas, in one run.

  (1) metrics on 5,000,000 images with ~500,000 identities: podium's contingency
      table + pair counts + NMI + BCubed, against scikit-learn's
      ``normalized_mutual_info_score`` + ``pair_confusion_matrix`` on the same labels;
  (2) end to end: ``podium evaluate face-clustering`` (the real command, process
      start included) on a 1,000,000-row truth and submission, against
      ``pandas.read_csv`` of the same two files (reading only, no scoring).

Targets (issue 4): (1) podium >= 3x faster; (2) podium <= 3x pandas. Every figure is the best of
``--repeats`` runs, wall and CPU seconds.

    .venv/bin/pip install -r benchmarks/requirements.txt
    .venv/bin/python benchmarks/face_clustering.py [--repeats 3]
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pandas as pd
from sklearn.metrics import normalized_mutual_info_score
from sklearn.metrics.cluster import pair_confusion_matrix
from timing import best_of, machine_header

from podium.metrics.clustering import BCubed, ContingencyTable, PairCounts, normalized_mutual_information
from podium.synthetic.face_clustering import make_labels, write_csvs

HERE = Path(__file__).resolve().parent


def metrics(n_images: int, n_identities: int, repeats: int) -> None:
    identity, cluster = make_labels(n_images, n_identities, np.random.default_rng(0), error_rate=0.2)

    def ours() -> tuple[float, int]:
        table = ContingencyTable.from_labels(identity, cluster)
        pairs = PairCounts.of(table)
        BCubed.of(table)
        return normalized_mutual_information(table), pairs.tp

    sklearn = best_of(
        repeats,
        lambda: (normalized_mutual_info_score(identity, cluster), pair_confusion_matrix(identity, cluster)),
        what="scikit-learn",
    )
    podium = best_of(repeats, ours, what="podium metrics")
    (nmi, tp), (reference_nmi, reference_pairs) = podium.value, sklearn.value
    assert abs(nmi - reference_nmi) < 1e-12 and 2 * tp == reference_pairs[1, 1]
    print(f"(1) metrics, {n_images:,} images, {n_identities:,} identities (NMI {nmi:.12f} both); wall s / CPU s")
    print(f"    scikit-learn NMI + pair_confusion_matrix   {sklearn.wall:7.2f} / {sklearn.cpu:.2f}")
    print(f"    podium table + pairs + NMI + BCubed         {podium.wall:7.2f} / {podium.cpu:.2f}")
    print(f"    podium speed-up: {sklearn.wall / podium.wall:.1f}x   target >= 3x\n")


def end_to_end(folder: Path, n_rows: int, repeats: int) -> None:
    truth = folder / "truth.csv"
    if not truth.exists():
        write_csvs(folder, n_images=n_rows, n_identities=n_rows // 10, seed=1)
    submission = folder / "submission" / "team.csv"
    shuffled = folder / "shuffled.csv"
    if not shuffled.exists():
        rows = submission.read_text().splitlines(keepends=True)
        np.random.default_rng(2).shuffle(rows)
        shuffled.write_text("".join(rows))

    def podium(path: Path) -> str:
        command = [
            sys.executable,
            "-m",
            "podium",
            "evaluate",
            "face-clustering",
            "--truth",
            str(truth),
            "--submission",
            str(path),
            "--json",
            "-",
            "--quiet",
            "--set",
            "order=ignore",
        ]
        return json.loads(subprocess.run(command, capture_output=True, text=True, check=True).stdout)["status"]

    pandas = best_of(
        repeats,
        lambda: (pd.read_csv(truth), pd.read_csv(submission, header=None, skipinitialspace=True)),
        what="pandas",
    )
    ours = best_of(repeats, lambda: podium(submission), what="podium evaluate")
    mixed = best_of(repeats, lambda: podium(shuffled), what="podium evaluate, shuffled")
    assert ours.value == mixed.value == "scored"
    print(f"(2) end to end, {n_rows:,}-row truth and submission CSVs; wall s / CPU s")
    print(f"    pandas.read_csv of both files (no checks, no scores)  {pandas.wall:6.2f} / {pandas.cpu:.2f}")
    print(f"    podium evaluate (process start, checks, scores)       {ours.wall:6.2f} / {ours.cpu:.2f}")
    print(f"    podium, rows shuffled (name lookups, order=ignore)    {mixed.wall:6.2f} / {mixed.cpu:.2f}")
    print(
        f"    podium / pandas: {ours.wall / pandas.wall:.2f}   target <= 3  (shuffled rows: {mixed.wall / pandas.wall:.2f})"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--images", type=int, default=5_000_000)
    parser.add_argument("--identities", type=int, default=500_000)
    parser.add_argument("--rows", type=int, default=1_000_000)
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()
    machine_header(args.repeats)
    metrics(args.images, args.identities, args.repeats)
    end_to_end(HERE / "data" / "face-clustering", args.rows, args.repeats)


if __name__ == "__main__":
    main()
