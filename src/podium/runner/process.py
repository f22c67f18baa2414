"""Running a program under a time and memory limit, measuring its whole process tree.

- Wall time runs from the start to the end of the whole process tree, not only
  of the first process. In the sandbox, the tree ends with the program's first
  process: its PID namespace ends, and with it whatever it left running.
- Peak memory: the peak of the run's own cgroup where one can be made
  (:mod:`podium.runner.cgroups`: every page and every process counted once,
  even short-lived ones, and the limits enforced by the kernel). Otherwise the
  largest sum, over one sample, of the proportional set size (Pss) of every
  process in the tree, plus what the sandbox's private ``/tmp`` and
  ``/dev/shm`` hold, sampled at ``SAMPLE_HZ``: a page shared by forked
  processes counts once in all. Never summed resident sizes (a shared page
  once per process) nor the spawner's ``ru_maxrss``, which inherits the
  parent's own peak and sees only the largest single process.
- Disk: with a disk limit, no file may grow past it and the working folder
  may not hold more (:mod:`podium.runner.disk`): refused by the kernel where
  it is on a file system of its own (:mod:`podium.runner.volume`), checked at
  each sample.
- At the time, memory or disk limit, every process of the tree is killed with
  SIGKILL, including ones that ignore SIGTERM or start their own session
  (they stay in view: the keeper, :mod:`podium.runner.keeper`, is their
  subreaper), until none is left.
- Only the program's tree is touched: the caller's other children are never
  counted, reaped or killed, and the caller is not made a subreaper.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading
import time
import uuid
from dataclasses import dataclass
from pathlib import Path
from typing import BinaryIO, Literal

from podium.core.errors import UsageError
from podium.runner import cgroups, tree
from podium.runner.disk import DiskWatch
from podium.runner.keeper import Start
from podium.runner.sandbox import Confinement, unconfined

SAMPLE_HZ = 100
PIDS_LIMIT = 4096
RunOutcome = Literal["finished", "timeout", "memory_limit", "disk_limit", "crashed"]
"""How a run ended: on its own (``finished``, ``crashed``: a non-zero exit) or stopped at a limit. The
run section of a result says ``no_output`` instead of ``finished`` when the program wrote nothing to score."""


@dataclass(frozen=True)
class Limits:
    """What a run may use; ``None``: no limit of that kind."""

    time_s: float | None = None  # wall time
    memory_mb: float | None = None  # peak memory of the whole tree
    disk_mb: float | None = None  # what the working folder may hold (:mod:`podium.runner.disk`)
    cpus: float | None = None  # cores' worth of CPU time

    @property
    def memory_bytes(self) -> int | None:
        return None if self.memory_mb is None else int(self.memory_mb * 2**20)

    def disk_watch(self, workdir: Path) -> DiskWatch | None:
        """The watch that keeps ``workdir`` within the disk limit, sampled with the run."""
        return None if self.disk_mb is None else DiskWatch(workdir, int(self.disk_mb * 2**20), 1 / SAMPLE_HZ)


@dataclass(frozen=True)
class RunReport:
    wall_s: float
    peak_memory_mb: float
    memory_method: str
    exit_code: int | None
    outcome: RunOutcome
    stderr_tail: str
    network_isolated: bool
    sandbox: str
    peak_disk_mb: float | None = None  # the most the working folder was seen to hold, where a disk limit applies
    disk_method: str | None = None  # what bounded it (:attr:`podium.runner.disk.DiskWatch.method`)

    def to_dict(self) -> dict[str, object]:
        return dict(self.__dict__)


def run_limited(
    program: list[str] | Confinement, workdir: Path, limits: Limits, cgroup: Path | None = None
) -> RunReport:
    """Run ``program`` in ``workdir`` until its whole tree ends or one of ``limits`` is hit.

    ``program``: a command line (run unconfined, in a new network namespace
    where the system permits) or a sandbox's :class:`Confinement`.
    The run gets a cgroup of its own where one can be made
    (:mod:`podium.runner.cgroups`; ``cgroup`` is a v2 directory delegated to
    podium): the kernel then enforces the memory, process and CPU limits and
    gives the exact peak. Without one, the tree is sampled from /proc.
    """
    start = program if isinstance(program, Confinement) else unconfined(program)
    name = f"podium-run-{os.getpid()}-{uuid.uuid4().hex[:12]}"
    group = cgroups.open_group(name, cgroups.Limits(limits.memory_bytes, PIDS_LIMIT, limits.cpus), delegated=cgroup)
    if group is None and cgroup is not None:
        raise UsageError(
            f"--cgroup {cgroup}: podium cannot make a group with limits there (is it a delegated cgroup v2 directory?)"
        )
    try:
        return _run(start, workdir, limits.time_s, limits.memory_bytes, group, limits.disk_watch(workdir))
    finally:
        if group is not None:
            group.remove()


def _run(
    start: Confinement,
    workdir: Path,
    time_limit_s: float | None,
    memory_bytes: int | None,
    group: cgroups.Group | None,
    disk: DiskWatch | None,
) -> RunReport:
    outcome: RunOutcome
    clock_read, clock_write = os.pipe()
    os.set_blocking(clock_read, False)
    procs = [str(p) for p in group.procs_files] if group else []
    fsize = None if disk is None else disk.limit_bytes
    keeper = Start(clock_write, start.program, procs, start.bind, start.user, start.environment, fsize, start.view)
    isolate = start.sandbox == "none"  # a sandbox has a network namespace of its own
    stderr_read, stderr_write = os.pipe()
    if start.user is not None:  # the program may reopen it as /dev/stderr
        os.fchown(stderr_write, *start.user)
    with os.fdopen(clock_read, "rb") as clock:
        process = subprocess.Popen(
            [sys.executable, "-m", "podium.runner.keeper", *keeper.arguments()],
            cwd=workdir,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=stderr_write,
            pass_fds=(clock_write, *start.pass_fds),
            start_new_session=True,  # its own process group, killed as one
            preexec_fn=tree.unshare_network if isolate else None,
        )
        os.close(clock_write)
        os.close(stderr_write)
        times = _KeeperClock(clock, time.monotonic())
        stderr = StderrTail(os.fdopen(stderr_read, "rb"))
        isolated = not isolate or not tree.same_network(process.pid)
        peak, outcome = 0, "finished"
        while True:
            if group is None:
                members = [p for p in tree.descendants(process.pid) if not tree.is_zombie(p)]
                peak = max(peak, tree.proportional_bytes(members) + tree.private_tmpfs_bytes(members))
            if process.poll() is not None:  # the keeper ends when no descendant is left
                break
            elapsed = time.monotonic() - times.start()
            if time_limit_s is not None and elapsed >= time_limit_s:
                outcome = "timeout"
                break
            if memory_bytes is not None and (peak > memory_bytes if group is None else group.memory_kills() > 0):
                outcome = "memory_limit"
                break
            if disk is not None and disk.over():
                outcome = "disk_limit"
                break
            time.sleep(1 / SAMPLE_HZ)
        if outcome != "finished":
            if group is not None:
                group.kill()
            _kill_tree(process)
        wall = times.wall(finished=outcome == "finished")
        refused = times.refused
    exit_code = process.wait()
    if refused is None and not start.started():
        refused = stderr.text() or f"{start.sandbox} exited with code {exit_code}"
    if refused:
        raise UsageError(f"the sandbox could not start the program: {refused}")
    if group is not None and outcome == "finished" and group.memory_kills() > 0:
        outcome = "memory_limit"  # the kernel stopped a process at the limit and the rest then ended
    if outcome == "finished" and disk is not None and (disk.ended_over() or exit_code == 128 + signal.SIGXFSZ):
        outcome = (
            "disk_limit"  # a file stopped at the limit (SIGXFSZ), refused by the volume, or written since the last scan
        )
    if outcome == "finished" and exit_code != 0:
        outcome = "crashed"
    method = f"sampling the summed proportional set size (Pss) of the process tree, and its private /tmp and /dev/shm, at {SAMPLE_HZ} Hz"
    if group is not None:
        peak, method = group.peak_bytes() or 0, group.method
    return RunReport(
        wall_s=wall,
        peak_memory_mb=peak / 2**20,
        memory_method=method,
        exit_code=exit_code if outcome in ("finished", "crashed") else None,
        outcome=outcome,
        stderr_tail=stderr.text(),
        network_isolated=isolated,
        sandbox=start.sandbox,
        peak_disk_mb=None if disk is None else disk.peak / 2**20,
        disk_method=None if disk is None else disk.method,
    )


class _KeeperClock:
    """When the keeper started the program and when its last process ended (``CLOCK_MONOTONIC``,
    one clock for all processes), read from the pipe it writes them to: the program is not
    charged for the keeper's own start-up. Until the keeper has written, the spawn time stands in.
    A line that starts with ``!`` says why the program could not be confined (it was not started)."""

    def __init__(self, pipe: BinaryIO, spawned: float) -> None:
        self.pipe, self.spawned, self.text = pipe, spawned, b""

    def _lines(self) -> list[str]:
        try:
            self.text += self.pipe.read() or b""
        except BlockingIOError:
            pass
        return self.text.decode("utf-8", "replace").splitlines()

    def _times(self) -> list[float]:
        return [float(line) for line in self._lines() if not line.startswith("!")][:2]

    @property
    def refused(self) -> str | None:
        return next((line[1:] for line in self._lines() if line.startswith("!")), None)

    def start(self) -> float:
        times = self._times()
        return times[0] if times else self.spawned

    def wall(self, finished: bool) -> float:
        """Start to end of the program's whole tree; to now when it was killed."""
        times = self._times()
        end = times[1] if finished and len(times) == 2 else time.monotonic()
        return end - (times[0] if times else self.spawned)


