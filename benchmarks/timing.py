"""What every benchmark here shares: the machine's state before the run, best-of-N timing with CPU
seconds beside wall seconds, and a warning when the machine was busy.

CPU seconds count this process and its children that have ended (``getrusage``), so a
``podium`` command run with :mod:`subprocess` is counted once it is reaped; ``live`` adds the
live descendants, a pool's or a cluster's workers. A measurement is
*busy* when its wall time is far above the CPU time its work should take: more than
``BUSY_RATIO`` times the CPU seconds divided by the processes meant to run at once. The
work was then waiting for a core that something else held, and its figure is not comparable.
"""

from __future__ import annotations

import os
import resource
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Generic, TypeVar

T = TypeVar("T")

BUSY_CORES = 0.25  # cores' worth of other work, just before a run, above which the machine is called busy
BUSY_RATIO = 1.3  # wall / (CPU / parallel) above which one measurement is called busy


@dataclass(frozen=True)
class Timed(Generic[T]):
    """One run: wall seconds, CPU seconds (this process and its reaped children), and what it returned."""

    wall: float
    cpu: float
    value: T


def cpu_seconds(live: bool = False) -> float:
    """User + system seconds of this process and of its children that have ended; with ``live``,
    also of every live descendant with the children it ended (psutil).

    ``live`` is for pools that outlive a measurement: a local pool's workers may be children of
    a fork server (a live descendant that reaped them), Dask's workers children of their
    nannies. Finding them reads /proc, tens of milliseconds: short measurements leave it off.
    """
    me, ended = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    total = me.ru_utime + me.ru_stime + ended.ru_utime + ended.ru_stime
    if not live:
        return total
    import psutil

    for process in psutil.Process().children(recursive=True):
        try:
            times = process.cpu_times()
            total += times.user + times.system + times.children_user + times.children_system
        except psutil.NoSuchProcess:
            pass
    return total


def busy_cores(seconds: float = 0.5) -> float:
    """How many cores' worth of work other processes did over the next ``seconds`` (/proc/stat; 0 elsewhere).

    The load average is printed too, but it lags: a minute after a heavy run it still counts it.
    """

    def ticks() -> tuple[int, int]:
        fields = [int(v) for v in Path("/proc/stat").read_text().split("\n", 1)[0].split()[1:]]
        return sum(fields), fields[3] + fields[4]  # all, idle + iowait

    try:
        (total0, idle0), cpu0 = ticks(), cpu_seconds()
        time.sleep(seconds)
        (total1, idle1), cpu1 = ticks(), cpu_seconds()
    except OSError:
        return 0.0
    cores = os.cpu_count() or 1
    busy = cores * (1 - (idle1 - idle0) / max(total1 - total0, 1))
    return max(0.0, busy - (cpu1 - cpu0) / seconds)


def processor() -> str:
    """The CPU (/proc/cpuinfo's model name, family and model), NumPy's dispatched SIMD levels, and
    the time NumPy takes to sort 10^6 random doubles here (best of 3).

    Hosts that call themselves the same differ: NumPy sorts with AVX-512 wherever the CPU has it,
    and on AMD Zen 4 (family 25, models 16-31, 96-127 and 160-175) its compress-store to memory is
    microcoded, so that sort runs about 3x slower than NumPy's AVX2 sort on the same host
    (x86-simd-sort issue 6). The sort time puts such a host on record beside every figure.
    """
    import numpy as np
    from numpy._core._multiarray_umath import __cpu_dispatch__, __cpu_features__

    fields: dict[str, str] = {}
    try:
        for line in Path("/proc/cpuinfo").read_text().split("\n\n", 1)[0].splitlines():
            key, _, value = line.partition(":")
            fields[key.strip()] = value.strip()
    except OSError:
        pass
    cpu = f"{fields.get('model name', 'unknown CPU')} (family {fields.get('cpu family', '?')}, model {fields.get('model', '?')})"
    simd = " ".join(level for level in __cpu_dispatch__ if __cpu_features__.get(level)) or "baseline only"
    values = np.random.default_rng(0).random(1_000_000)
    sort = min(timed(lambda: np.sort(values)).wall for _ in range(3))
    return f"CPU: {cpu}; NumPy {np.__version__} SIMD: {simd}; np.sort of 10^6 doubles {sort * 1000:.0f} ms"


def machine_header(repeats: int, statistic: str = "best") -> str:
    """Print and return the lines every benchmark starts with: load average, cores busy now, the
    repeats it runs; then the processor (:func:`processor`)."""
    load1, load5, _ = os.getloadavg()
    cores = os.cpu_count() or 1
    busy = busy_cores()
    runs = "one run" if repeats == 1 else f"{statistic} of {repeats} runs"
    line = f"load average before the run: {load1:.2f} (1 min), {load5:.2f} (5 min) on {cores} cores, {busy:.2f} cores busy now; {runs}"
    line += "\n" + processor()
    print(line)
    if busy > BUSY_CORES:
        print(
            f"WARNING: the machine is busy ({busy:.2f} of {cores} cores taken by other work): wall times below may be inflated"
        )
    return line


def timed(run: Callable[[], T], live: bool = False) -> Timed[T]:
    """One run of ``run``, timed (``live``: see :func:`cpu_seconds`)."""
    cpu = cpu_seconds(live)
    wall = time.perf_counter()
    value = run()
    wall = time.perf_counter() - wall
    return Timed(wall, cpu_seconds(live) - cpu, value)


def best_of(
    repeats: int,
    run: Callable[[], T],
    *,
    parallel: int = 1,
    what: str = "",
    live: bool = False,
    min_seconds: float = 0.0,
) -> Timed[T]:
    """The run with the least wall time of ``repeats`` runs, or of as many more as fill ``min_seconds``
    of wall time (as ``timeit``'s autorange does, for runs of milliseconds, whose first repeats are
    slower while the core warms up; at most 10,000); a warning if even the best was busy
    (:func:`warn_if_busy`)."""
    runs = [timed(run, live) for _ in range(repeats)]
    while sum(r.wall for r in runs) < min_seconds and len(runs) < 10_000:
        runs.append(timed(run, live))
    best = min(runs, key=lambda t: t.wall)
    warn_if_busy(best, parallel=parallel, what=what)
    return best


def warn_if_busy(measured: Timed[object], *, parallel: int = 1, what: str = "") -> bool:
    """Print a warning when ``measured`` waited for a core: wall > ``BUSY_RATIO`` x CPU / ``parallel``."""
    busy = measured.wall > BUSY_RATIO * measured.cpu / parallel and measured.wall > 0.05
    if busy:
        print(
            f"WARNING: busy machine{' during ' + what if what else ''}: {measured.wall:.3f} s wall for {measured.cpu:.3f} s CPU on {parallel} process(es)"
        )
    return busy
