"""podium run: its own overhead beyond the program's running time, and the accuracy of wall time.

A face-clustering "program" that copies a ready CSV (`cp`) or sleeps 0.5 s first. For each run:
overhead = podium's total time - the program's measured wall time. Measured in-process
(``run_program``: working directory, sampling, collection, scoring) and end to end (the
``podium run`` command, Python start-up included). Target (issue 7): < 0.2 s.

    .venv/bin/python benchmarks/runner_overhead.py
"""

from __future__ import annotations

import json
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from podium.runner.run import run_program
from podium.synthetic.face_clustering import write_csvs


def main() -> None:
    folder = Path(tempfile.mkdtemp(prefix="podium-overhead-"))
    truth, submission = write_csvs(folder, n_images=200, n_identities=20)
    images = folder / "images"
    images.mkdir()
    settings = {"th1_s": "60", "th2_s": "120", "ram_max_mb": "4096"}
    print(f"{'program':34s} {'wall (measured)':>16s} {'podium total':>13s} {'overhead':>9s}")
    for label, command in (("cp team.csv (instant)", f"cp {submission / 'team.csv'} team.csv"),
                           ("sleep 0.5; cp team.csv", f"sleep 0.5; cp {submission / 'team.csv'} team.csv")):  # fmt: skip
        rows = []
        for _ in range(7):
            start = time.perf_counter()
            result = run_program("face-clustering", command=command, image=None, images=images, truth=truth,
                                 settings=settings, time_limit_s=None, memory_limit_mb=None)  # fmt: skip
            total = time.perf_counter() - start
            assert result.status == "scored" and result.run is not None
            rows.append((result.run["wall_s"], total))
        wall, total = statistics.median(r[0] for r in rows), statistics.median(r[1] for r in rows)
        print(f"{label + ', in-process':34s} {wall:15.3f}s {total:12.3f}s {total - wall:8.3f}s")
        cli = [sys.executable, "-m", "podium", "run", "face-clustering", "--command", command, "--images", str(images),
               "--truth", str(truth), "--json", "-", "--quiet"] + [a for k, v in settings.items() for a in ("--set", f"{k}={v}")]  # fmt: skip
        rows = []
        for _ in range(5):
            start = time.perf_counter()
            doc = json.loads(subprocess.run(cli, capture_output=True, text=True, check=True).stdout)
            rows.append((doc["run"]["wall_s"], time.perf_counter() - start))
        wall, total = statistics.median(r[0] for r in rows), statistics.median(r[1] for r in rows)
        print(f"{label + ', podium run command':34s} {wall:15.3f}s {total:12.3f}s {total - wall:8.3f}s")


if __name__ == "__main__":
    main()
