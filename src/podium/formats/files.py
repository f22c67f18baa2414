"""Opening a file named in a submission or a truth without ever leaving it.

Links are never followed and special files (FIFOs, devices, sockets) never
opened, so that nothing a participant sends can make podium read outside the
submission or block. Sizes are checked before anything is read.
"""

from __future__ import annotations

import hashlib
import os
import stat
from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from pathlib import Path

_recording: ContextVar[tuple[str, dict[str, str]] | None] = ContextVar("recording", default=None)


class FileProblem(ValueError):
    """A file that cannot be used, in plain words; ``line`` is where, when there is one place."""

    def __init__(self, message: str, line: int | None = None) -> None:
        super().__init__(message)
        self.line = line


def read_bytes(path: Path, max_bytes: int, needs: str = "") -> bytes:
    """The content of a regular file of at most ``max_bytes``; :class:`FileProblem` otherwise.

    Links are not followed and special files never block: the file is opened
    with ``O_NOFOLLOW | O_NONBLOCK`` and checked with ``fstat`` before reading.
    """
    flags = os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0)
    try:
        fd = os.open(path, flags)
    except OSError as exc:
        if os.path.islink(path):
            raise FileProblem("is a symbolic link; links are not followed") from None
        raise FileProblem(f"cannot be opened ({exc.strerror or exc})") from None
    with os.fdopen(fd, "rb") as f:
        info = os.fstat(f.fileno())
        if not stat.S_ISREG(info.st_mode):
            raise FileProblem("is not a regular file")
        data = f.read(max_bytes + 1) if info.st_size <= max_bytes else b""
    if info.st_size > max_bytes or len(data) > max_bytes:
        raise FileProblem(f"is {size_text(max(info.st_size, len(data)))}; {at_most(needs)} {size_text(max_bytes)}")
    _record(path, data)
    return data


@contextmanager
def recording_reads(root: Path) -> Iterator[dict[str, str]]:
    """Within it, in this thread: what :func:`read_bytes` returns of files under ``root``, by path.

    The dict maps each path (relative to ``root``, ``/``-separated; ``root``'s
    own name when ``root`` is the file) to the SHA-256 of the bytes read: what a
    submission's fingerprint is made of (:mod:`podium.core.provenance`), so that
    nothing the readers refuse or ignore is ever read for it.
    """
    read: dict[str, str] = {}
    token = _recording.set((str(root), read))
    try:
        yield read
    finally:
        _recording.reset(token)


def _record(path: Path, data: bytes) -> None:
    recording = _recording.get()
    if recording is None:
        return
    root, read = recording
    name = str(path)
    if name == root:
        read[os.path.basename(root)] = hashlib.sha256(data).hexdigest()
    elif name.startswith(root.rstrip(os.sep) + os.sep):
        read[name[len(root.rstrip(os.sep)) + 1 :].replace(os.sep, "/")] = hashlib.sha256(data).hexdigest()


def at_most(needs: str) -> str:
    """``'a file for 5 images needs at most'``, or ``'the most accepted is'`` when the need is not known."""
    return f"a file for {needs} needs at most" if needs else "the most accepted is"


def size_text(n: int) -> str:
    """``'300 MB'``, ``'6.2 MB'``, ``'512 bytes'``."""
    if n < 10_000:
        return f"{n:,} bytes"
    for unit, scale in (("GB", 1e9), ("MB", 1e6), ("kB", 1e3)):
        if n >= scale:
            value = n / scale
            return f"{value:.1f} {unit}" if value < 10 else f"{value:,.0f} {unit}"
    return f"{n:,} bytes"
