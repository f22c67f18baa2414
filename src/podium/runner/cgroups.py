"""A control group for one run: its limits, its exact peak memory, and killing it at once (Linux).

A run gets a new group of its own. Every process the program starts is in it,
however it detaches, so the kernel enforces the limits on the program as a
whole and measures it as a whole:

- memory: a hard limit with no swap beyond it (the kernel's OOM killer acts at
  the limit), and the group's peak usage, which counts every page once and
  every process, even one that lived a millisecond;
- processes: at most ``pids`` at a time (a fork bomb stops there);
- CPU: ``cpus`` cores' worth of time per period (the CFS quota);
- killing: ``cgroup.kill`` (v2), else SIGKILL to every member until none is left.

Two kernel interfaces, in this order:

- cgroup v2, in a directory delegated to podium (``--cgroup DIR``), or under
  podium's own v2 group when its ``memory`` and ``pids`` controllers are
  enabled for children: ``memory.max``, ``memory.swap.max``, ``memory.peak``,
  ``memory.events``, ``pids.max``, ``cpu.max``, ``cgroup.kill``;
- cgroup v1, one group per controller under podium's own group of that
  controller: ``memory.limit_in_bytes``, ``memory.memsw.limit_in_bytes``,
  ``memory.max_usage_in_bytes``, ``memory.oom_control``, ``pids.max``,
  ``cpu.cfs_quota_us``.

Creating groups needs write access to the hierarchy (root, or a delegation);
where neither works, :func:`open_group` returns ``None`` and the runner falls
back to sampling the process tree.

The peak counts what the kernel charges to the group: anonymous memory, files
in the sandbox's memory-backed ``/tmp`` and ``/dev/shm``, and the page cache of
files the program brings into memory. The runner reads the test images once
before the program starts, so reading them is not charged to the program.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from pathlib import Path

from podium.runner import tree

CPU_PERIOD_US = 100_000
V1_CONTROLLERS = ("memory", "pids", "cpu")


@dataclass(frozen=True)
class Limits:
    memory_bytes: int | None = None
    pids: int | None = None
    cpus: float | None = None


@dataclass
class Group:
    """One run's group: a v2 directory, or one v1 directory per controller."""

    version: int
    dirs: dict[str, Path]  # controller -> directory ("" for the v2 directory)
    created: list[Path] = field(default_factory=list)

    def _file(self, controller: str, name: str) -> Path:
        return self.dirs["" if self.version == 2 else controller] / name

    @property
    def procs_files(self) -> list[Path]:
        """The files a process writes its pid to, to join the group (every controller's)."""
        return [directory / "cgroup.procs" for directory in dict.fromkeys(self.dirs.values())]

    @property
    def method(self) -> str:
        name = "memory.peak" if self.version == 2 else "memory.max_usage_in_bytes"
        return f"the peak of the run's cgroup v{self.version} ({name})"  # not its path: a team reads this

    def limit(self, limits: Limits) -> None:
        """Write the limits; raises ``OSError`` if the kernel refuses one."""
        if self.version == 2:
            if limits.memory_bytes is not None:
                self._file("", "memory.max").write_text(str(limits.memory_bytes))
                _write_if_present(self._file("", "memory.swap.max"), "0")
            if limits.pids is not None:
                self._file("", "pids.max").write_text(str(limits.pids))
            if limits.cpus is not None:
                self._file("", "cpu.max").write_text(f"{round(limits.cpus * CPU_PERIOD_US)} {CPU_PERIOD_US}")
            return
        if limits.memory_bytes is not None:
            self._file("memory", "memory.limit_in_bytes").write_text(str(limits.memory_bytes))
            _write_if_present(self._file("memory", "memory.memsw.limit_in_bytes"), str(limits.memory_bytes))
        if limits.pids is not None:
            self._file("pids", "pids.max").write_text(str(limits.pids))
        if limits.cpus is not None:
            self._file("cpu", "cpu.cfs_period_us").write_text(str(CPU_PERIOD_US))
            self._file("cpu", "cpu.cfs_quota_us").write_text(str(round(limits.cpus * CPU_PERIOD_US)))

    def peak_bytes(self) -> int | None:
        name = "memory.peak" if self.version == 2 else "memory.max_usage_in_bytes"
        return read_int(self._file("memory", name))

    def memory_kills(self) -> int:
        """How many processes the kernel's OOM killer ended in this group."""
        name = "memory.events" if self.version == 2 else "memory.oom_control"
        try:
            lines = self._file("memory", name).read_text().splitlines()
        except OSError:
            return 0
        return sum(int(line.split()[1]) for line in lines if line.startswith("oom_kill "))

    def members(self) -> list[int]:
        pids: set[int] = set()
        for procs in self.procs_files:
            try:
                pids.update(int(p) for p in procs.read_text().split())
            except (OSError, ValueError):
                continue
        return sorted(pids)

    def kill(self, timeout_s: float = 2.0) -> bool:
        """SIGKILL every member, again until none is left; ``False`` if some survived ``timeout_s``."""
        if "" in self.dirs:
            _write_if_present(self.dirs[""] / "cgroup.kill", "1")
        deadline = time.monotonic() + timeout_s
        while members := self.members():
            if time.monotonic() > deadline:
                return False
            tree.kill_all(members)
            time.sleep(0.002)
        return True

    def remove(self) -> None:
        """Remove the directories this run created (once empty), innermost first."""
        self.kill()
        for directory in reversed(self.created):
            for _ in range(100):  # a killed process may take a moment to leave
                try:
                    directory.rmdir()
                    break
                except FileNotFoundError:
                    break
                except OSError:
                    time.sleep(0.01)


