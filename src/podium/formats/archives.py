"""Unpacking a submission safely: a plain file, a zip, or a tar.gz of a folder.

Every command and entry point that takes a submission folder also takes an
archive of it (:func:`opened`), and the service unpacks uploads with the same
code (:func:`unpack`).

The kind is read from the first bytes, never from the name. Every member must
be a regular file or a folder with a relative name of plain parts: links,
devices, absolute names, ``..``, backslashes and control characters are
refused, as are duplicate names, names that are not UTF-8 and names too long for the file system.
The number of entries, the bytes written
(counted while writing, not taken from the headers) and each member's
compression ratio are capped, so no archive can fill the disk or escape the
folder it is unpacked in. Problems are :class:`ArchiveProblem` with one line
that names the member. The archive modules (``zipfile``, ``tarfile``, ``gzip``) are imported when
an archive is unpacked: a plain file costs none of them.
"""

from __future__ import annotations

import os
import re
import zlib
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import IO

from podium.core.errors import PodiumError

CHUNK = 1 << 20
SAFE_PART = re.compile(r"^[^\x00-\x1f\x7f/\\]+$")
MAX_PART_BYTES = 255  # a file name's limit on Linux file systems, in UTF-8 bytes
MAX_NAME_BYTES = 1024  # a member's whole name: far below PATH_MAX (4096) once under the data folder
SAFE_FILENAME = re.compile(r"[^A-Za-z0-9._-]+")


class ArchiveProblem(PodiumError):
    """An upload that cannot be unpacked safely."""


@dataclass(frozen=True)
class ArchiveLimits:
    max_entries: int = 20_000
    max_bytes: int = 2 << 30  # unpacked, in all
    max_ratio: float = 200.0  # unpacked / packed, per member


def safe_filename(name: str) -> str:
    """An uploaded file's name reduced to letters, digits, ``.``, ``_`` and ``-`` (never empty, never hidden)."""
    base = SAFE_FILENAME.sub("_", name.replace("\\", "/").rsplit("/", 1)[-1]).strip("._") or "submission"
    return base[:128]


def kind_of(path: Path) -> str:
    """``zip``, ``tar.gz`` or ``file``, from the first bytes."""
    with open(path, "rb") as f:
        head = f.read(4)
    if head.startswith(b"PK\x03\x04") or head == b"PK\x05\x06":
        return "zip"
    if head.startswith(b"\x1f\x8b"):
        return "tar.gz"
    return "file"


def unpack(upload: Path, name: str, target: Path, limits: ArchiveLimits) -> Path:
    """Unpack ``upload`` into the new folder ``target``; return what to score.

    A plain file is kept as ``target/<safe name>`` and returned; an archive is
    unpacked into ``target`` and, if it holds one top folder only, that folder
    is returned (``submission.zip`` of ``submission/`` scores like the folder).
    """
    target.mkdir(parents=True)
    kind = kind_of(upload)
    if kind == "file":
        import shutil  # shutil and tempfile: where a file is copied or unpacked, not in every scoring process

        destination = target / safe_filename(name)
        shutil.copyfile(upload, destination)
        return destination
    writer = _Writer(target, limits)
    if kind == "zip":
        _unzip(upload, writer)
    else:
        _untar(upload, writer)
    if not any(target.iterdir()):
        raise ArchiveProblem(f"the {kind} archive is empty")
    return inside(target)


def inside(folder: Path) -> Path:
    """The one folder in ``folder`` when it holds nothing else, else ``folder``: how a zipped folder arrives.

    Hidden entries and macOS's ``__MACOSX`` folder of resource forks do not count.
    """
    entries = [p for p in folder.iterdir() if not p.name.startswith(".") and p.name != "__MACOSX"]
    if len(entries) == 1 and entries[0].is_dir() and not entries[0].is_symlink():
        return entries[0]
    return folder


@dataclass(frozen=True)
class Opened:
    """A submission ready to score: ``path``; for an archive, ``root`` is the folder it was unpacked in."""

    path: Path
    root: Path | None = None
    problem: str | None = None  # the archive could not be unpacked: why

    def member(self, name: str, archive: Path) -> str:
        """A file name under ``root`` as ``ARCHIVE/member`` (other names unchanged)."""
        if self.root is None or not os.path.isabs(name):
            return name
        relative = os.path.relpath(name, self.root)
        return str(archive) if relative == "." else name if relative.startswith("..") else f"{archive}/{relative}"


@contextmanager
def opened(submission: Path, limits: ArchiveLimits = ArchiveLimits()) -> Iterator[Opened]:
    """``submission`` as it is, or, when it is a zip or tar.gz file, unpacked in a temporary folder.

    The kind is read from the first bytes. A link is passed on untouched (the
    engine refuses it). A single top folder in the archive is looked through,
    as by :func:`unpack`; the folder is removed on leaving.
    """
    if submission.is_symlink() or not submission.is_file() or kind_of(submission) == "file":
        yield Opened(submission)
        return
    import tempfile

    with tempfile.TemporaryDirectory(prefix="podium-archive-") as folder:
        root = Path(folder) / "files"
        problem = None
        try:
            path = unpack(submission, submission.name, root, limits)
        except ArchiveProblem as exc:
            problem, path = str(exc), submission
        yield Opened(path, None if problem else root, problem)


