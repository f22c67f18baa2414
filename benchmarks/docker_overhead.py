"""podium run in Docker: the engine's overhead per run, against the same program in bubblewrap.

A face-clustering "program" that copies a ready CSV (``cp``), or sleeps 0.5 s first, run by
``run_program`` in bubblewrap (``--command``) and as a busybox image (``--image``, the CSV in the
image), side by side. For each run: overhead = podium's total time - the program's measured wall
time; CPU is podium's and its children's (the docker client's, not the engine's). Medians of
``--repeats`` (7) runs. The image with 64 MB of weights shows what reading the image's own files
before each run costs (so their page cache is charged to no run). Last, what showing a sandbox
the images from the run's own folder costs per run (a hard-linked copy, so that the mount table
names no server path): 200 and 50,000 files (ILSVRC's validation set), already in both runs above.
Each run twice, interleaved: the working folder on a file system of the run's own and scanned
(``runner_overhead.py``'s ``BOUNDS``).

It uses the engine ``DOCKER_HOST`` points at, or starts the tests' private one
(``tests/docker_engine.py``: root, dockerd and busybox-static needed).

    .venv/bin/python benchmarks/docker_overhead.py [--repeats 7]
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

from runner_overhead import BOUNDS, measure
from timing import machine_header, timed

from podium.runner.disk import DEFAULT_DISK_MB
from podium.runner.process import Limits
from podium.runner.sandbox import bwrap_problem
from podium.scoring.run import RunRequest, linked_copy, run_program
from podium.synthetic.face_clustering import write_csvs

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))
import docker_engine  # the tests' private engine and image builder

SETTINGS = {"th1_s": "60", "th2_s": "120", "ram_max_mb": "4096"}


def engine_here() -> docker_engine.Engine | None:
    """``None`` when an engine answers already; else the tests' private engine, started (the caller stops it)."""
    if subprocess.run(["docker", "info"], capture_output=True).returncode == 0:
        return None
    problem = docker_engine.problem()
    if problem is not None:
        sys.exit(f"no Docker engine: {problem}")
    engine = docker_engine.Engine()
    engine.start()
    os.environ.update(engine.environ)
    return engine


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--repeats", type=int, default=7)
    args = parser.parse_args()
    machine_header(args.repeats, "median")
    if bwrap_problem() is not None:
        sys.exit(f"bubblewrap: {bwrap_problem()}")
    private = engine_here()
    builder = private or docker_engine.Engine()
    if private is None:
        builder.environ = {}  # build in the engine that answers
    folder = Path(tempfile.mkdtemp(prefix="podium-docker-overhead-"))
    try:
        truth, submission = write_csvs(folder, n_images=200, n_identities=20)
        images = folder / "images"
        images.mkdir()
        csv = (submission / "team.csv").read_bytes()
        weights = bytes(64 * 2**20)
        for tag, files in (("cp", {}), ("sleep", {}), ("weights", {"weights.bin": weights})):
            program = ("sleep 0.5; " if tag == "sleep" else "") + "cp /team.csv team.csv\n"
            builder.import_image(f"podium-bench/copy:{tag}", {"team.csv": csv, "program.sh": program, **files})
        print(f"{'program, sandbox, disk bound':52s} {'wall':>10s} {'total':>10s} {'overhead':>10s} {'CPU':>10s}")
        for label, tag in (("cp", "cp"), ("sleep 0.5; cp", "sleep"), ("cp, 64 MB of weights in the image", "weights")):
            command = f"{'sleep 0.5; ' if tag == 'sleep' else ''}cp {submission / 'team.csv'} team.csv"
            for sandbox in ("bwrap", "docker"):
                if sandbox == "bwrap" and tag == "weights":
                    continue

                def once(sandbox: str = sandbox, command: str = command, tag: str = tag) -> float:
                    image = f"podium-bench/copy:{tag}" if sandbox == "docker" else None
                    result = run_program(
                        RunRequest(
                            "face-clustering",
                            images,
                            truth,
                            Limits(disk_mb=DEFAULT_DISK_MB),
                            command=None if image else command,
                            image=image,
                            settings=SETTINGS,
                            sandbox=sandbox,
                            visible=() if image else (submission,),
                        )
                    )
                    assert result.status == "scored" and result.run is not None, result.errors
                    return float(result.run["wall_s"])

                measure(f"{label}, {sandbox}", once, args.repeats, BOUNDS)
        print(f"{'the images staged for a run (linked, removed)':52s} {'files':>10s} {'wall':>10s} {'CPU':>10s}")
        for files in (200, 50_000):
            many = folder / f"images-{files}"
            many.mkdir()
            for k in range(files):
                (many / f"ILSVRC2012_val_{k:08d}.JPEG").write_bytes(b"x")

            def stage(many: Path = many) -> None:
                staged = linked_copy(many, folder / "staged")
                shutil.rmtree(staged)  # counted: a run removes its folder after scoring

            runs = [timed(stage) for _ in range(args.repeats)]
            wall, cpu = statistics.median(r.wall for r in runs), statistics.median(r.cpu for r in runs)
            print(f"{'':52s} {files:10,d} {wall:9.3f}s {cpu:9.3f}s", flush=True)
    finally:
        shutil.rmtree(folder, ignore_errors=True)
        builder.remove()


if __name__ == "__main__":
    main()
