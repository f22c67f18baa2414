"""A submission's fingerprint is made of what the readers read: nothing they refuse or ignore is read for it.

Sparse files (``truncate``: instant to make, slow to read) stand in for the
large files of a hostile team; each refusal is timed.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import time
from pathlib import Path

import pytest

from conftest import run_json
from podium.challenges import get
from podium.core.provenance import of_read
from podium.formats.files import FileProblem, read_bytes, read_mapped, recording_reads
from podium.scoring.engine import evaluate

SPARSE = 10 << 30  # 10 GB of nothing: 3 s or more to hash


def sparse(path: Path, size: int = SPARSE) -> Path:
    with open(path, "wb") as f:
        f.truncate(size)
    return path


@pytest.mark.parametrize(("challenge", "name"), [("face-clustering", "team.csv"), ("ilsvrc2012-cls", "team.txt")])
def test_a_sparse_10_gb_file_is_refused_at_once(tmp_path: Path, challenge: str, name: str) -> None:
    demo = get(challenge).write_demo(tmp_path / "demo")
    submission = tmp_path / "submission"
    submission.mkdir()
    sparse(submission / name)
    # CPU seconds (every thread's): reading or hashing the file would cost them; waiting for a core does not
    started = time.process_time()
    code, document = run_json(challenge, demo.truth, submission, *_settings(demo))
    took = time.process_time() - started
    assert code == 1 and document["status"] == "rejected" and document["errors"][0]["message"].startswith("is 11 GB"), (
        document
    )
    assert took < 3, took  # the CLI's own start included; hashing the file took 3 to 32 s
    assert document["signature"]["submission"] == of_read({})


def test_ignored_extras_are_not_read_and_do_not_change_the_fingerprint(tmp_path: Path) -> None:
    demo = get("glas").write_demo(tmp_path / "demo")
    plain = evaluate("glas", demo.truth, demo.submission)
    padded = tmp_path / "padded"
    shutil.copytree(demo.submission, padded)
    sparse(padded / "junk.bin")
    (padded / "notes").mkdir()
    (padded / "notes" / "readme.txt").write_text("not a mask")
    started = time.process_time()
    result = evaluate("glas", demo.truth, padded)
    assert time.process_time() - started < 3  # hashing junk.bin took 14 s (a real 4 GB) or 3 s (sparse 10 GB)
    assert result.status == plain.status == "scored" and result.scores == plain.scores
    assert result.signature["submission"] == plain.signature["submission"] is not None
    (padded / "testA_1_seg.png").write_bytes(
        (padded / "testA_1_seg.png").read_bytes() + b"\0"
    )  # a read file changed: another fingerprint
    assert evaluate("glas", demo.truth, padded).signature["submission"] != plain.signature["submission"]


def test_the_fingerprint_is_the_same_inline_and_from_worker_processes(tmp_path: Path, pool_always: None) -> None:
    demo = get("glas").write_demo(tmp_path / "demo")
    inline, pooled = (
        evaluate("glas", demo.truth, demo.submission),
        evaluate("glas", demo.truth, demo.submission, workers=2),
    )
    files = sorted(p.name for p in demo.submission.iterdir())
    expected = of_read({name: _sha256(demo.submission / name) for name in files})
    assert inline.signature["submission"] == pooled.signature["submission"] == expected


def test_recording_names_files_relative_to_the_submission_only(tmp_path: Path) -> None:
    (tmp_path / "sub" / "deep").mkdir(parents=True)
    (tmp_path / "sub" / "deep" / "a.txt").write_text("a")
    (tmp_path / "sub-other.txt").write_text("beside, not inside")
    with recording_reads(tmp_path / "sub") as read:
        read_bytes(tmp_path / "sub" / "deep" / "a.txt", 10)
        read_bytes(tmp_path / "sub-other.txt", 100)
    assert read == {"deep/a.txt": _sha256(tmp_path / "sub" / "deep" / "a.txt")}
    with recording_reads(tmp_path / "sub-other.txt") as read:
        read_bytes(tmp_path / "sub-other.txt", 100)
    assert list(read) == ["sub-other.txt"]
    read_bytes(tmp_path / "sub-other.txt", 100)  # outside any recording: nothing kept anywhere


def test_a_mapped_file_is_read_checked_and_recorded_as_a_copied_one(tmp_path: Path) -> None:
    """read_mapped, the reader of ILSVRC Task 1's clean files: the bytes, the refusals and the fingerprint of read_bytes."""
    (tmp_path / "sub").mkdir()
    path, empty, link, fifo = (tmp_path / "sub" / name for name in ("a.txt", "empty.txt", "link.txt", "fifo"))
    path.write_bytes(b"1 2 3 4 5\n" * 1000)
    empty.touch()
    link.symlink_to(path)
    os.mkfifo(fifo)
    with recording_reads(tmp_path / "sub") as mapped:
        assert read_mapped(path, 10_000)[:] == read_bytes(path, 10_000) and read_mapped(empty, 10) == b""
    with recording_reads(tmp_path / "sub") as copied:
        read_bytes(path, 10_000), read_bytes(empty, 10)
    assert mapped == copied == {"a.txt": _sha256(path), "empty.txt": _sha256(empty)}
    for bad, message in ((link, "is a symbolic link"), (fifo, "is not a regular file"), (path, "is 10 kB")):
        with pytest.raises(FileProblem) as mapped_problem:
            read_mapped(bad, 9_999)
        with pytest.raises(FileProblem) as copied_problem:
            read_bytes(bad, 9_999)
        assert str(mapped_problem.value) == str(copied_problem.value) and str(mapped_problem.value).startswith(message)


def _sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def _settings(demo) -> list[str]:  # type: ignore[no-untyped-def]
    return [arg for key, value in demo.settings.items() for arg in ("--set", f"{key}={value}")]
