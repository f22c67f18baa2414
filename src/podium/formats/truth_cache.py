"""Truth read once per process: parsed truth kept by the fingerprint of its files.

A worker that scores many submissions of one contest would otherwise read the
same truth for each of them (the 50,000 box files of ILSVRC 2012 take about a
second). :func:`cached` keeps what a reader returned under a key made of the
reader's name, the content fingerprints of the files it reads
(:func:`podium.core.provenance.fingerprint`, so a truth changed in place, even with
the same size and time stamps, is read again) and its other arguments.

The fingerprint of a regular file is itself remembered by the file's identity
and status (device, inode, size, modification and change times in
nanoseconds: :func:`podium.core.provenance.remembered_fingerprint`, which the
result's signature uses too, so the truth is hashed once): the change time
cannot be set back by a program, so a file written again is hashed again. A
folder is hashed at every call.

At most :data:`SIZE` readings are kept, the least recently used leaving first;
readings that raise are not kept. What a reader returns is shared by every
later caller: callers must not change it.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Callable, Hashable
from pathlib import Path
from typing import Any, TypeVar, cast

from podium.core import provenance
from podium.core.provenance import file_identity as file_identity  # re-exported: readers key by it

T = TypeVar("T")
SIZE = 8

_readings: OrderedDict[tuple[Hashable, ...], Any] = OrderedDict()
_lock = threading.Lock()


def cached(reader: str, files: tuple[Path | None, ...], read: Callable[[], T], *extra: Hashable) -> T:
    """``read()``, or what it returned before for the same ``reader``, file contents and ``extra``.

    >>> import tempfile
    >>> path = Path(tempfile.mkdtemp()) / "truth.txt"
    >>> _ = path.write_text("1\\n2\\n")
    >>> cached("lines", (path,), lambda: path.read_text().split())
    ['1', '2']
    >>> _ = path.write_text("3\\n")  # new content: read again
    >>> cached("lines", (path,), lambda: path.read_text().split())
    ['3']
    """
    prints = [None if f is None else provenance.remembered_fingerprint(f) for f in files]
    if any(p is None and f is not None for p, f in zip(prints, files)):
        return read()  # unreadable: the reader says why
    key = (reader, *prints, *extra)
    with _lock:
        if key in _readings:
            _readings.move_to_end(key)
            return cast(T, _readings[key])  # the reader's own value: one reader id, one type
    value = read()
    with _lock:
        _readings[key] = value
        while len(_readings) > SIZE:
            _readings.popitem(last=False)
    return value


def clear() -> None:
    """Forget every reading (tests, and a worker told to reload)."""
    with _lock:
        _readings.clear()
    provenance.forget()
