"""camera-traps: podium against a straightforward pure-Python implementation of the rules, in one run.

100,000 synthetic photos with ~3 truth and ~4 predicted boxes each. The baseline reads both tables
with the csv module and float(), and runs the rules' greedy loop photo by photo in plain Python, in
this process. podium runs three ways: as the real command (process start included); as
``podium.evaluate`` in this process as a new process does, no compiled kernel loaded (the tables are
read by ``str`` methods and NumPy, the boxes matched by NumPy); and again once the kernels are loaded,
as in a service worker (the tables are read by the compiled scan, the boxes matched by the compiled
pass). The truth is read again each time. All must give
identical points. Goal (issue 18): podium >= 5x faster than the baseline.

    .venv/bin/python benchmarks/camera_traps.py [--photos 100000] [--repeats 3]
"""

from __future__ import annotations

import argparse
import importlib
import json
import subprocess
import sys
from pathlib import Path

from peers.camera_traps import baseline
from timing import best_of, machine_header

import podium
from podium.accel.jit import kernels_loaded
from podium.formats import truth_cache
from podium.synthetic.camera_traps import write_tables

HERE = Path(__file__).resolve().parent


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--photos", type=int, default=100_000)
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()
    machine_header(args.repeats)
    folder = HERE / "data" / f"camera-traps-{args.photos}"
    truth, submission = folder / "truth.tsv", folder / "submission" / "team.tsv"
    if not truth.exists():
        write_tables(folder, args.photos, seed=1, empty_share=0.05, false_per_photo=1.5)
    n_truth = sum(1 for line in truth.open() if line.split("\t")[1:2] != [""]) - 1
    n_pred = sum(1 for _ in submission.open()) - 1
    print(
        f"{args.photos:,} photos: {n_truth:,} truth boxes ({n_truth / args.photos:.1f}/photo), "
        f"{n_pred:,} predicted ({n_pred / args.photos:.1f}/photo)\n"
    )

    def command() -> int:
        argv = [
            sys.executable,
            "-m",
            "podium",
            "evaluate",
            "camera-traps",
            "--truth",
            str(truth),
            "--submission",
            str(submission),
            "--json",
            "-",
            "--quiet",
        ]
        return json.loads(subprocess.run(argv, capture_output=True, text=True, check=True).stdout)["scores"]["points"]

    def in_process() -> int:
        truth_cache.clear()
        return podium.evaluate("camera-traps", truth, submission, workers=1).scores["points"]  # type: ignore[return-value]

    base = best_of(args.repeats, lambda: baseline(truth, submission), what="the baseline")
    cli = best_of(args.repeats, command, what="podium evaluate")
    assert not kernels_loaded(), "this process must start without kernels"
    lib = best_of(args.repeats, in_process, what="podium.evaluate")
    load = best_of(1, lambda: importlib.import_module("podium.scoring.kernels"), what="the kernels")
    warm = best_of(args.repeats, in_process, what="podium.evaluate with kernels")
    assert base.value == cli.value == lib.value == warm.value, (base.value, cli.value, lib.value, warm.value)
    print(f"{'':58s} {'wall s':>7s} {'CPU s':>7s}   points {base.value}")
    print(f"{'pure-Python baseline (csv, float, greedy loop)':58s} {base.wall:7.2f} {base.cpu:7.2f}")
    print(
        f"{'podium evaluate (process start included)':58s} {cli.wall:7.2f} {cli.cpu:7.2f}   {base.wall / cli.wall:.1f}x"
    )
    print(
        f"{'podium.evaluate in this process, no kernel loaded':58s} {lib.wall:7.2f} {lib.cpu:7.2f}   {base.wall / lib.wall:.1f}x"
    )
    print(f"{'  loading the compiled kernels once (podium.scoring.kernels)':58s} {load.wall:7.2f} {load.cpu:7.2f}")
    print(
        f"{'podium.evaluate with kernels loaded (a service worker)':58s} {warm.wall:7.2f} {warm.cpu:7.2f}   {base.wall / warm.wall:.1f}x"
    )
    print(
        f"\npodium speed-up: {base.wall / cli.wall:.1f}x as a command, {base.wall / lib.wall:.1f}x in process, "
        f"{base.wall / warm.wall:.1f}x with kernels loaded   goal >= 5x"
    )


if __name__ == "__main__":
    main()
