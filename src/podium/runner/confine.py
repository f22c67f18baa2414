"""What the keeper does to the program's first process between fork and exec (Linux).

In this order, each only when asked:

1. join the run's control groups (so the keeper itself is never charged);
2. in a mount namespace of its own, bind folders at staging paths: the
   sandbox runs as an unprivileged user, which may not be allowed to reach
   a folder through its parents (``/root`` is ``0700``), but may reach the same
   folder at a staging path podium made traversable. The bindings vanish with
   the process's mount namespace, and change nothing for anyone else. A
   folder bound to be seen read-only (``views``: the images) is then covered
   by a read-only overlay of itself, a file system of its own whose root is
   the staging path: the sandbox's mount table (``/proc/self/mountinfo``)
   shows that overlay and the staging path, not the folder's path on its disk
   (a bind shows its source's path within its file system: the server's
   layout). Where the kernel has no overlayfs the bind stays, as before;
3. drop to an unprivileged user and group, with no supplementary groups;
4. under a disk limit, forbid ``fallocate`` (:func:`forbid_preallocation`).
"""

from __future__ import annotations

import ctypes
import errno
import os
import platform
import struct
from pathlib import Path

from podium.runner.tree import libc

CLONE_NEWNS = 0x00020000
MS_RDONLY = 1
MS_BIND = 4096
MS_REC = 16384
MS_PRIVATE = 1 << 18
PR_SET_NO_NEW_PRIVS = 38
PR_SET_SECCOMP = 22
SECCOMP_MODE_FILTER = 2
SECCOMP_RET_ALLOW = 0x7FFF0000
SECCOMP_RET_ERRNO = 0x00050000
BPF_LD_W_ABS, BPF_JEQ_K, BPF_RET_K = 0x20, 0x15, 0x06
# (audit architecture, fallocate's number) for each system call ABI a machine runs
FALLOCATE = {
    "x86_64": ((0xC000003E, 285), (0xC000003E, 0x40000000 | 285), (0x40000003, 324)),  # x86-64, x32, i386
    "aarch64": ((0xC00000B7, 47), (0x40000028, 352)),  # arm64, arm
}


class ConfineError(OSError):
    """The process could not be confined as asked: it must not run."""


def join_groups(procs_files: list[str]) -> None:
    pid = str(os.getpid())
    for procs in procs_files:
        try:
            Path(procs).write_text(pid)
        except OSError as exc:
            raise ConfineError(exc.errno, f"cannot join the run's cgroup {procs}: {exc.strerror}") from None


def bind_privately(pairs: list[tuple[str, str]], views: list[str] | None = None) -> None:
    """Bind each source folder on its target folder, in a new private mount namespace; then cover each target in
    ``views`` with a read-only overlay of itself, its second (empty) layer the folder ``empty`` beside it."""
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
    for target in views or ():
        layers = f"lowerdir={target}:{Path(target).parent / 'empty'}"
        c.mount(b"overlay", os.fsencode(target), b"overlay", MS_RDONLY, os.fsencode(layers))  # failing: the bind stays


def drop_to(uid: int, gid: int) -> None:
    os.setgroups([])
    os.setresgid(gid, gid, gid)
    os.setresuid(uid, uid, uid)


def forbid_preallocation() -> None:
    """Make ``fallocate`` fail with ``EOPNOTSUPP`` for this process and what it starts (a seccomp filter).

    ``fallocate`` reserves gigabytes of disk in milliseconds without writing
    them, faster than any scan of the working folder can notice; refused, C
    libraries' ``posix_fallocate`` falls back to writing, which the kernel
    throttles like any write. A machine not in ``FALLOCATE`` gets no filter.
    """
    pairs = FALLOCATE.get(platform.machine())
    if pairs is None:
        return
    program = b""
    for arch, number in pairs:  # 5 instructions each: on another ABI or call, skip to the next pair
        program += _bpf(BPF_LD_W_ABS, 0, 0, 4) + _bpf(BPF_JEQ_K, 0, 3, arch)
        program += _bpf(BPF_LD_W_ABS, 0, 0, 0) + _bpf(BPF_JEQ_K, 0, 1, number)
        program += _bpf(BPF_RET_K, 0, 0, SECCOMP_RET_ERRNO | errno.EOPNOTSUPP)
    program += _bpf(BPF_RET_K, 0, 0, SECCOMP_RET_ALLOW)
    code = ctypes.create_string_buffer(program, len(program))
    fprog = struct.pack("HxxxxxxP", len(program) // 8, ctypes.addressof(code))
    c = libc()
    if c.prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0:
        _fail(c, "cannot set no_new_privs")
    if c.prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, ctypes.c_char_p(fprog), 0, 0) != 0:
        _fail(c, "cannot install the seccomp filter")


def _bpf(code: int, jump_true: int, jump_false: int, k: int) -> bytes:
    """One classic BPF instruction (``struct sock_filter``)."""
    return struct.pack("HBBI", code, jump_true, jump_false, k)


def _fail(c: ctypes.CDLL, what: str) -> None:
    errno = ctypes.get_errno()
    raise ConfineError(errno, f"{what}: {os.strerror(errno)}")
