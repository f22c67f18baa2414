"""podium run: its own overhead beyond the program's running time, unsandboxed and in bubblewrap.

A face-clustering "program" that copies a ready CSV (`cp`) or sleeps 0.5 s first. For each run:
overhead = podium's total time - the program's measured wall time, and the CPU seconds podium
and its children spent. Side by side in one run, medians of ``--repeats`` (7) runs. A run waits
for processes to start and end, so its wall time exceeds its CPU time by nature: whether the
machine was busy is the first line's measure alone.

- ``--sandbox none``: the keeper starts the program directly (the baseline);
- ``--sandbox bwrap``: the same program in the bubblewrap sandbox, in a cgroup of its own when
  one can be made; the difference of the two overheads is the sandbox's start-up cost
  (target, issue 11: < 0.1 s per run);
- the ``podium run`` command end to end (Python start-up included), in the sandbox;
- each ``run_program`` row twice, interleaved: the working folder on a file system of the run's own
  (``volume``: podium as root, ``podium/runner/volume.py``) and scanned at every sample (``scan``:
  the fallback, as for podium not root); the program that leaves 10,000 empty files and sleeps 1 s
  shows what the scan of a full folder costs at 100 Hz.

    .venv/bin/python benchmarks/runner_overhead.py [--repeats 7]
"""

from __future__ import annotations

import argparse
import contextlib
import json
import shutil
import statistics
import subprocess
import sys
import tempfile
from collections.abc import Callable, Iterator
from pathlib import Path
from unittest import mock

from timing import machine_header, timed

from podium.runner.disk import DEFAULT_DISK_MB
from podium.runner.process import Limits
from podium.runner.sandbox import bwrap_problem
from podium.scoring.run import RunRequest, run_program
from podium.synthetic.face_clustering import write_csvs

SETTINGS = {"th1_s": "60", "th2_s": "120", "ram_max_mb": "4096"}
BOUNDS = ("volume", "scan")


@contextlib.contextmanager
def bounded(bound: str) -> Iterator[None]:
    """Runs whose working folder is on a file system of its own where podium can make one (``volume``), or scanned
    (``scan``, as when podium is not root)."""
    with (
        mock.patch("podium.scoring.run.mounted", lambda root, limit: None)
        if bound == "scan"
        else contextlib.nullcontext()
    ):
        yield


def measure(label: str, once: Callable[[], float], repeats: int, bounds: tuple[str, ...] = ("",)) -> None:
    """``once`` runs podium and returns the program's measured wall time; medians of ``repeats`` runs for each of
    ``bounds`` (:func:`bounded`; ``""``: as podium chooses), interleaved."""
    runs: dict[str, list] = {bound: [] for bound in bounds}
    for _ in range(repeats):
        for bound in bounds:
            with bounded(bound):
                runs[bound].append(timed(once))
    for bound, timings in runs.items():
        wall, total, cpu = (statistics.median(values) for values in zip(*((r.value, r.wall, r.cpu) for r in timings)))
        named = f"{label}, {bound}" if bound else label
        print(f"{named:52s} {wall:9.3f}s {total:9.3f}s {total - wall:9.3f}s {cpu:9.3f}s", flush=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--repeats", type=int, default=7)
    args = parser.parse_args()
    machine_header(args.repeats, "median")
    folder = Path(tempfile.mkdtemp(prefix="podium-overhead-"))
    try:
        truth, submission = write_csvs(folder, n_images=200, n_identities=20)
        images = folder / "images"
        images.mkdir()
        sandboxes = ["none"] + (["bwrap"] if bwrap_problem() is None else [])
        if len(sandboxes) == 1:
            print(f"bubblewrap: {bwrap_problem()}; measuring --sandbox none only")
        print(f"{'program, sandbox, disk bound':52s} {'wall':>10s} {'total':>10s} {'overhead':>10s} {'CPU':>10s}")
        for label, command in (
            ("cp", f"cp {submission / 'team.csv'} team.csv"),
            ("sleep 0.5; cp", f"sleep 0.5; cp {submission / 'team.csv'} team.csv"),
            (
                "10,000 files; sleep 1; cp",
                f"mkdir d; cd d; seq 10000 | xargs touch; cd ..; sleep 1; cp {submission / 'team.csv'} team.csv",
            ),
        ):
            for sandbox in sandboxes:

                def in_process(sandbox: str = sandbox, command: str = command) -> float:
                    result = run_program(
                        RunRequest(
                            "face-clustering",
                            images,
                            truth,
                            Limits(disk_mb=DEFAULT_DISK_MB),
                            command=command,
                            settings=SETTINGS,
                            sandbox=sandbox,
                            visible=(submission,),
                        )
                    )
                    assert result.status == "scored" and result.run is not None, result.errors
                    return float(result.run["wall_s"])

                measure(f"{label}, run_program, {sandbox}", in_process, args.repeats, BOUNDS)
            cli = [
                sys.executable,
                "-m",
                "podium",
                "run",
                "face-clustering",
                "--command",
                command,
                "--images",
                str(images),
                "--truth",
                str(truth),
                "--json",
                "-",
                "--quiet",
                "--sandbox",
                sandboxes[-1],
                "--visible",
                str(submission),
            ]
            cli += [a for k, v in SETTINGS.items() for a in ("--set", f"{k}={v}")]

            def command_line(cli: list[str] = cli) -> float:
                return float(
                    json.loads(subprocess.run(cli, capture_output=True, text=True, check=True).stdout)["run"]["wall_s"]
                )

            measure(f"{label}, podium run command, {sandboxes[-1]}", command_line, args.repeats)
    finally:
        shutil.rmtree(folder, ignore_errors=True)


if __name__ == "__main__":
    main()
