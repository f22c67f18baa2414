"""Scoring one submission on a Dask cluster against local processes, and how the cost grows with the items.

For each test set, in one run and on the same files, :func:`podium.scoring.engine.evaluate`
is timed in this process (no process start, the result document written apart),
the truth already read once (its parse is cached per process,
:mod:`podium.formats.truth_cache`; the first, inline evaluation that reads it is timed too):

  (1) inline, 1 worker                       (3) Dask, 1 worker of 1 thread
  (2) local process pool, 2 workers          (4) Dask, 2 workers of 1 thread each

The Dask workers run in their own processes (``LocalCluster``, started before
timing; its start-up is printed apart). Every mode must give the same result
document (the time stamp aside) before any time is printed. CPU seconds are
those of this process and of all its descendants (``timing.cpu_seconds(live=True)``). Targets (issue 16): (4)/(3) >= 1.7x; (4) at most 10% slower
than (2).

Then the growth: (4) on 1/4, 1/2 and all of each set, with the peak resident
memory of podium's process and of each Dask worker (VmHWM, reset before each
run through ``/proc/PID/clear_refs``). A job of one item (ILSVRC) is scored in
podium's process, not on the cluster (:func:`podium.scoring.engine._pool`).

Test sets: fuzzy-jaccard, 50 images of 2000x2000 (200 MP, built by
fuzzy_jaccard_throughput.py's code); glas, 200 synthetic images of 775x522 with
15 glands; ilsvrc2012-loc, the kit's 50,000 validation images and boxes (needs
``../shared/data/ilsvrc2012``; left out without it).

    .venv/bin/python benchmarks/dask_scaling.py [--repeats 3] [--sets fuzzy-jaccard,glas,ilsvrc2012-loc]
"""

from __future__ import annotations

import argparse
import json
import logging
import os
import shutil
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from distributed import Client, LocalCluster
from fuzzy_jaccard_throughput import CLASSES
from fuzzy_jaccard_throughput import build as build_fuzzy
from timing import best_of, machine_header

from podium.accel.allocator import keep_large_blocks
from podium.core.result import Result
from podium.formats import truth_cache
from podium.scoring import engine
from podium.synthetic.glas import write_set

HERE = Path(__file__).resolve().parent
KIT = HERE.parents[1] / "shared" / "data" / "ilsvrc2012"
FRACTIONS = (0.25, 0.5, 1.0)


class Case:
    def __init__(
        self, challenge: str, truth: Path, submission: Path, settings: dict[str, str], items: int, what: str
    ) -> None:
        self.challenge, self.truth, self.submission, self.settings, self.items, self.what = (
            challenge,
            truth,
            submission,
            settings,
            items,
            what,
        )


def fuzzy_case(fraction: float) -> Case:
    whole = HERE / "data" / "fuzzy-jaccard-200mp"
    build_fuzzy(whole, 50, 2000)
    n = round(50 * fraction)
    folder = _subset(whole, f"fuzzy-jaccard-{n}", lambda d: _copy_fuzzy(whole, d, n))
    return Case(
        "fuzzy-jaccard",
        folder / "truth",
        folder / "submission",
        {},
        n,
        f"{n} images of 2000x2000, {len(CLASSES)} classes",
    )


def _copy_fuzzy(whole: Path, target: Path, n: int) -> None:
    stems = sorted(p.name for p in (whole / "truth").glob("*.png"))[:n]
    (target / "truth").mkdir(parents=True)
    shutil.copy(whole / "truth" / "classes.txt", target / "truth")
    for name in stems:
        shutil.copy(whole / "truth" / name, target / "truth" / name)
        for c in CLASSES:
            (target / "submission" / c).mkdir(parents=True, exist_ok=True)
            shutil.copy(whole / "submission" / c / name, target / "submission" / c / name)


def glas_case(fraction: float) -> Case:
    n = round(200 * fraction)
    folder = _subset(
        HERE / "data", f"glas-{n}", lambda d: write_set(d, n_images=n, shape=(522, 775), glands=15, seed=16)
    )
    return Case("glas", folder / "truth", folder / "submission", {}, n, f"{n} images of 775x522, 15 glands")


def ilsvrc_case(fraction: float) -> Case | None:
    if not (KIT / "ILSVRC2012_bbox_val.tgz").exists():
        return None
    n = round(50_000 * fraction)

    def write(folder: Path) -> None:
        folder.mkdir(parents=True)
        for name in ("ILSVRC2012_validation_ground_truth.txt", "demo.val.pred.det.txt"):
            lines = (KIT / name).read_text().splitlines(keepends=True)[:n]
            (folder / name).write_text("".join(lines))

    folder = _subset(HERE / "data", f"ilsvrc2012-loc-{n}", write)
    settings = {"boxes": str(KIT / "ILSVRC2012_bbox_val.tgz"), "meta": str(KIT / "meta.mat")}
    return Case(
        "ilsvrc2012-loc",
        folder / "ILSVRC2012_validation_ground_truth.txt",
        folder / "demo.val.pred.det.txt",
        settings,
        n,
        f"{n:,} images, the kit's boxes and demo guesses",
    )


def _subset(parent: Path, name: str, write: Callable[[Path], None]) -> Path:
    folder = parent / name
    if not (folder / "complete").exists():
        shutil.rmtree(folder, ignore_errors=True)
        write(folder)
        (folder / "complete").write_text("")
    return folder


