"""A user's first `podium evaluate glas` against a warm run, side by side (issue 40 items 2 and 4).

Each run is a new `python -m podium evaluate glas` process on the GlaS fixture, timed with its
children (CPU = user + system seconds; wall). Interleaved, medians of ``--repeats`` runs:

- warm: the installed package, its kernels in Numba's cache beside the modules (``make setup``);
- fresh: a copy of the package mounted read-only (bubblewrap: root writes through file modes), with
  an empty ``HOME`` and no ``NUMBA_CACHE_DIR``
  (a new container or virtual environment run by a user who cannot write the package): the
  kernels come from the compiled code shipped in the package's ``__pycache__`` folders;
- fresh, another CPU: the same, with ``NUMBA_CPU_NAME=x86-64`` (a machine other than the build's):
  the kernels come from the generic CPU's code shipped beside this CPU's;
- fresh, nothing shipped: the copy without the compiled code (podium 0.8.5 in such a setting):
  Numba compiles every kernel;
- warm with ``--workers 2`` beside ``--workers 1`` (the default is every core); last, ``podium demo``
  (every challenge's synthetic set) with each.

Then the speed of the shipped code itself: 40 synthetic GlaS images (522x775, 20 glands, 16-bit
labels) scored in one warm process, best of ``--repeats``, with this CPU's kernels and with the
generic CPU's (``NUMBA_CPU_NAME=generic``), the code another machine loads from the image.

    .venv/bin/python benchmarks/first_run.py [--data ../shared/data/glas-fixture] [--repeats 5]
"""

from __future__ import annotations

import argparse
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from timing import machine_header

import podium

ROOT = Path(__file__).resolve().parent.parent

# Scores a synthetic GlaS set in one process (kernels loaded first), best of N: the kernels' own speed.
KERNEL_SPEED = r"""
import sys, time
from pathlib import Path
from podium.scoring.engine import evaluate
truth, submission, repeats = Path(sys.argv[1]), Path(sys.argv[2]), int(sys.argv[3])
evaluate("glas", truth, submission)
times = []
for _ in range(repeats):
    start = time.process_time()
    evaluate("glas", truth, submission)
    times.append(time.process_time() - start)
print(min(times))
"""


def run(
    package_parent: Path | None, data: Path, workers: int, home: Path | None, cpu: str | None
) -> tuple[float, float]:
    """Wall and CPU seconds of one `podium evaluate glas` process (and its children)."""
    env = dict(os.environ)
    env.pop("NUMBA_CACHE_DIR", None)
    env.pop("NUMBA_CPU_NAME", None)
    if package_parent is not None:
        env["PYTHONPATH"] = str(package_parent)
    if home is not None:
        env["HOME"] = str(home)
        env.pop("XDG_CACHE_HOME", None)
    if cpu is not None:
        env["NUMBA_CPU_NAME"] = cpu
    command = (
        []
        if package_parent is None
        else ["bwrap", "--dev-bind", "/", "/", "--ro-bind", str(package_parent), str(package_parent), "--"]
    )
    command += [
        sys.executable,
        "-m",
        "podium",
        "evaluate",
        "glas",
        "--truth",
        str(data / "truth"),
        "--submission",
        str(data / "submission"),
        "--workers",
        str(workers),
        "--quiet",
        "--json",
        os.devnull,
    ]
    return timed_process(command, env)


