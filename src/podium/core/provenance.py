"""Where a result comes from: fingerprints of files and the signature every result document carries.

A fingerprint is ``sha256:`` and 64 hex digits. A file's is the SHA-256 of its
bytes. A folder's is the SHA-256 of one line per entry, sorted by path relative
to the folder (``/``-separated)::

    F <path> <sha256 of the file's bytes>
    L <path> <the link's target>            symbolic links are never followed
    D <path>                                 sub-folders, recursively

so two folders with the same files, made at different times or places, have
the same fingerprint. Paths are encoded with ``surrogateescape``, so any byte
name is fingerprinted as it is.

A submission's fingerprint is made of what the challenge's readers read of it,
and of nothing else: the ``F`` lines of the files they accepted, with the
SHA-256 of the bytes they read (recorded as they read them,
:func:`podium.formats.files.recording_reads`). A file they refuse for its size,
an extra file they ignore, a program's junk in its working folder are never
read for it: a sparse 10 GB file costs nothing, and the time to fingerprint is
bounded by the readers' own byte limits.

The signature (like sacrebleu's) says what a score means: the challenge, the
podium version, the rule parameters, the truth (its files and the ``data``
parameters' files), the submission, the contest and its split, and when. Two
results can be ranked together when their :func:`comparable_part` is equal.

A regular file's fingerprint is hashed once per process while the file stays as it is
(:func:`remembered_fingerprint`, by :func:`file_identity`): the truth the truth cache keyed its reading by
(:mod:`podium.formats.truth_cache`) is the truth the signature names, and its bytes are not hashed twice.

The organizer's files (the truth and the ``data`` parameters' files, never a submission's) are also
remembered across runs, in the user's cache folder (:func:`digests_file`: ``$XDG_CACHE_HOME/podium``, else
``~/.cache/podium``), one line per file: its digest, its :func:`file_identity` and when the line was written.
A line is trusted only while the file's identity is the same (a file written again gets another change
time, which no program can set back, even when its size and modification time are forced back), and, as
git does for its index ("racily clean" entries), only if the file's modification and change times are
older than the line by more than :data:`GRANULARITY_NS`, the coarsest time stamps a file system keeps: a
file changed in the same tick as it was hashed, with the same size, would otherwise keep its identity with
other bytes. Anything else is hashed as before: a cache folder that cannot be written, a corrupt or foreign
line. The lines are only the user's own: whoever can write them can already write the truth.
"""

from __future__ import annotations

import hashlib
import os
import stat
import threading
import time
from collections.abc import Iterator, Mapping
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from podium._version import __version__
from podium.core.parameters import Parameter

PREFIX = "sha256:"
CHUNK = 1 << 20
MAX_ENTRIES = 1_000_000  # a submission with more files than this is not fingerprinted (null)
REMEMBERED = 512  # regular files' fingerprints kept by remembered_fingerprint
DIGESTS_KEPT = 256  # lines of digests_file kept when it is rewritten (at twice that)
GRANULARITY_NS = 2_000_000_000  # the coarsest file time stamps (FAT's 2 s): a file changed since is not trusted

_remembered: dict[tuple[int, ...], str | None] = {}
_lock = threading.Lock()


class TooManyEntries(Exception):
    pass


def fingerprint(path: Path) -> str | None:
    """The fingerprint of a file or folder (see the module docstring); ``None`` when it cannot be read
    or holds more than :data:`MAX_ENTRIES` entries."""
    try:
        status = os.stat(path)  # the path itself is the caller's: followed; links inside are not
        if not stat.S_ISDIR(status.st_mode):
            if not stat.S_ISREG(status.st_mode):
                return None
            return PREFIX + _file_digest(path)
        digest = hashlib.sha256()
        for line in _entries(path):
            digest.update(line)
    except (OSError, TooManyEntries):
        return None
    return PREFIX + digest.hexdigest()


def file_identity(path: Path) -> tuple[int, ...] | None:
    """The regular file at ``path`` as it is now: device, inode, size, modification and change times in nanoseconds
    (a file written again gets another: its change time cannot be set back); ``None`` for anything else or nothing."""
    try:
        status = os.stat(path)
    except OSError:
        return None
    if not stat.S_ISREG(status.st_mode):
        return None
    return (status.st_dev, status.st_ino, status.st_size, status.st_mtime_ns, status.st_ctime_ns)