def document(result: Result) -> dict[str, Any]:
    """The result document without the time it was made."""
    data = json.loads(result.to_json())
    data["signature"].pop("created")
    return data


TWO_WORKERS = [""]  # the address of the cluster with two workers, once started


def timed(case: Case, repeats: int, **how: Any) -> tuple[float, float, dict[str, Any]]:
    """Best wall seconds of ``repeats`` evaluations (the document written apart), that run's CPU seconds, and the document."""
    two = how.get("workers") == 2 or how.get("scheduler") == TWO_WORKERS[0]
    parallel = 2 if two and case.challenge != "ilsvrc2012-loc" else 1  # ILSVRC's one item is scored in podium's process
    run = best_of(
        repeats,
        lambda: engine.evaluate(case.challenge, case.truth, case.submission, case.settings, **how),
        parallel=parallel,
        what=f"{case.what}, {how}",
        live=True,
    )
    return run.wall, run.cpu, document(run.value)


def read_truth(case: Case) -> float:
    """One evaluation, so the truth is read once, as a worker of the service has it: its seconds."""
    start = time.perf_counter()
    engine.evaluate(case.challenge, case.truth, case.submission, case.settings)
    return time.perf_counter() - start


def reset_peaks(pids: list[int]) -> None:
    for pid in pids:
        try:
            Path(f"/proc/{pid}/clear_refs").write_text("5")
        except OSError:
            pass


def peak_mb(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) / 1024
    return float("nan")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--sets", default="fuzzy-jaccard,glas,ilsvrc2012-loc")
    args = parser.parse_args()
    makers = {"fuzzy-jaccard": fuzzy_case, "glas": glas_case, "ilsvrc2012-loc": ilsvrc_case}
    machine_header(args.repeats)

    keep_large_blocks()  # as the podium command does, so (1) runs as `podium evaluate --workers 1` would
    logging.getLogger("distributed").setLevel(logging.ERROR)  # the scheduler runs in this process: no INFO lines
    clusters: dict[int, tuple[LocalCluster, Client, list[int]]] = {}
    for n in (1, 2):
        start = time.perf_counter()
        cluster = LocalCluster(
            n_workers=n,
            threads_per_worker=1,
            processes=True,
            host="127.0.0.1",
            dashboard_address=":0",
            silence_logs=logging.ERROR,
        )
        client = Client(cluster)
        client.wait_for_workers(n)
        pids = list(client.run(os.getpid).values())
        clusters[n] = (cluster, client, pids)
        print(f"Dask cluster of {n} worker{'s' * (n > 1)} started in {time.perf_counter() - start:.2f} s")

    growth: list[tuple[str, int, float, float, list[float]]] = []
    try:
        print(f"\n{'set':<16}{'mode':<28}{'wall s':>9}{'CPU s':>9}{'vs (3)':>9}")
        for name in args.sets.split(","):
            whole = makers[name](1.0)
            if whole is None:
                print(f"{name:<16}left out: no ../shared/data/ilsvrc2012")
                continue
            truth_cache.clear()
            first = read_truth(whole)
            TWO_WORKERS[0] = clusters[2][0].scheduler_address
            modes = {
                "(1) inline, 1 worker": {"workers": 1},
                "(2) local pool, 2 workers": {"workers": 2},
                "(3) Dask, 1 worker": {"scheduler": clusters[1][0].scheduler_address},
                "(4) Dask, 2 workers": {"scheduler": clusters[2][0].scheduler_address},
            }
            measured = {mode: timed(whole, args.repeats, **how) for mode, how in modes.items()}
            reference = measured["(1) inline, 1 worker"][2]
            assert all(data == reference for _, _, data in measured.values()), f"{name}: the modes' documents differ"
            one = measured["(3) Dask, 1 worker"][0]
            print(f"{name:<16}{whole.what}; the first evaluation, reading the truth: {first:.2f} s")
            for mode, (wall, cpu, _) in measured.items():
                print(f"{'':<16}{mode:<28}{wall:>9.2f}{cpu:>9.2f}{one / wall:>8.2f}x")
            pool2, dask2 = measured["(2) local pool, 2 workers"][0], measured["(4) Dask, 2 workers"][0]
            print(
                f"{'':<16}(4)/(3) speed-up {one / dask2:.2f}x (target >= 1.7x); (4) vs (2) {100 * (dask2 / pool2 - 1):+.1f}% (target < +10%)"
            )
            for fraction in FRACTIONS:
                case = makers[name](fraction)
                assert case is not None
                read_truth(case)
                reset_peaks([os.getpid(), *clusters[2][2]])
                wall, cpu, _ = timed(case, args.repeats, scheduler=clusters[2][0].scheduler_address)
                growth.append((name, case.items, wall, cpu, [peak_mb(p) for p in [os.getpid(), *clusters[2][2]]]))
    finally:
        for cluster, client, _ in clusters.values():
            client.close()
            cluster.close()

    print(
        f"\ngrowth, (4) Dask with 2 workers\n{'set':<16}{'items':>8}{'wall s':>9}{'CPU s':>9}{'ms/item':>9}  peak MB: podium, each worker"
    )
    for name, items, wall, cpu, peaks in growth:
        print(
            f"{name:<16}{items:>8,}{wall:>9.2f}{cpu:>9.2f}{1000 * wall / items:>9.3f}  {' '.join(f'{p:.0f}' for p in peaks)}"
        )


if __name__ == "__main__":
    main()
