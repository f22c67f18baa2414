"""What the keeper does to the program's first process between fork and exec (Linux).

In this order, each only when asked:

1. join the run's control groups (so the keeper itself is never charged);
2. in a mount namespace of its own, bind folders at staging paths: the
   sandbox runs as an unprivileged user, which may not be allowed to reach
   a folder through its parents (``/root`` is ``0700``), but may reach the same
   folder at a staging path podium made traversable. The bindings vanish with
   the process's mount namespace, and change nothing for anyone else;
3. drop to an unprivileged user and group, with no supplementary groups.
"""

from __future__ import annotations

import ctypes
import os
from pathlib import Path

from podium.runner.tree import libc

CLONE_NEWNS = 0x00020000
MS_BIND = 4096
MS_REC = 16384
MS_PRIVATE = 1 << 18


class ConfineError(OSError):
    """The process could not be confined as asked: it must not run."""


def join_groups(procs_files: list[str]) -> None:
    pid = str(os.getpid())
    for procs in procs_files:
        try:
            Path(procs).write_text(pid)
        except OSError as exc:
            raise ConfineError(exc.errno, f"cannot join the run's cgroup {procs}: {exc.strerror}") from None


def bind_privately(pairs: list[tuple[str, str]]) -> None:
    """Bind each source folder on its target folder, in a new private mount namespace."""
    if not pairs:
        return
    c = libc()
    if c.unshare(CLONE_NEWNS) != 0:
        _fail(c, "cannot make a private mount namespace")
    if c.mount(None, b"/", None, MS_REC | MS_PRIVATE, None) != 0:
        _fail(c, "cannot make the mounts private")
    for source, target in pairs:
        if c.mount(os.fsencode(source), os.fsencode(target), None, MS_BIND | MS_REC, None) != 0:
            _fail(c, f"cannot bind {source} on {target}")


def drop_to(uid: int, gid: int) -> None:
    os.setgroups([])
    os.setresgid(gid, gid, gid)
    os.setresuid(uid, uid, uid)


def _fail(c: ctypes.CDLL, what: str) -> None:
    errno = ctypes.get_errno()
    raise ConfineError(errno, f"{what}: {os.strerror(errno)}")
