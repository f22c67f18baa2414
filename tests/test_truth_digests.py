"""The organizer's file digests remembered across runs (core.provenance's digests file): trusted only for a file
as it was, and never in the tick it was written; a cache that cannot be written or read changes nothing."""

from __future__ import annotations

import hashlib
import os
from collections.abc import Iterator
from pathlib import Path

import pytest

from podium.core import provenance


def count_hashing(monkeypatch: pytest.MonkeyPatch) -> list[Path]:
    """The files provenance hashes from now on (the list grows as it hashes them)."""
    calls: list[Path] = []
    digest = provenance._file_digest

    def counted(path: Path) -> str:
        calls.append(path)
        return digest(path)

    monkeypatch.setattr(provenance, "_file_digest", counted)
    return calls


@pytest.fixture
def hashed(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[list[Path]]:
    """The files hashed, in a cache folder of the test's own; every ``provenance.forget()`` is a new process."""
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    provenance.forget()
    yield count_hashing(monkeypatch)
    provenance.forget()


def sha256(path: Path) -> str:
    return "sha256:" + hashlib.sha256(path.read_bytes()).hexdigest()


def written_long_ago(monkeypatch: pytest.MonkeyPatch) -> None:
    """A file written before the digest's line by more than the time stamps' granularity (here: any time before)."""
    monkeypatch.setattr(provenance, "GRANULARITY_NS", 0)


def test_a_file_is_hashed_once_across_runs(tmp_path: Path, hashed: list[Path], monkeypatch: pytest.MonkeyPatch) -> None:
    written_long_ago(monkeypatch)
    path = tmp_path / "truth.txt"
    path.write_text("1\n2\n")
    assert provenance.remembered_fingerprint(path) == sha256(path) and len(hashed) == 1
    provenance.forget()  # the next run
    assert provenance.remembered_fingerprint(path) == sha256(path) and len(hashed) == 1
    assert provenance.digests_file() == tmp_path / "cache" / "podium" / "file-digests.txt"
    assert len(provenance.digests_file().read_text().splitlines()) == 1


def test_a_file_changed_with_its_size_and_modification_time_kept_is_hashed_again(
    tmp_path: Path, hashed: list[Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    written_long_ago(monkeypatch)
    path = tmp_path / "truth.txt"
    path.write_text("1\n2\n")
    before = os.stat(path)
    first = provenance.remembered_fingerprint(path)
    path.write_text("3\n4\n")
    os.utime(path, ns=(before.st_atime_ns, before.st_mtime_ns))  # the change time cannot be set back
    assert os.stat(path).st_size == before.st_size and os.stat(path).st_mtime_ns == before.st_mtime_ns
    provenance.forget()
    assert provenance.remembered_fingerprint(path) == sha256(path) != first and len(hashed) == 2


def test_a_line_written_in_the_tick_of_the_file_is_not_trusted(tmp_path: Path, hashed: list[Path]) -> None:
    """Racily clean, as git says: a file changed within the time stamps' granularity of its hashing could keep its
    identity with other bytes, so its line is not trusted (the file here was written a moment ago)."""
    path = tmp_path / "truth.txt"
    path.write_text("1\n2\n")
    assert provenance.remembered_fingerprint(path) == sha256(path)
    provenance.forget()
    assert provenance.remembered_fingerprint(path) == sha256(path) and len(hashed) == 2
    assert len(provenance.digests_file().read_text().splitlines()) == 2  # each run wrote its line


def test_a_cache_folder_that_cannot_be_written_changes_nothing(
    tmp_path: Path, hashed: list[Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    written_long_ago(monkeypatch)
    (tmp_path / "not-a-folder").write_text("")
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "not-a-folder"))  # even root cannot make a folder in a file
    path = tmp_path / "truth.txt"
    path.write_text("1\n")
    for _ in range(2):
        provenance.forget()
        assert provenance.remembered_fingerprint(path) == sha256(path)
    assert len(hashed) == 2


def test_a_corrupt_cache_file_is_ignored(tmp_path: Path, hashed: list[Path], monkeypatch: pytest.MonkeyPatch) -> None:
    written_long_ago(monkeypatch)
    path = tmp_path / "truth.txt"
    path.write_text("1\n")
    key = " ".join(map(str, provenance.file_identity(path) or ()))
    provenance.digests_file().parent.mkdir(parents=True)
    forged = [
        b"\x00\xff junk",
        b"",
        f"{'ab' * 31} {key} 9{'9' * 20}".encode(),  # a digest too short
        f"{'G' * 64} {key} 9{'9' * 20}".encode(),  # not hex
        f"{'ab' * 32} {key} soon".encode(),  # no time
        f"{'ab' * 32} {key}".encode(),  # a field missing
    ]
    for line in forged:
        provenance.digests_file().write_bytes(line + b"\n")
        provenance.forget()
        assert provenance.remembered_fingerprint(path) == sha256(path), line
    assert len(hashed) == len(forged)


def test_the_cache_file_keeps_its_newest_lines(
    tmp_path: Path, hashed: list[Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    written_long_ago(monkeypatch)
    monkeypatch.setattr(provenance, "DIGESTS_KEPT", 3)
    paths = [tmp_path / f"truth-{i}.txt" for i in range(10)]
    for i, path in enumerate(paths):
        path.write_text(f"{i}\n")
        provenance.remembered_fingerprint(path)
    assert len(provenance.digests_file().read_text().splitlines()) <= 6
    provenance.forget()
    assert provenance.remembered_fingerprint(paths[-1]) == sha256(paths[-1]) and len(hashed) == 10


@pytest.fixture
def coarse(tmp_path: Path) -> Iterator[Path]:
    """A folder on ext2 with 128-byte inodes, whose time stamps are whole seconds (as podium as root mounts it)."""
    import subprocess

    from conftest import require

    image, folder = tmp_path / "ext2.img", tmp_path / "coarse"
    folder.mkdir()
    with open(image, "wb") as f:
        f.truncate(4 << 20)
    made = subprocess.run(["mkfs.ext2", "-q", "-F", "-I", "128", str(image)], capture_output=True)
    mounted = os.geteuid() == 0 and made.returncode == 0
    mounted = mounted and subprocess.run(["mount", "-o", "loop", str(image), str(folder)]).returncode == 0
    require("an ext2 file system mounted (root, mkfs.ext2, a loop device)", None if mounted else "not mounted")
    try:
        yield folder
    finally:
        subprocess.run(["umount", str(folder)])


def test_a_truth_written_again_in_the_second_it_was_read_is_read_again(
    coarse: Path, hashed: list[Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Where time stamps are whole seconds, a truth written again in the second it was hashed, same size and
    modification time, keeps its identity (device, inode, size, times): the process kept its digest, and the truth
    cache the old truth's reading, for good (a script writing a truth and evaluating, twice in a second)."""
    from podium.formats.truth_cache import cached

    path = coarse / "truth.txt"
    for _ in range(20):  # bounded: a second's turn between the two writes makes the times differ; tried again
        path.write_text("1\n")
        assert cached("lines", (path,), path.read_text) == "1\n"
        status = os.stat(path)
        path.write_text("2\n")
        os.utime(path, ns=(status.st_atime_ns, status.st_mtime_ns))
        if provenance.file_identity(path) == (
            status.st_dev,
            status.st_ino,
            status.st_size,
            status.st_mtime_ns,
            status.st_ctime_ns,
        ):
            break
    else:
        pytest.fail("the file's change time moved every time: not a file system of whole seconds")
    assert cached("lines", (path,), path.read_text) == "2\n"
    assert provenance.remembered_fingerprint(path) == sha256(path)


def test_two_processes_writing_the_cache_at_once_leave_no_wrong_digest(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Two processes hash 600 files each at once (the cache file rewritten past 512 lines, by either, while the other
    appends): every line the file keeps is whole, and every digest it gives back is the file's."""
    import subprocess
    import sys
    import time

    files = []
    for index in range(600):
        files.append(tmp_path / "files" / f"{index}.txt")
        files[-1].parent.mkdir(exist_ok=True)
        files[-1].write_text(f"{index}\n")
    time.sleep(provenance.GRANULARITY_NS / 1e9 + 0.1)  # older than the lines: trusted
    script = (
        "import sys; from pathlib import Path; from podium.core import provenance\n"
        "for path in sys.argv[1:]: provenance.remembered_fingerprint(Path(path))\n"
    )
    environment = {**os.environ, "XDG_CACHE_HOME": str(tmp_path / "cache")}
    names = [str(f) for f in files]
    both = [subprocess.Popen([sys.executable, "-c", script, *names[::step]], env=environment) for step in (1, -1)]
    assert [p.wait(timeout=120) for p in both] == [0, 0]
    lines = (tmp_path / "cache" / "podium" / "file-digests.txt").read_bytes().splitlines()
    assert lines and all(len(line.split()) == 7 and provenance._is_digest(line.split()[0]) for line in lines)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    given = {f: provenance._stored_digest(provenance.file_identity(f) or ()) for f in files}
    assert sum(d is not None for d in given.values()) >= 128  # the newest lines kept (the two's, some the same files)
    assert all(d is None or d == sha256(f) for f, d in given.items())