class _Writer:
    """Writes members under ``root``, counting entries and bytes against the limits."""

    def __init__(self, root: Path, limits: ArchiveLimits) -> None:
        self.root = root
        self.limits = limits
        self.entries = 0
        self.written = 0
        self.seen: set[tuple[str, ...]] = set()

    def parts(self, name: str, folder: bool = False) -> tuple[str, ...]:
        """The name's parts, checked; ``()`` for a folder named ``.`` (``tar czf x.tar.gz -C dir .`` writes ``./``)."""
        self.entries += 1
        if self.entries > self.limits.max_entries:
            raise ArchiveProblem(f"the archive has more than {self.limits.max_entries} entries")
        if "\\" in name or name.startswith("/") or re.match(r"^[A-Za-z]:", name):
            raise ArchiveProblem(f"member {name[:200]!r}: absolute or Windows paths are refused")
        parts = tuple(p for p in name.split("/") if p not in ("", "."))
        if not parts and folder and "." in name:
            return parts
        if not parts:
            raise ArchiveProblem(f"member {name[:200]!r} has no name")
        for part in parts:
            if part == ".." or not SAFE_PART.match(part):
                raise ArchiveProblem(f"member {name[:200]!r}: '..' and control characters are refused in names")
            try:
                size = len(part.encode("utf-8"))
            except UnicodeEncodeError:  # bytes that are not UTF-8: the name could be neither shown nor stored as text
                raise ArchiveProblem(f"member {name[:200]!r}: names must be UTF-8") from None
            if size > MAX_PART_BYTES:
                raise ArchiveProblem(f"member {name[:200]!r}: a name part is over {MAX_PART_BYTES} bytes")
        if len("/".join(parts).encode("utf-8")) > MAX_NAME_BYTES:
            raise ArchiveProblem(f"member {name[:200]!r}: the name is over {MAX_NAME_BYTES} bytes")
        if parts in self.seen:
            raise ArchiveProblem(f"member {name[:200]!r} appears twice")
        self.seen.add(parts)
        return parts

    def folder(self, name: str) -> None:
        path = self.root.joinpath(*self.parts(name, folder=True))
        self._no_file_in_the_way(path)
        path.mkdir(parents=True, exist_ok=True)

    def file(self, name: str, source: IO[bytes], packed: int) -> None:
        path = self.root.joinpath(*self.parts(name))
        self._no_file_in_the_way(path.parent)
        path.parent.mkdir(parents=True, exist_ok=True)
        budget = max(packed, 1) * self.limits.max_ratio
        size = 0
        try:
            out = open(path, "xb")  # noqa: SIM115 (closed by the with below)  x: never overwrite
        except FileExistsError:
            raise ArchiveProblem(f"member {name[:200]!r} appears twice") from None
        with out:
            while chunk := source.read(CHUNK):
                size += len(chunk)
                self.written += len(chunk)
                if self.written > self.limits.max_bytes:
                    raise ArchiveProblem(f"the archive unpacks to more than {self.limits.max_bytes // 2**20} MB")
                if size > budget and size > CHUNK:
                    raise ArchiveProblem(
                        f"member {name[:200]!r} unpacks to over {self.limits.max_ratio:g} times its packed size (a zip bomb?)"
                    )
                out.write(chunk)
        os.chmod(path, 0o644)

    def _no_file_in_the_way(self, path: Path) -> None:
        for parent in (path, *path.parents):
            if parent == self.root:
                return
            if (parent.exists() and not parent.is_dir()) or parent.is_symlink():
                raise ArchiveProblem(f"{parent.relative_to(self.root)} is both a file and a folder in the archive")


def _unzip(upload: Path, writer: _Writer) -> None:
    import zipfile

    try:
        with zipfile.ZipFile(upload) as archive:
            for info in archive.infolist():
                mode = info.external_attr >> 16
                kind = mode & 0o170000
                if info.is_dir():
                    writer.folder(info.filename)
                elif kind not in (0, 0o100000):  # 0: made on a system without Unix modes
                    raise ArchiveProblem(
                        f"member {info.filename[:200]!r} is a link or a special file; only files and folders are taken"
                    )
                else:
                    with archive.open(info) as source:
                        writer.file(info.filename, source, info.compress_size)
    except (
        zipfile.BadZipFile,
        zipfile.LargeZipFile,
        NotImplementedError,
        EOFError,
        ValueError,
        zlib.error,
        RuntimeError,
    ) as exc:  # RuntimeError: encrypted
        raise ArchiveProblem(f"the zip archive cannot be read: {exc}") from None


def _untar(upload: Path, writer: _Writer) -> None:
    import gzip
    import tarfile

    packed = upload.stat().st_size
    try:
        with tarfile.open(upload, mode="r:gz") as archive:
            for member in archive:
                if member.isdir():
                    writer.folder(member.name)
                elif member.isreg():
                    source = archive.extractfile(member)
                    assert source is not None
                    writer.file(
                        member.name, source, packed
                    )  # tar.gz compresses the stream as one: the whole upload is the budget
                else:
                    raise ArchiveProblem(
                        f"member {member.name[:200]!r} is a link or a special file; only files and folders are taken"
                    )
    except (tarfile.TarError, EOFError, zlib.error, gzip.BadGzipFile) as exc:
        raise ArchiveProblem(f"the tar.gz archive cannot be read: {exc}") from None
