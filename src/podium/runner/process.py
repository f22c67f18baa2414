"""Running a program under a time and memory limit, measuring its whole process tree.

- Wall time runs from the start to the end of the whole process tree, not only
  of the first process.
- Peak memory: the largest sum, over one sample, of the proportional set size
  (Pss) of every process in the tree, sampled at ``SAMPLE_HZ``: a page shared
  by forked processes counts once in all. Never summed resident sizes (a shared
  page once per process) nor the spawner's ``ru_maxrss``, which inherits the
  parent's own peak and sees only the largest single process.
- At the time or memory limit, every process of the tree is killed with
  SIGKILL, including ones that ignore SIGTERM or start their own session
  (they stay in view: the keeper, :mod:`podium.runner.keeper`, is their
  subreaper), until none is left.
- Only the program's tree is touched: the caller's other children are never
  counted, reaped or killed, and the caller is not made a subreaper.
"""

from __future__ import annotations

import os
import subprocess
import sys
import threading
import time
from dataclasses import dataclass
from pathlib import Path
from typing import BinaryIO

from podium.runner import tree

SAMPLE_HZ = 100
STDERR_TAIL_LINES = 20


@dataclass(frozen=True)
class RunReport:
    wall_s: float
    peak_memory_mb: float
    memory_method: str
    exit_code: int | None
    outcome: str  # finished | timeout | memory_limit | crashed (no_output is decided by the contract)
    stderr_tail: str
    network_isolated: bool

    def to_dict(self) -> dict[str, object]:
        return dict(self.__dict__)


def run_limited(
    command: list[str],
    workdir: Path,
    time_limit_s: float | None,
    memory_limit_mb: float | None,
    isolate_network: bool = True,
    cgroup: Path | None = None,
) -> RunReport:
    """Run ``command`` in ``workdir`` until its whole tree ends or a limit is hit.

    ``cgroup``: a cgroup v2 directory delegated to podium. The program is started
    inside a new child group of it; its ``memory.peak`` then gives the peak memory
    (every process counted once, however short-lived) and ``cgroup.kill`` ends it.
    Without one, the tree is sampled from /proc.
    """
    group = _make_group(cgroup, workdir) if cgroup is not None else None
    clock_read, clock_write = os.pipe()
    os.set_blocking(clock_read, False)
    with os.fdopen(clock_read, "rb") as clock:
        process = subprocess.Popen(
            [sys.executable, "-m", "podium.runner.keeper", str(clock_write), *command],
            cwd=workdir,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
            pass_fds=(clock_write,),
            start_new_session=True,  # its own process group, killed as one
            preexec_fn=_child_setup(isolate_network, group),
        )
        os.close(clock_write)
        times = _KeeperClock(clock, time.monotonic())
        stderr = StderrTail(process.stderr)  # type: ignore[arg-type]
        isolated = isolate_network and not tree.same_network(process.pid)
        peak, outcome = 0, "finished"
        while True:
            members = [p for p in tree.descendants(process.pid) if not tree.is_zombie(p)]
            peak = max(peak, tree.proportional_bytes(members))
            if process.poll() is not None:  # the keeper ends when no descendant is left
                break
            elapsed = time.monotonic() - times.start()
            if time_limit_s is not None and elapsed >= time_limit_s:
                outcome = "timeout"
                break
            if memory_limit_mb is not None and peak > memory_limit_mb * 2**20:
                outcome = "memory_limit"
                break
            time.sleep(1 / SAMPLE_HZ)
        if outcome != "finished":
            if group is not None:
                _write(group / "cgroup.kill", "1")
            _kill_tree(process)
        wall = times.wall(finished=outcome == "finished")
    exit_code = process.wait()
    if outcome == "finished" and exit_code != 0:
        outcome = "crashed"
    method = f"sampling the summed proportional set size (Pss) of the process tree at {SAMPLE_HZ} Hz"
    group_peak = _read_int(group / "memory.peak") if group is not None else None
    if group_peak is not None:
        peak, method = group_peak, f"the peak of cgroup {group}"
    return RunReport(
        wall_s=wall,
        peak_memory_mb=peak / 2**20,
        memory_method=method,
        exit_code=exit_code if outcome in ("finished", "crashed") else None,
        outcome=outcome,
        stderr_tail=stderr.text(),
        network_isolated=isolated,
    )


class _KeeperClock:
    """When the keeper started the program and when its last process ended (``CLOCK_MONOTONIC``,
    one clock for all processes), read from the pipe it writes them to: the program is not
    charged for the keeper's own start-up. Until the keeper has written, the spawn time stands in."""

    def __init__(self, pipe: BinaryIO, spawned: float) -> None:
        self.pipe, self.spawned, self.text = pipe, spawned, b""

    def _times(self) -> list[float]:
        try:
            self.text += self.pipe.read() or b""
        except BlockingIOError:
            pass
        return [float(t) for t in self.text.split()[:2]]

    def start(self) -> float:
        times = self._times()
        return times[0] if times else self.spawned

    def wall(self, finished: bool) -> float:
        """Start to end of the program's whole tree; to now when it was killed."""
        times = self._times()
        end = times[1] if finished and len(times) == 2 else time.monotonic()
        return end - (times[0] if times else self.spawned)


def _make_group(parent: Path, workdir: Path) -> Path:
    """A new child cgroup for one run, under the delegated ``parent``."""
    group = parent / f"podium-run-{os.getpid()}-{workdir.parent.name}"
    group.mkdir(exist_ok=True)
    return group


def _child_setup(isolate_network: bool, group: Path | None):  # type: ignore[no-untyped-def]
    """What the child does between fork and exec: join the cgroup, leave the network."""
    if group is None and not isolate_network:
        return None

    def setup() -> None:
        if group is not None:
            _write(group / "cgroup.procs", str(os.getpid()))
        if isolate_network:
            tree.unshare_network()

    return setup


def _write(path: Path, text: str) -> None:
    try:
        path.write_text(text)
    except OSError:
        pass


def _read_int(path: Path) -> int | None:
    try:
        return int(path.read_text().split()[0])
    except (OSError, ValueError, IndexError):
        return None


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
        self._pipe, self._tail = pipe, b""
        self._thread = threading.Thread(target=self._drain, daemon=True)
        self._thread.start()

    def _drain(self) -> None:
        with self._pipe:
            while chunk := self._pipe.read1(1 << 16):  # type: ignore[attr-defined]
                self._tail = (self._tail + chunk)[-self.TAIL_BYTES :]

    def text(self) -> str:
        """The last ``STDERR_TAIL_LINES`` lines, once the pipe is closed (at most 2 s later)."""
        self._thread.join(timeout=2)
        return "\n".join(self._tail.decode("utf-8", "replace").splitlines()[-STDERR_TAIL_LINES:])