def _kill_tree(keeper: subprocess.Popen[bytes]) -> None:
    """SIGKILL every descendant of the keeper, again until none is left; the keeper then ends.

    The keeper itself is killed only if its tree will not die within a second
    (a fork bomb outrunning the kills).
    """
    deadline = time.monotonic() + 1.0
    while keeper.poll() is None and time.monotonic() < deadline:
        tree.kill_all([p for p in tree.descendants(keeper.pid) if not tree.is_zombie(p)])
        time.sleep(0.005)
    if keeper.poll() is None:
        keeper.kill()
    keeper.wait()


class StderrTail:
    """The last ``TAIL_BYTES`` a program writes to its stderr pipe, drained by a thread.

    Nothing reaches the disk, so gigabytes on stderr cost neither disk nor
    memory, and there is no file the program could swap for a link.
    """

    TAIL_BYTES = 16_384

    def __init__(self, pipe: BinaryIO) -> None:
        self._pipe, self._tail, self._cut = pipe, b"", False
        self._thread = threading.Thread(target=self._drain, daemon=True)
        self._thread.start()

    def _drain(self) -> None:
        with self._pipe:
            while chunk := self._pipe.read1(1 << 16):  # type: ignore[attr-defined]
                self._tail += chunk
                if len(self._tail) > self.TAIL_BYTES:
                    self._tail, self._cut = self._tail[-self.TAIL_BYTES :], True

    def text(self) -> str:
        """The last ``TAIL_BYTES`` written, once the pipe is closed (at most 2 s later): from the first whole line
        when the start was cut off, without the final line break."""
        self._thread.join(timeout=2)
        tail = self._tail
        if self._cut and b"\n" in tail[:-1]:
            tail = tail[tail.index(b"\n") + 1 :]
        return tail.decode("utf-8", "replace").rstrip("\r\n")
