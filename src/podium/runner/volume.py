"""A hard disk bound: the working folder on a file system of its own, made for the run (Linux, root).

The run's folder ``DISK`` holds an ext4 file system of its own, made in a
sparse file and mounted through a loop device (:func:`mounted`); the program is
shown its subfolder ``DISK/work`` only. The kernel then refuses (``ENOSPC``)
any write past the file system's free space, which podium sets to the limit
plus ``SLACK_BYTES`` (a file of its own, ``DISK/reserve``, takes the rest,
out of the program's sight): the bound holds whatever the program does and
however loaded the machine is, where a scan only notices afterwards.

- What is counted: every block the file system gives out after podium made
  it, for data, folders and the files' own metadata alike (sparse files count
  what they hold; a hard link counts once; a file grown by ``mmap`` counts as
  it is written back; ``fallocate`` counts what it reserves), read from
  ``statvfs`` (a microsecond, however many files). The run is over the limit
  once more than ``limit_bytes`` is given out; the slack is what the kernel may
  still refuse with that much free: ext4 reserves a page-cache folio's blocks
  whole (up to 2 MiB, a huge page), so a write of 1 MiB can fail with 1 MiB
  free. A program that stayed within the limit was never refused; one that
  was refused went past it, and is stopped as ``disk_limit``.
- Files: one inode per 4 KiB block (``mkfs.ext4 -i 4096``): as many files as
  blocks; the last inode taken is ``disk_limit`` too.
- The server's disk: the sparse file takes what is written in it, at most the
  file system's size (``size_bytes``: the limit, the slack, and ext4's own
  tables, 10 % and 4 MiB), and nothing once the run's file system is unmounted
  (the file has no name, so a crash leaves no file).
- A podium killed with SIGKILL: its run's file system stays mounted, and with
  it the loop device (which detaches itself at its last unmount,
  ``LO_FLAGS_AUTOCLEAR``) and the file's blocks, until :func:`unmount_abandoned`
  unmounts it: every run calls it before it mounts its own (:func:`mounted`), and
  a starting worker. It unmounts only the file systems in the run folders of
  processes that no longer exist (:mod:`podium.runner.folders`), never a live
  run's. (A mount in a private mount namespace, which the kernel drops with the
  namespace's last process, would need no sweep, but the Docker engine binds
  the working folder from its own mount namespace, where such a mount is not.)
- Cost: ``mkfs.ext4`` (no journal, inode tables left unwritten), the mount and
  the unmount, about 10 ms of CPU and 0.1 to 0.2 s in all per run on a loaded
  machine (``benchmarks/runner_overhead.py``).
- Memory: the loop device writes to its file with direct I/O, so the written
  data is in the page cache once (the run's file system's), charged to the run
  as any file it writes.

Where no such file system can be made (podium not root, no loop device, no
``mkfs.ext4``, a container without ``CAP_SYS_ADMIN``) :func:`mounted` gives
``None`` and the scan of :mod:`podium.runner.disk` bounds the folder instead.
"""

from __future__ import annotations

import ctypes
import errno
import fcntl
import os
import struct
from dataclasses import dataclass
from pathlib import Path

from podium.runner.folders import NEUTRAL_PARENTS, abandoned, temporary_parents
from podium.runner.tree import libc

SLACK_BYTES = 2 * 2**20  # the largest page-cache folio ext4 reserves whole (a 2 MiB huge page on x86-64 and arm64 4K)
BLOCK = 4096
LOOP_CTL_GET_FREE = 0x4C82
LOOP_CONFIGURE = 0x4C0A
LO_FLAGS_AUTOCLEAR, LO_FLAGS_DIRECT_IO = 4, 16
MS_NOSUID, MS_NODEV, MS_NOATIME = 2, 4, 1024
MNT_DETACH = 2
MKFS = ("-q", "-F", "-b", str(BLOCK), "-i", str(BLOCK), "-m", "0", "-O", "^has_journal,^resize_inode")
MKFS_EXTENDED = ("-E", "lazy_itable_init=1,nodiscard")
IN_MEMORY = (0x01021994, 0x858458F6)  # statfs's f_type of tmpfs and ramfs
_mounted: dict[str, Volume] = {}  # the working folders on a volume of this process, by path


