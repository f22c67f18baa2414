"""The disk a program may fill: its working folder, bounded while it runs.

Where podium may make file systems (root, a loop device), the working folder
is on one of its own, whose free space is the limit (:mod:`podium.runner.volume`):
the kernel refuses a write past it, and the watch below reads what was given
out from ``statvfs`` at every sample. Elsewhere (podium not root), two bounds,
neither needing privileges nor charging the run's memory (a size-limited tmpfs
would count every byte written as memory, and distort the peak that scores RAM):

- no file may grow past the limit: the program runs under ``RLIMIT_FSIZE``
  (a write beyond it fails with ``EFBIG``, and ``SIGXFSZ`` ends a program
  that does not handle it);
- many files together: :class:`DiskWatch` sums the blocks the working folder's
  files take on disk (``st_blocks``, so sparse files count what they hold,
  folders included) while the program runs, as often as the runner samples
  (100 Hz) or, for a folder slow to scan, twice as long as its last scan
  took; the run is stopped once the sum is over the limit. A writer is
  stopped within one interval of writing: the overshoot is what it writes in
  about 10 ms, more on a loaded machine (measured in ``tests/test_runner_disk.py``).

The file size bound (``RLIMIT_FSIZE``, ``--ulimit fsize``) holds on a volume
too: no sparse file larger than the limit, which a copy would write whole.
"""

from __future__ import annotations

import os
import stat
import time
from pathlib import Path

from podium.runner.choices import DEFAULT_DISK_MB as DEFAULT_DISK_MB  # re-exported: the limits' default


def used_bytes(folder: Path) -> int:
    """Bytes the files and folders under ``folder`` take on disk (links never followed).

    A folder the program made unreadable is made readable again first (podium
    owns it, or runs as root): hiding files must not hide their size.
    """
    total, pending = 0, [str(folder)]
    while pending:
        path = pending.pop()
        try:
            entries = list(os.scandir(path))
        except PermissionError:
            try:
                os.chmod(path, stat.S_IRWXU)
                entries = list(os.scandir(path))
            except OSError:
                continue
        except OSError:  # gone meanwhile
            continue
        for entry in entries:
            try:
                info = entry.stat(follow_symlinks=False)
            except OSError:
                continue
            total += info.st_blocks * 512
            if stat.S_ISDIR(info.st_mode):
                pending.append(entry.path)
    return total


class DiskWatch:
    """Whether a folder holds more than ``limit_bytes``: read from its volume at every call where it has one, else
    scanned when due (see the module's docstring)."""

    def __init__(self, folder: Path, limit_bytes: int, interval_s: float) -> None:
        self.folder, self.limit_bytes, self.interval_s = folder, limit_bytes, interval_s
        self.peak, self._due = 0, 0.0
        from podium.runner import volume  # here: the contest file's model and the commands read DEFAULT_DISK_MB only

        self.volume = volume.of(folder)

    @property
    def method(self) -> str:
        """What bounds the folder, in words."""
        if self.volume is not None:
            return self.volume.method()
        return f"its files' blocks summed at most every {self.interval_s:g} s, no file past the limit"

    def over(self) -> bool:
        if self.volume is not None:
            self.scan()
            return self.volume.over()
        now = time.monotonic()
        if now < self._due:
            return False
        self.scan()
        self._due = now + max(self.interval_s, 2 * (time.monotonic() - now))
        return self.peak > self.limit_bytes

    def ended_over(self) -> bool:
        """Scan now, once the program ended: whether the folder was ever seen over the limit (or out of files)."""
        self.scan()
        return self.peak > self.limit_bytes or (self.volume is not None and self.volume.over())

    def scan(self) -> int:
        """Scan now; the bytes held."""
        used = self.volume.used_bytes() if self.volume is not None else used_bytes(self.folder)
        self.peak = max(self.peak, used)
        return used
