"""Start-up of the commands that compute nothing, against a bare interpreter (issue 40, goal 1: at most 6x).

Runs ``python -c pass``, ``python -c "import click"`` (the floor of any click command), ``podium --help``,
``podium --version``, ``podium challenges`` (the plain listing), ``podium challenges --json`` and
``podium challenges glas`` (one challenge's Rich tables) in turn (interleaved, so that the machine's
load falls on all alike), and reports the median CPU seconds of each (the child's user +
system time) and its ratio to the bare interpreter, and which heavy modules each command loaded.
podium's bytecode is compiled first, as pip does when it installs podium, so that a checkout run with
``PYTHONDONTWRITEBYTECODE`` is not charged for compiling the modules it imports.

    .venv/bin/python benchmarks/startup.py [--repeats 21]
"""

from __future__ import annotations

import argparse
import compileall
import statistics
import subprocess
import sys
from pathlib import Path

from timing import machine_header, timed

import podium

PODIUM = [sys.executable, "-m", "podium"]
COMMANDS = {
    "python -c pass": [sys.executable, "-c", "pass"],
    "import click": [sys.executable, "-c", "import click"],
    "podium --help": [*PODIUM, "--help"],
    "podium --version": [*PODIUM, "--version"],
    "podium challenges": [*PODIUM, "challenges"],
    "podium challenges --json": [*PODIUM, "challenges", "--json"],
    "podium challenges glas": [*PODIUM, "challenges", "glas"],
}
HEAVY = ("numpy", "rich", "zipfile", "subprocess", "pydantic", "podium.contest", "podium.challenges.glas")
LOADED = "import runpy, sys; sys.argv = ['podium', *{args!r}]\ntry: runpy.run_module('podium', run_name='__main__')\nexcept SystemExit: pass\nprint(' '.join(m for m in {heavy!r} if m in sys.modules), file=sys.stderr)"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=21)
    args = parser.parse_args()
    compileall.compile_dir(Path(podium.__file__).parent, quiet=1)
    machine_header(args.repeats, "median")
    cpu: dict[str, list[float]] = {name: [] for name in COMMANDS}
    for _ in range(args.repeats):
        for name, command in COMMANDS.items():
            cpu[name].append(
                timed(
                    lambda command=command: subprocess.run(
                        command, capture_output=True, check=True, cwd=Path(__file__).parent
                    )
                ).cpu
            )
    bare = statistics.median(cpu["python -c pass"])
    print(f"{'command':26s} {'CPU s (median)':>15s} {'x bare':>8s}  heavy modules loaded")
    for name, times in cpu.items():
        loaded = ""
        if name.startswith("podium"):
            command = LOADED.format(args=name.split()[1:], heavy=HEAVY)
            loaded = (
                " ".join(
                    subprocess.run([sys.executable, "-c", command], capture_output=True, text=True)
                    .stderr.strip()
                    .splitlines()[-1:]
                )
                or "none"
            )
        print(f"{name:26s} {statistics.median(times):15.3f} {statistics.median(times) / bare:8.1f}  {loaded}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