def remembered_fingerprint(path: Path) -> str | None:
    """:func:`fingerprint` of one of the organizer's files (never a submission's), hashed once per process for a
    regular file while its :func:`file_identity` stays the same, and remembered across runs in :func:`digests_file`
    (a folder is hashed at every call); ``None`` where it cannot be read. A file changed within
    :data:`GRANULARITY_NS` of the hashing is hashed at every call, as the digests file does not trust it: where time
    stamps are coarse (ext2's seconds, FAT's 2 s, a kernel before 6.13's clock tick), a file written again in the same
    tick with its size and modification time kept had the same identity, and the process kept reading the old truth.

    >>> import tempfile
    >>> path = Path(tempfile.mkdtemp()) / "truth.txt"
    >>> _ = path.write_text("1\\n")
    >>> remembered_fingerprint(path) == fingerprint(path)
    True
    """
    identity = file_identity(path)
    if identity is None:
        return fingerprint(path)
    with _lock:
        if identity in _remembered:
            return _remembered[identity]
    value = _stored_digest(identity)
    started = time.time_ns()  # before the bytes are read: a change while they are hashed is racy
    if value is None:
        value = fingerprint(path)
        if value is not None and file_identity(path) == identity:
            _store_digest(identity, value, started)
    if not _settled(identity, started):
        return value  # racily clean: changed again in this tick, it would keep its identity; not remembered
    with _lock:
        if len(_remembered) >= REMEMBERED:
            _remembered.clear()
        _remembered[identity] = value
    return value


def digests_file() -> Path:
    """Where the organizer's files' digests are remembered across runs (see the module docstring)."""
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / "podium" / "file-digests.txt"


def _stored_digest(identity: tuple[int, ...]) -> str | None:
    """The fingerprint :func:`digests_file` holds for a file of ``identity``, when that line can be trusted."""
    try:
        lines = digests_file().read_bytes().splitlines()
    except OSError:
        return None
    key = " ".join(map(str, identity)).encode()
    for line in reversed(lines):  # the newest line first
        fields = line.split(b" ")
        if len(fields) == 7 and b" ".join(fields[1:6]) == key and fields[6].isdigit():
            if _settled(identity, int(fields[6])) and _is_digest(fields[0]):
                return PREFIX + fields[0].decode()
            return None
    return None


def _settled(identity: tuple[int, ...], hashed_ns: int) -> bool:
    """Whether a file of ``identity`` hashed from ``hashed_ns`` on was last changed (modified or its status changed)
    more than :data:`GRANULARITY_NS` before: else it is racily clean, and its identity may hide other bytes."""
    return max(identity[3], identity[4]) + GRANULARITY_NS < hashed_ns


def _is_digest(text: bytes) -> bool:
    return len(text) == 64 and all(c in b"0123456789abcdef" for c in text)


def _store_digest(identity: tuple[int, ...], value: str, written: int) -> None:
    """One line of :func:`digests_file` for a file of ``identity`` hashed from ``written`` (nanoseconds since the
    epoch) on; rewritten with its newest :data:`DIGESTS_KEPT` lines past twice that. Nothing when it cannot be written."""
    path = digests_file()
    line = f"{value.removeprefix(PREFIX)} {' '.join(map(str, identity))} {written}\n".encode()
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        with open(path, "ab") as f:  # one write of one line: writers in parallel append whole lines
            f.write(line)
            size = f.tell()
        if size > 2 * DIGESTS_KEPT * len(line):
            lines = path.read_bytes().splitlines(keepends=True)[-DIGESTS_KEPT:]
            fresh = path.with_name(f"{path.name}.{os.getpid()}.{threading.get_ident()}")
            fresh.write_bytes(b"".join(lines))
            os.replace(fresh, path)
    except OSError:
        pass


def forget() -> None:
    """Forget every remembered fingerprint (tests, and a worker told to reload)."""
    with _lock:
        _remembered.clear()


def of_read(read: Mapping[str, str]) -> str:
    """A submission's fingerprint from what its readers read: relative path -> SHA-256 of the bytes."""
    digest = hashlib.sha256()
    for name in sorted(read, key=lambda n: n.encode("utf-8", "surrogateescape")):
        digest.update(b"F " + name.encode("utf-8", "surrogateescape") + b" " + read[name].encode() + b"\n")
    return PREFIX + digest.hexdigest()


def combine(named: Mapping[str, str | None]) -> str:
    """One fingerprint of several named ones (order-independent)."""
    digest = hashlib.sha256()
    for name in sorted(named):
        digest.update(f"{name} {named[name]}\n".encode())
    return PREFIX + digest.hexdigest()


