"""What every benchmark here shares: the machine's state before the run, best-of-N timing with CPU
seconds beside wall seconds, and a warning when the machine was busy.

CPU seconds count this process, its children that have ended (``getrusage``) and its live
descendants, so a ``podium`` command run with :mod:`subprocess` is counted once it is reaped, and
a pool's or a cluster's workers while they run. A measurement is
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
from typing import Generic, TypeVar

T = TypeVar("T")

BUSY_LOAD = 0.5  # 1-minute load average per core above which the machine is called busy before a run
BUSY_RATIO = 1.3  # wall / (CPU / parallel) above which one measurement is called busy


@dataclass(frozen=True)
class Timed(Generic[T]):
    """One run: wall seconds, CPU seconds (this process and its reaped children), and what it returned."""

    wall: float
    cpu: float
    value: T


def cpu_seconds() -> float:
    """User + system seconds of this process, of its children that have ended, and of every live
    descendant with the children it ended (psutil, where installed).

    A local pool's workers may be children of a fork server (a live descendant that reaped
    them), Dask's workers children of their nannies: both are counted.
    """
    me, ended = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    total = me.ru_utime + me.ru_stime + ended.ru_utime + ended.ru_stime
    try:
        import psutil
    except ImportError:
        return total
    for process in psutil.Process().children(recursive=True):
        try:
            times = process.cpu_times()
            total += times.user + times.system + times.children_user + times.children_system
        except psutil.NoSuchProcess:
            pass
    return total


def machine_header(repeats: int, statistic: str = "best") -> str:
    """Print and return the line every benchmark starts with: load average, cores, and the repeats it runs."""
    load1, load5, _ = os.getloadavg()
    cores = os.cpu_count() or 1
    runs = "one run" if repeats == 1 else f"{statistic} of {repeats} runs"
    line = f"load average before the run: {load1:.2f} (1 min), {load5:.2f} (5 min) on {cores} cores; {runs}"
    print(line)
    if load1 > BUSY_LOAD * cores:
        print(f"WARNING: the machine is busy ({load1:.2f} runnable on {cores} cores): wall times below may be inflated")
    return line


def timed(run: Callable[[], T]) -> Timed[T]:
    """One run of ``run``, timed."""
    wall, cpu = time.perf_counter(), cpu_seconds()
    value = run()
    return Timed(time.perf_counter() - wall, cpu_seconds() - cpu, value)


def best_of(repeats: int, run: Callable[[], T], *, parallel: int = 1, what: str = "") -> Timed[T]:
    """The run of ``repeats`` with the least wall time; a warning if even that one was busy (:func:`warn_if_busy`)."""
    best = min((timed(run) for _ in range(repeats)), key=lambda t: t.wall)
    warn_if_busy(best, parallel=parallel, what=what)
    return best


def warn_if_busy(measured: Timed[object], *, parallel: int = 1, what: str = "") -> bool:
    """Print a warning when ``measured`` waited for a core: wall > ``BUSY_RATIO`` x CPU / ``parallel``."""
    busy = measured.wall > BUSY_RATIO * measured.cpu / parallel and measured.wall > 0.05
    if busy:
        print(f"WARNING: busy machine{' during ' + what if what else ''}: {measured.wall:.3f} s wall for {measured.cpu:.3f} s CPU on {parallel} process(es)")
    return busy