def open_group(name: str, limits: Limits, delegated: Path | None = None) -> Group | None:
    """A new group called ``name`` with ``limits`` written, or ``None`` where none can be made.

    ``delegated``: a cgroup v2 directory given to podium; the group is made in it.
    """
    candidates = [_v2_under(delegated)] if delegated is not None else [_v2_under(_own_v2()), _v1_dirs()]
    for parents in candidates:
        if not parents:
            continue
        group = _create(name, parents, 2 if "" in parents else 1)
        if group is None:
            continue
        try:
            group.limit(limits)
        except OSError:
            group.remove()
            continue
        return group
    return None


def _create(name: str, parents: dict[str, Path], version: int) -> Group | None:
    group = Group(version, {})
    for controller, parent in parents.items():
        directory = parent / name
        try:
            directory.mkdir()
        except FileExistsError:
            pass
        except OSError:
            group.remove()
            return None
        if directory not in group.created:
            group.created.append(directory)
        group.dirs[controller] = directory
    return group


def _v2_under(directory: Path | None) -> dict[str, Path]:
    return {"": directory} if directory is not None else {}


def _own_v2() -> Path | None:
    """podium's own v2 group, if it lets its children use the memory and pids controllers."""
    try:
        lines = Path("/proc/self/cgroup").read_text().splitlines()
    except OSError:
        return None
    mount = _mounts().get("cgroup2")
    own = next((line.split(":", 2)[2] for line in lines if line.startswith("0::")), None)
    if mount is None or own is None:
        return None
    directory = mount / own.lstrip("/")
    try:
        enabled = (directory / "cgroup.subtree_control").read_text().split()
    except OSError:
        return None
    return directory if {"memory", "pids"} <= set(enabled) else None


def _v1_dirs() -> dict[str, Path]:
    """podium's own v1 group of each controller podium uses, where all of them are mounted."""
    mounts = _mounts()
    try:
        lines = Path("/proc/self/cgroup").read_text().splitlines()
    except OSError:
        return {}
    own = {}
    for line in lines:
        _, controllers, path = line.split(":", 2)
        for controller in controllers.split(","):
            own[controller] = path
    dirs = {}
    for controller in V1_CONTROLLERS:
        if controller not in mounts or controller not in own:
            return {}
        dirs[controller] = mounts[controller] / own[controller].lstrip("/")
    return dirs


def _mounts() -> dict[str, Path]:
    """Where each v1 controller's hierarchy (and the v2 one, as ``cgroup2``) is mounted at its root."""
    found: dict[str, Path] = {}
    try:
        lines = Path("/proc/self/mountinfo").read_text().splitlines()
    except OSError:
        return found
    for line in lines:
        fields = line.split()
        separator = fields.index("-")
        root, point, fstype, options = fields[3], fields[4], fields[separator + 1], fields[separator + 3]
        if root != "/":
            continue  # a bind of a subtree: paths in /proc/self/cgroup would not resolve under it
        if fstype == "cgroup2":
            found.setdefault("cgroup2", Path(point))
        elif fstype == "cgroup":
            for option in options.split(","):
                if option in V1_CONTROLLERS:
                    found.setdefault(option, Path(point))
    return found


def _write_if_present(path: Path, text: str) -> None:
    try:
        path.write_text(text)
    except OSError:
        pass  # not in this kernel (swap accounting off, no cgroup.kill)


def read_int(path: Path) -> int | None:
    """The number a cgroup file starts with, or ``None`` if it cannot be read."""
    try:
        return int(path.read_text().split()[0])
    except (OSError, ValueError, IndexError):
        return None