def of_names(names: list[str]) -> str:
    """The fingerprint of a set of names, e.g. the public units of a split."""
    digest = hashlib.sha256()
    for name in sorted(names):
        digest.update(name.encode("utf-8", "surrogateescape") + b"\n")
    return PREFIX + digest.hexdigest()


def _file_digest(path: Path) -> str:
    digest = hashlib.sha256()
    with open(path, "rb", buffering=0) as f:
        while chunk := f.read(CHUNK):
            digest.update(chunk)
    return digest.hexdigest()


def _entries(root: Path) -> Iterator[bytes]:
    """The lines of a folder's fingerprint, in path order."""
    count = 0
    stack = [""]
    found: list[tuple[bytes, bytes]] = []
    while stack:
        relative = stack.pop()
        with os.scandir(root / relative if relative else root) as entries:
            for entry in entries:
                count += 1
                if count > MAX_ENTRIES:
                    raise TooManyEntries
                name = f"{relative}/{entry.name}" if relative else entry.name
                key = name.encode("utf-8", "surrogateescape")
                if entry.is_symlink():
                    found.append((key, b"L " + key + b" " + os.readlink(entry.path).encode("utf-8", "surrogateescape")))
                elif entry.is_dir(follow_symlinks=False):
                    found.append((key, b"D " + key))
                    stack.append(name)
                elif entry.is_file(follow_symlinks=False):
                    found.append((key, b"F " + key + b" " + _file_digest(Path(entry.path)).encode()))
    for _, line in sorted(found):
        yield line + b"\n"


def rule_parameters(parameters: tuple[Parameter, ...], values: Mapping[str, Any]) -> dict[str, Any]:
    """The values of the ``rule`` parameters: those that change what a score means."""
    return {p.name: values[p.name] for p in parameters if p.role == "rule"}


def truth_fingerprint(truth: Path, parameters: tuple[Parameter, ...], values: Mapping[str, Any]) -> str | None:
    """The truth's fingerprint, with the files of the ``data`` parameters that are set (each file's
    :func:`remembered_fingerprint`: the truth cache has hashed them already)."""
    own = remembered_fingerprint(truth)
    data = {
        p.name: remembered_fingerprint(Path(values[p.name]))
        for p in parameters
        if p.role == "data" and values[p.name] is not None
    }
    return own if not data else combine({"truth": own, **data})


def signature(
    challenge: str,
    parameters: tuple[Parameter, ...],
    values: Mapping[str, Any],
    truth: Path,
    submission_read: Mapping[str, str] | None,
    contest: Mapping[str, Any] | None = None,
) -> dict[str, Any]:
    """The signature of a result document; ``submission_read``: what the readers read of the submission (see above)."""
    return {
        "challenge": challenge,
        "podium_version": __version__,
        "parameters": rule_parameters(parameters, values),
        "truth": truth_fingerprint(truth, parameters, values),
        "submission": None if submission_read is None else of_read(submission_read),
        "contest": None if contest is None else dict(contest),
        "created": datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ"),
    }


COMPARED = {"challenge": "challenge", "parameters": "challenge parameters", "truth": "truth fingerprint"}


def comparable_part(sig: Mapping[str, Any], with_split: bool) -> dict[str, Any]:
    """What must be equal for two results to be ranked together (with the split when ranking by one)."""
    part = {key: sig.get(key) for key in COMPARED}
    if with_split:
        contest = sig.get("contest") or {}
        part["split"] = (contest.get("split") or {}).get("fingerprint")
    return part


def short(sig: Mapping[str, Any]) -> str:
    """One line: ``glas · podium 0.2.0 · truth sha256:1a2b3c4d5e6f · binary=auto ... · contest X split sha256:...``."""
    fields = [str(sig.get("challenge")), f"podium {sig.get('podium_version')}", f"truth {_cut(sig.get('truth'))}"]
    parameters = sig.get("parameters") or {}
    if parameters:
        fields.append(" ".join(f"{k}={_text(v)}" for k, v in parameters.items()))
    contest = sig.get("contest")
    if contest:
        fields.append(f"contest {contest.get('id')} split {_cut((contest.get('split') or {}).get('fingerprint'))}")
    return " · ".join(fields)


def _cut(value: object) -> str:
    return str(value)[: len(PREFIX) + 12] if value else "none"


def _text(value: object) -> str:
    if isinstance(value, list):
        return ",".join(map(str, value))
    return "none" if value is None else str(value)
