"""Start-up of the commands that compute nothing, against a bare interpreter (issue 40, goal 1: at most 6x).

Runs ``python -c pass``, ``podium --help`` and ``podium challenges`` in turn (interleaved, so that the
machine's load falls on all three alike), and reports the median CPU seconds of each (the child's
user + system time) and its ratio to the bare interpreter, and which heavy modules each command loaded.

    .venv/bin/python benchmarks/startup.py [--repeats 21]
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
from pathlib import Path

from timing import machine_header, timed

PODIUM = [sys.executable, "-m", "podium"]
COMMANDS = {
    "python -c pass": [sys.executable, "-c", "pass"],
    "podium --help": [*PODIUM, "--help"],
    "podium challenges": [*PODIUM, "challenges"],
}
HEAVY = ("numpy", "rich", "zipfile", "podium.contest", "podium.challenges.glas")
LOADED = "import runpy, sys; sys.argv = ['podium', {arg!r}]\ntry: runpy.run_module('podium', run_name='__main__')\nexcept SystemExit: pass\nprint(' '.join(m for m in {heavy!r} if m in sys.modules), file=sys.stderr)"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=21)
    args = parser.parse_args()
    machine_header(args.repeats, "median")
    cpu: dict[str, list[float]] = {name: [] for name in COMMANDS}
    for _ in range(args.repeats):
        for name, command in COMMANDS.items():
            cpu[name].append(timed(lambda command=command: subprocess.run(command, capture_output=True, check=True, cwd=Path(__file__).parent)).cpu)
    bare = statistics.median(cpu["python -c pass"])
    print(f"{'command':20s} {'CPU s (median)':>15s} {'x bare':>8s}  heavy modules loaded")
    for name, times in cpu.items():
        loaded = ""
        if name != "python -c pass":
            arg = name.split()[-1]
            loaded = subprocess.run([sys.executable, "-c", LOADED.format(arg=arg, heavy=HEAVY)], capture_output=True, text=True).stderr.strip().splitlines()[-1:]
            loaded = " ".join(loaded) or "none"
        print(f"{name:20s} {statistics.median(times):15.3f} {statistics.median(times) / bare:8.1f}  {loaded}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
