"""The process tree of a participant's program, seen through /proc (Linux).

The keeper (:mod:`podium.runner.keeper`) makes itself a *child subreaper*: a
descendant whose parent dies is re-parented to it rather than to init, so
programs that daemonize or start their own session stay in view, are measured
and can be killed.
"""

from __future__ import annotations

import ctypes
import os
import signal

PR_SET_PDEATHSIG = 1
PR_SET_CHILD_SUBREAPER = 36
CLONE_NEWNET = 0x40000000


def libc() -> ctypes.CDLL:
    """The C library, from the symbols already loaded (``find_library`` would run ``ldconfig``)."""
    return ctypes.CDLL(None, use_errno=True)


def _prctl(option: int, value: int) -> bool:
    try:
        result: int = libc().prctl(option, value, 0, 0, 0)  # ctypes functions return int unless told otherwise
        return result == 0
    except (OSError, AttributeError):
        return False


def become_subreaper() -> bool:
    """Make orphaned descendants this process's children; ``False`` where the system refuses."""
    return _prctl(PR_SET_CHILD_SUBREAPER, 1)


def die_with_parent() -> bool:
    """Be killed (SIGKILL) when the parent process ends; ``False`` where the system refuses."""
    return _prctl(PR_SET_PDEATHSIG, signal.SIGKILL)


def children(pid: int) -> list[int]:
    """Direct children of ``pid`` (every thread's), from /proc."""
    found: list[int] = []
    try:
        tasks = os.listdir(f"/proc/{pid}/task")
    except OSError:
        return found
    for task in tasks:
        try:
            with open(f"/proc/{pid}/task/{task}/children") as f:
                found.extend(int(c) for c in f.read().split())
        except OSError:
            continue
    return found


def descendants(pid: int) -> list[int]:
    """Every process below ``pid``, each once."""
    seen: list[int] = []
    stack = children(pid)
    while stack:
        child = stack.pop()
        if child not in seen:
            seen.append(child)
            stack.extend(children(child))
    return seen


def is_zombie(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rsplit(")", 1)[1].split()[0] == "Z"
    except OSError:
        return True  # gone


def proportional_bytes(pids: list[int]) -> int:
    """Summed proportional set size (Pss) of ``pids``: a page shared by k processes counts 1/k in each.

    So the sum counts every page of the tree once, where summed resident sizes
    would count a page shared by forked children once per child. Read from
    ``/proc/PID/smaps_rollup``; a process that exits meanwhile counts 0.

    >>> proportional_bytes([os.getpid()]) > 0
    True
    """
    total = 0
    for pid in pids:
        try:
            with open(f"/proc/{pid}/smaps_rollup", "rb") as f:
                for line in f:
                    if line.startswith(b"Pss:"):
                        total += int(line.split()[1]) * 1024
                        break
        except (OSError, IndexError, ValueError):
            continue  # exited between listing and reading
    return total


def kill_all(pids: list[int]) -> None:
    for pid in pids:
        try:
            os.kill(pid, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            pass


def unshare_network() -> None:
    """In the child before exec: a new, empty network namespace if the system permits (else nothing)."""
    try:
        libc().unshare(CLONE_NEWNET)
    except (OSError, AttributeError):
        pass


def same_network(pid: int) -> bool:
    """Whether ``pid`` shares podium's network namespace."""
    try:
        return os.readlink(f"/proc/{pid}/ns/net") == os.readlink("/proc/self/ns/net")
    except OSError:
        return True


def private_tmpfs_bytes(pids: list[int]) -> int:
    """Bytes held in the ``/tmp`` and ``/dev/shm`` that ``pids`` see, where these are not podium's own.

    A sandbox's private ``/tmp`` and ``/dev/shm`` are memory-backed file systems:
    what a program keeps there is memory it uses. Each file system counts once.
    """
    seen, total = set(), 0
    for folder in ("tmp", "dev/shm"):
        try:
            seen.add(os.stat(f"/{folder}").st_dev)  # podium's own: not the program's
        except OSError:
            pass
    for pid in pids:
        for folder in ("tmp", "dev/shm"):
            try:
                device = os.stat(f"/proc/{pid}/root/{folder}").st_dev
                if device in seen:
                    continue
                usage = os.statvfs(f"/proc/{pid}/root/{folder}")
            except OSError:
                continue  # gone, or not ours to look into
            seen.add(device)
            total += (usage.f_blocks - usage.f_bfree) * usage.f_frsize
    return total
