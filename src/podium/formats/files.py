"""Opening a file named in a submission or a truth without ever leaving it.

Links are never followed and special files (FIFOs, devices, sockets) never
opened, so that nothing a participant sends can make podium read outside the
submission or block. Sizes are checked before anything is read.
"""

from __future__ import annotations

import hashlib
import io
import mmap
import os
import stat
from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from pathlib import Path
from typing import TypeAlias

_recording: ContextVar[tuple[str, dict[str, str]] | None] = ContextVar("recording", default=None)


class FileProblem(ValueError):
    """A file that cannot be used, in plain words; ``line`` is where, when there is one place."""

    def __init__(self, message: str, line: int | None = None) -> None:
        super().__init__(message)
        self.line = line


Content: TypeAlias = bytes | mmap.mmap
"""A file's bytes as :func:`read_mapped` gives them: any bytes-like reader takes either."""


def read_bytes(path: Path, max_bytes: int, needs: str = "") -> bytes:
    """The content of a regular file of at most ``max_bytes``; :class:`FileProblem` otherwise.

    Links are not followed and special files never block: the file is opened
    with ``O_NOFOLLOW | O_NONBLOCK`` and checked with ``fstat`` before reading.
    """
    with _opened(path) as f:
        info = _checked(f, max_bytes, needs)
        data = f.read(max_bytes + 1) if info.st_size <= max_bytes else b""
    if len(data) > max_bytes:
        raise FileProblem(f"is {size_text(len(data))}; {at_most(needs)} {size_text(max_bytes)}")
    _record(path, data)
    return data


def read_mapped(path: Path, max_bytes: int, needs: str = "") -> Content:
    """:func:`read_bytes`, the file mapped into memory instead of copied (an empty file: ``b""``), for readers
    that take any bytes-like object: its pages come from the page cache as they are read, 64 KiB at a fault,
    neither zeroed nor copied (800,000 ILSVRC guesses, 15.6 MB: about 8 ms less CPU than a copy).

    The file must not shrink while the mapping is read (a read past its new end is a ``SIGBUS``): podium
    maps the organizer's truth and submissions no participant's process can still write (an upload podium
    stored, a program's output once its sandbox has ended, a file given on the command line).
    """
    with _opened(path) as f:
        info = _checked(f, max_bytes, needs)
        data: Content = mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ) if info.st_size else b""
    if len(data) > max_bytes:  # grown since fstat
        raise FileProblem(f"is {size_text(len(data))}; {at_most(needs)} {size_text(max_bytes)}")
    _record(path, data)
    return data


def _opened(path: Path) -> io.BufferedReader:
    """``path`` opened for reading, a link never followed, a special file never blocking; :class:`FileProblem`."""
    flags = os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0)
    try:
        fd = os.open(path, flags)
    except OSError as exc:
        if os.path.islink(path):
            raise FileProblem("is a symbolic link; links are not followed") from None
        raise FileProblem(f"cannot be opened ({exc.strerror or exc})") from None
    return os.fdopen(fd, "rb")


def _checked(f: io.BufferedReader, max_bytes: int, needs: str) -> os.stat_result:
    """The open file's status, when it is a regular file of at most ``max_bytes``; :class:`FileProblem` otherwise."""
    info = os.fstat(f.fileno())
    if not stat.S_ISREG(info.st_mode):
        raise FileProblem("is not a regular file")
    if info.st_size > max_bytes:
        raise FileProblem(f"is {size_text(info.st_size)}; {at_most(needs)} {size_text(max_bytes)}")
    return info


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


def _record(path: Path, data: Content) -> None:
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