def timed_process(command: list[str], env: dict[str, str] | None = None) -> tuple[float, float]:
    """Wall and CPU seconds of ``command`` (with its children), its output discarded."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    subprocess.run(command, env=env, check=True, cwd=tempfile.gettempdir(), stdout=subprocess.DEVNULL)
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return wall, after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime


def package_copy(into: Path, shipped: bool) -> Path:
    """A copy of the installed package under ``into``, with its compiled kernels or not (:func:`run` mounts it read-only)."""
    ignore = None if shipped else shutil.ignore_patterns("*.nbi", "*.nbc")
    shutil.copytree(Path(podium.__file__).parent, into / "podium", ignore=ignore)
    return into


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--data", type=Path, default=ROOT.parent / "shared" / "data" / "glas-fixture")
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument(
        "--skip-unshipped", action="store_true", help="leave out the compiling case (15 s of CPU a run)"
    )
    args = parser.parse_args()
    machine_header(args.repeats, "median")
    with tempfile.TemporaryDirectory() as temporary:
        folder = Path(temporary)
        shipped = package_copy(folder / "shipped", True)
        bare = package_copy(folder / "bare", False)
        cases: dict[str, tuple[Path | None, int, bool, str | None]] = {
            "warm, --workers 1": (None, 1, False, None),
            "warm, --workers 2": (None, 2, False, None),
            "fresh, read-only, shipped code": (shipped, 1, True, None),
            "fresh, read-only, another CPU (generic code)": (shipped, 1, True, "x86-64"),
        }
        if not args.skip_unshipped:
            cases["fresh, read-only, nothing shipped (0.8.5)"] = (bare, 1, True, None)
        times: dict[str, list[tuple[float, float]]] = {name: [] for name in cases}
        run(None, args.data, 1, None, None)  # the warm cache made, whatever ran before
        for repeat in range(args.repeats):
            for name, (parent, workers, fresh, cpu) in cases.items():
                home = Path(tempfile.mkdtemp(dir=folder, prefix=f"home-{repeat}-")) if fresh else None
                times[name].append(run(parent, args.data, workers, home, cpu))
    warm = statistics.median(cpu for _, cpu in times["warm, --workers 1"])
    warm_wall = statistics.median(wall for wall, _ in times["warm, --workers 1"])
    print(
        f"\npodium evaluate glas, {args.data.name} ({len(list((args.data / 'submission').iterdir()))} images), a new process each run"
    )
    print(f"{'case':48} {'CPU s':>7} {'wall s':>7} {'CPU / warm':>11} {'wall / warm':>12}")
    for name, runs in times.items():
        cpu = statistics.median(c for _, c in runs)
        wall = statistics.median(w for w, _ in runs)
        print(f"{name:48} {cpu:7.2f} {wall:7.2f} {cpu / warm:10.2f}x {wall / warm_wall:11.2f}x")
    kernel_speed(args.repeats)
    demo_workers(args.repeats)


def demo_workers(repeats: int) -> None:
    """`podium demo` (every challenge's synthetic set written and scored) with one worker and with two, interleaved."""
    times: dict[int, list[tuple[float, float]]] = {1: [], 2: []}
    with tempfile.TemporaryDirectory() as temporary:
        for _ in range(repeats):
            for workers, runs in times.items():
                runs.append(
                    timed_process(
                        [
                            sys.executable,
                            "-m",
                            "podium",
                            "demo",
                            "--folder",
                            str(Path(temporary) / f"demo-{workers}"),
                            "--workers",
                            str(workers),
                        ]
                    )
                )
    medians = {
        workers: (statistics.median(wall for wall, _ in runs), statistics.median(cpu for _, cpu in runs))
        for workers, runs in times.items()
    }
    print(
        f"\npodium demo, median of {repeats}: "
        + "; ".join(
            f"--workers {workers}: {cpu:.2f} s CPU, {wall:.2f} s wall" for workers, (wall, cpu) in medians.items()
        )
    )


def kernel_speed(repeats: int) -> None:
    """CPU seconds of scoring 40 synthetic GlaS images in a warm process, with this CPU's code and the generic CPU's."""
    from podium.synthetic.glas import write_set

    with tempfile.TemporaryDirectory() as temporary:
        truth, submission = write_set(Path(temporary), 40, (522, 775), 20)
        seconds = {}
        for cpu in ("this CPU", "generic"):
            env = {k: v for k, v in os.environ.items() if k != "NUMBA_CPU_NAME"} | (
                {"NUMBA_CPU_NAME": "generic"} if cpu == "generic" else {}
            )
            out = subprocess.run(
                [sys.executable, "-c", KERNEL_SPEED, str(truth), str(submission), str(repeats)],
                env=env,
                check=True,
                capture_output=True,
                text=True,
            )
            seconds[cpu] = float(out.stdout)
    print(
        f"\n40 synthetic GlaS images in a warm process, best of {repeats}, CPU seconds: this CPU's code {seconds['this CPU']:.3f}, "
        f"generic code {seconds['generic']:.3f} ({seconds['generic'] / seconds['this CPU']:.2f}x)"
    )


if __name__ == "__main__":
    main()
