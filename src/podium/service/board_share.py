"""The boards and pages one web process computes, shared with the others through files (``--web-processes N``).

Each web process kept its boards in memory only, so each computed every
changed board and drew its page again: with 2 web processes, twice the CPU
per change (the GlaS demo's page: 60-110 ms; a 2,000-team contest's board:
2 s). :class:`SharedDraws` puts what one process made in a file of
:data:`FOLDER` in the data folder, named for what it is (the contest, the
board's version stamp, whether revealed, the track and phases, which page) and
written atomically (a temporary file, then ``os.replace``): another process
asking for the same thing reads the file. Two processes asking at once do not
both make it: the first takes a lock on the name (``flock``), the second waits
for the lock and then reads what the first wrote.

A name holds the board's version stamp, which the database only ever bumps,
so a file never stands for another board; the folder is emptied when ``podium
serve`` starts (:func:`shared_folder`), as a database restored from a backup
starts its stamps again. Each contest keeps the files of its newest
:data:`KEPT_STAMPS` stamps; a process still asking for an older one makes it
itself. A file that cannot be written (a full disk) is logged and not shared:
the process answers with what it made.
"""

from __future__ import annotations

import fcntl
import hashlib
import logging
import os
import shutil
import tempfile
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

log = logging.getLogger("podium.service")
FOLDER = "boards"  # in the data folder
KEPT_STAMPS = 4  # the stamps of a contest whose files are kept


def shared_folder(data: Path) -> Path:
    """The data folder's :data:`FOLDER`, emptied: ``podium serve`` starts it with no file of another run's database."""
    folder = data / FOLDER
    shutil.rmtree(folder, ignore_errors=True)
    folder.mkdir(parents=True)
    return folder


class SharedDraws:
    """What the web processes compute of a board, one file per thing, in ``folder``."""

    def __init__(self, folder: Path) -> None:
        self.folder = folder
        self.made = 0  # things this process made (a test tells a shared one from its own by it)
        self.read = 0  # things this process read from another's file

    def get(self, contest: str, stamp: int, name: Any, make: Callable[[], bytes]) -> bytes:
        """``name`` of ``contest``'s board at ``stamp``: read from its file, else ``make()`` under the name's lock, and shared."""
        folder = self.folder / hashlib.blake2b(contest.encode(), digest_size=8).hexdigest()
        path = folder / f"{stamp}-{hashlib.blake2b(repr(name).encode(), digest_size=16).hexdigest()}"
        found = _read(path)
        if found is not None:
            self.read += 1
            return found
        folder.mkdir(parents=True, exist_ok=True)
        with _locked(path.with_suffix(".lock")):
            found = _read(path)  # another process made it while this one waited
            if found is not None:
                self.read += 1
                return found
            body = make()
            self.made += 1
            try:
                _write(path, body)
                _prune(folder, stamp)
            except OSError as exc:
                log.warning("the board could not be shared with the other web processes: %s", exc)
        return body


def _read(path: Path) -> bytes | None:
    try:
        return path.read_bytes()
    except FileNotFoundError:
        return None


def _write(path: Path, body: bytes) -> None:
    """``body`` in ``path``, whole or not at all: a reader never sees part of it."""
    descriptor, name = tempfile.mkstemp(dir=path.parent, prefix=".")
    try:
        with os.fdopen(descriptor, "wb") as stream:
            stream.write(body)
        os.replace(name, path)
    except BaseException:
        Path(name).unlink(missing_ok=True)
        raise


@contextmanager
def _locked(path: Path) -> Iterator[None]:
    """An exclusive lock on ``path`` (made if missing), held by this process until the block ends."""
    with path.open("a") as stream:
        fcntl.flock(stream, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(stream, fcntl.LOCK_UN)


def _prune(folder: Path, stamp: int) -> None:
    """The files of ``folder``'s stamps older than the newest :data:`KEPT_STAMPS` (``stamp`` the newest known) removed."""
    for path in folder.iterdir():
        head = path.name.split("-", 1)[0]
        if head.isdigit() and int(head) <= stamp - KEPT_STAMPS:
            path.unlink(missing_ok=True)
