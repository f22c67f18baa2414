"""face-clustering: podium against scikit-learn and pandas, in one run.

  (1) metrics on 5,000,000 images with ~500,000 identities: podium's contingency
      table + pair counts + NMI + BCubed, against scikit-learn's
      ``normalized_mutual_info_score`` + ``pair_confusion_matrix`` on the same labels;
  (2) end to end: ``podium evaluate face-clustering`` (the real command, process
      start included) on a 1,000,000-row truth and submission, against
      ``pandas.read_csv`` of the same two files (reading only, no scoring).

Targets (issue 4): (1) podium >= 3x faster; (2) podium <= 3x pandas.

    .venv/bin/pip install -r benchmarks/requirements.txt
    .venv/bin/python benchmarks/face_clustering.py
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pandas as pd
from sklearn.metrics import normalized_mutual_info_score
from sklearn.metrics.cluster import pair_confusion_matrix

from podium.metrics.clustering import BCubed, ContingencyTable, PairCounts, normalized_mutual_information
from podium.synthetic.face_clustering import make_labels, write_csvs

HERE = Path(__file__).resolve().parent


def metrics(n_images: int, n_identities: int) -> None:
    identity, cluster = make_labels(n_images, n_identities, np.random.default_rng(0), error_rate=0.2)
    start = time.perf_counter()
    reference_nmi = normalized_mutual_info_score(identity, cluster)
    reference_pairs = pair_confusion_matrix(identity, cluster)
    sklearn_s = time.perf_counter() - start
    start = time.perf_counter()
    table = ContingencyTable.from_labels(identity, cluster)
    pairs = PairCounts.of(table)
    nmi = normalized_mutual_information(table)
    BCubed.of(table)
    podium_s = time.perf_counter() - start
    assert abs(nmi - reference_nmi) < 1e-12 and 2 * pairs.tp == reference_pairs[1, 1]
    print(f"(1) metrics, {n_images:,} images, {n_identities:,} identities (NMI {nmi:.12f} both)")
    print(f"    scikit-learn NMI + pair_confusion_matrix   {sklearn_s:7.2f} s")
    print(f"    podium table + pairs + NMI + BCubed         {podium_s:7.2f} s")
    print(f"    podium speed-up: {sklearn_s / podium_s:.1f}x   target >= 3x\n")


def end_to_end(folder: Path, n_rows: int, runs: int) -> None:
    truth = folder / "truth.csv"
    if not truth.exists():
        write_csvs(folder, n_images=n_rows, n_identities=n_rows // 10, seed=1)
    submission = folder / "submission" / "team.csv"

    def read_with_pandas() -> float:
        start = time.perf_counter()
        pd.read_csv(truth)
        pd.read_csv(submission, header=None, skipinitialspace=True)
        return time.perf_counter() - start

    shuffled = folder / "shuffled.csv"
    if not shuffled.exists():
        rows = submission.read_text().splitlines(keepends=True)
        np.random.default_rng(2).shuffle(rows)
        shuffled.write_text("".join(rows))

    def podium(path: Path = submission) -> float:
        command = [sys.executable, "-m", "podium", "evaluate", "face-clustering", "--truth", str(truth),
                   "--submission", str(path), "--json", "-", "--quiet", "--set", "order=ignore"]  # fmt: skip
        start = time.perf_counter()
        out = subprocess.run(command, capture_output=True, text=True, check=True).stdout
        elapsed = time.perf_counter() - start
        assert json.loads(out)["status"] == "scored"
        return elapsed

    pandas_s = min(read_with_pandas() for _ in range(runs))
    podium_s = min(podium() for _ in range(runs))
    shuffled_s = min(podium(shuffled) for _ in range(runs))
    print(f"(2) end to end, {n_rows:,}-row truth and submission CSVs")
    print(f"    pandas.read_csv of both files (no checks, no scores)  {pandas_s:6.2f} s")
    print(f"    podium evaluate (process start, checks, scores)       {podium_s:6.2f} s")
    print(f"    podium, rows shuffled (name lookups, order=ignore)    {shuffled_s:6.2f} s")
    print(f"    podium / pandas: {podium_s / pandas_s:.2f}   target <= 3  (shuffled rows: {shuffled_s / pandas_s:.2f})")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--images", type=int, default=5_000_000)
    parser.add_argument("--identities", type=int, default=500_000)
    parser.add_argument("--rows", type=int, default=1_000_000)
    parser.add_argument("--runs", type=int, default=3)
    args = parser.parse_args()
    metrics(args.images, args.identities)
    end_to_end(HERE / "data" / "face-clustering", args.rows, args.runs)


if __name__ == "__main__":
    main()