@dataclass(frozen=True)
class Volume:
    """A run's file system, mounted at ``root``; the program's working folder is ``folder``."""

    root: Path
    limit_bytes: int
    base_blocks: int  # the blocks in use before the program's folder was made (ext4's own, the reserve)

    @property
    def folder(self) -> Path:
        return self.root / "work"

    def used_bytes(self) -> int:
        """Bytes given out since the file system was made ready: the working folder, its files and their metadata."""
        info = os.statvfs(self.root)
        return (info.f_blocks - info.f_bfree - self.base_blocks) * info.f_frsize

    def over(self) -> bool:
        """More than the limit given out, or no file left to make: the kernel refused, or soon will."""
        return self.used_bytes() > self.limit_bytes or os.statvfs(self.root).f_favail == 0

    def method(self) -> str:
        return (
            f"a file system of its own (ext4 on a loop device): writes past {self.limit_bytes + SLACK_BYTES:,} bytes "
            f"fail (the limit and {SLACK_BYTES // 2**20} MiB)"
        )


def size_bytes(limit_bytes: int) -> int:
    """The file system's size for a limit: what the program may use and the slack, and ext4's tables (under 10 %)."""
    return -(-((limit_bytes + SLACK_BYTES) * 10 // 9 + 4 * 2**20) // BLOCK) * BLOCK


def of(folder: Path) -> Volume | None:
    """The volume whose working folder ``folder`` is, if this process mounted one."""
    return _mounted.get(str(folder))


def mounted(root: Path, limit_bytes: int) -> Volume | None:
    """A file system at ``root`` (made here, an empty folder) whose working folder may hold ``limit_bytes``, or
    ``None`` where none can be made (the folder is then left empty, for a plain working folder).

    Its file has no name (``O_TMPFILE``), in the folder that holds the run's own: the loop device's
    ``backing_file``, which a container reads in ``/sys``, names that folder only (``/tmp/#INODE (deleted)``),
    and a crash leaves no file behind. Where that folder is in memory (``/tmp`` a tmpfs, as Debian 13 mounts it),
    the file goes to the first of :data:`~podium.runner.folders.NEUTRAL_PARENTS` on a disk (``/var/tmp``), or none
    is made: what the loop device writes to a tmpfs stays in the server's
    memory for the whole run (48 MB written, 48 MB more of the tmpfs), outside the run's memory as podium
    measures it, where the files a program writes in a tmpfs folder of its own count in its memory.
    """
    import shutil  # here: the commands that compute nothing import this module (through runner.disk), not these
    import subprocess

    mkfs = shutil.which("mkfs.ext4", path=f"{os.environ.get('PATH', '')}:/usr/sbin:/sbin")
    if os.geteuid() != 0 or mkfs is None or not os.path.exists("/dev/loop-control"):
        return None
    unmount_abandoned()  # what runs killed with SIGKILL left mounted, before this run takes a loop device
    root.mkdir()
    folder = next((f for f in (root.parent.parent, *map(Path, NEUTRAL_PARENTS)) if _on_disk(f)), None)
    if folder is None:  # its file would be held in memory, charged to no run: the scan, and the run's memory, bound it
        return None
    try:
        backing = os.open(folder, os.O_TMPFILE | os.O_RDWR, 0o600)
    except OSError:  # a file system without nameless files
        return None
    try:
        os.ftruncate(backing, size_bytes(limit_bytes))
        attached = _attach(backing, root.parent.name)
    except OSError:
        return None
    finally:
        os.close(backing)  # the loop device holds the file now; freed with it
    if attached is None:
        return None
    device, fd = attached
    try:
        made = subprocess.run([mkfs, *MKFS, *MKFS_EXTENDED, device], capture_output=True, timeout=60)
        flags = MS_NOSUID | MS_NODEV | MS_NOATIME
        if made.returncode != 0 or libc().mount(device.encode(), os.fsencode(root), b"ext4", flags, b"noinit_itable"):
            return None
    except (OSError, subprocess.TimeoutExpired):
        return None
    finally:
        os.close(fd)  # the mount holds the device now; unmounted (or never mounted), its last close frees it
    try:
        base = _reserve(root, limit_bytes + SLACK_BYTES)
        (root / "work").mkdir()
    except OSError:
        _unmount(root)
        return None
    volume = Volume(root, limit_bytes, base)
    _mounted[str(volume.folder)] = volume
    return volume


def _on_disk(folder: Path) -> bool:
    """Whether ``folder`` is on a file system that keeps its files on a disk, not in memory (tmpfs, ramfs)."""
    info = ctypes.create_string_buffer(256)  # struct statfs, its f_type first
    if libc().statfs(os.fsencode(folder), info) != 0:
        return False
    return struct.unpack_from("l", info)[0] & 0xFFFFFFFF not in IN_MEMORY


def _attach(backing: int, name: str) -> tuple[str, int] | None:
    """A free loop device holding the open file ``backing``, detached by the kernel once its last user is gone: its
    path, opened. ``name`` (the run's folder) is its ``lo_file_name``, which ``LOOP_GET_STATUS64`` reads back on the
    host (a program, with no loop device to open, cannot)."""
    control = os.open("/dev/loop-control", os.O_RDWR)
    try:
        for _ in range(16):  # another process may take the free device first
            device = f"/dev/loop{fcntl.ioctl(control, LOOP_CTL_GET_FREE)}"
            fd = os.open(device, os.O_RDWR)
            for flags in (LO_FLAGS_AUTOCLEAR | LO_FLAGS_DIRECT_IO, LO_FLAGS_AUTOCLEAR):
                info = struct.pack("5Q4I64s64s32s2Q", 0, 0, 0, 0, 0, 0, 0, 0, flags, name.encode()[:63], b"", b"", 0, 0)
                try:
                    fcntl.ioctl(fd, LOOP_CONFIGURE, struct.pack("2I", backing, 0) + info + bytes(64))
                    return device, fd
                except OSError as exc:
                    if exc.errno == errno.EINVAL and flags & LO_FLAGS_DIRECT_IO:
                        continue  # the backing file system takes no direct I/O
                    os.close(fd)
                    if exc.errno != errno.EBUSY:
                        raise
                    break
        return None
    finally:
        os.close(control)


def _reserve(root: Path, capacity: int) -> int:
    """Take all but ``capacity`` bytes of the file system's free space in ``root/reserve``; the blocks then in use."""
    fd = os.open(root / "reserve", os.O_CREAT | os.O_WRONLY, 0o600)
    try:
        size = 0
        for _ in range(8):  # the reserve's own extent blocks may take a little more: measure again
            info = os.statvfs(root)
            extra = info.f_bavail * info.f_frsize - capacity
            if extra == 0:
                break
            size = max(0, size + extra)
            if extra > 0:
                os.posix_fallocate(fd, 0, size)
            else:
                os.ftruncate(fd, size)
        info = os.statvfs(root)
        if info.f_bavail * info.f_frsize < capacity:
            raise OSError(errno.ENOSPC, "the run's file system is smaller than its limit")
        return info.f_blocks - info.f_bfree
    finally:
        os.close(fd)


def unmount(volume: Volume) -> None:
    """Unmount the volume (its loop device and the file's blocks are freed with it).

    The program's files are removed first: the kernel then drops what they hold
    in the page cache rather than write it to a file about to be freed (100 MB
    written: 0.10 s rather than 0.17 s).
    """
    import shutil

    _mounted.pop(str(volume.folder), None)
    shutil.rmtree(volume.folder, ignore_errors=True)
    _unmount(volume.root)


def _unmount(root: Path) -> None:
    libc().umount2(os.fsencode(root), MNT_DETACH)  # detached now, whatever still has a file open in it


def unmount_abandoned() -> list[Path]:
    """Unmount every file system mounted in the run folder of a process that no longer exists (a podium killed with
    SIGKILL), the deepest first; their mount points. Their loop devices detach themselves, their files are freed."""
    try:
        with open("/proc/self/mountinfo", "rb") as f:
            table = f.read().decode("utf-8", "surrogateescape")
    except OSError:
        return []
    parents = [os.path.realpath(parent) + "/" for parent in temporary_parents()]  # as the mount table names them
    points = {_unescape(fields[4]) for fields in map(str.split, table.splitlines()) if len(fields) > 4}
    dead = [
        Path(point)
        for point in points
        if any(point.startswith(parent) and abandoned(point[len(parent) :].split("/")[0]) for parent in parents)
    ]
    dead.sort(key=lambda point: len(point.parts), reverse=True)
    for point in dead:
        _unmount(point)
    return dead


def _unescape(field: str) -> str:
    """A mount point as ``mountinfo`` writes it (space, tab, newline and backslash as octal escapes)."""
    for code in ("\\040", "\\011", "\\012", "\\134"):
        field = field.replace(code, chr(int(code[1:], 8)))
    return field
