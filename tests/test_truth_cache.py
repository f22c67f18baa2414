"""The truth read once per process: kept by content, read again whenever the files change."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest

from podium.challenges import get
from podium.core import provenance
from podium.formats import ilsvrc, truth_cache
from podium.scoring import engine
from test_truth_digests import count_hashing, written_long_ago


@pytest.fixture(autouse=True)
def _empty() -> Iterator[None]:
    truth_cache.clear()
    yield
    truth_cache.clear()


class Reader:
    def __init__(self, path: Path) -> None:
        self.path, self.calls = path, 0

    def __call__(self) -> list[str]:
        self.calls += 1
        return self.path.read_text().split()


def test_a_file_is_read_once_while_its_content_stays(tmp_path: Path) -> None:
    path = tmp_path / "truth.txt"
    path.write_text("a b\n")
    read = Reader(path)
    first = truth_cache.cached("words", (path,), read)
    assert truth_cache.cached("words", (path,), read) is first and read.calls == 1
    assert truth_cache.cached("words", (path,), read, "other argument") == first and read.calls == 2
    assert truth_cache.cached("letters", (path,), read) == first and read.calls == 3


def test_a_file_rewritten_with_the_same_size_and_time_stamps_is_read_again(tmp_path: Path) -> None:
    path = tmp_path / "truth.txt"
    path.write_text("a b\n")
    read = Reader(path)
    assert truth_cache.cached("words", (path,), read) == ["a", "b"]
    status = os.stat(path)
    path.write_text("c d\n")
    os.utime(path, ns=(status.st_atime_ns, status.st_mtime_ns))  # the change time cannot be set back
    assert truth_cache.cached("words", (path,), read) == ["c", "d"] and read.calls == 2


def test_a_folder_is_read_again_when_a_file_inside_changes(tmp_path: Path) -> None:
    (tmp_path / "truth").mkdir()
    inner = tmp_path / "truth" / "a.txt"
    inner.write_text("1")
    calls: list[int] = []

    def read() -> str:
        calls.append(1)
        return inner.read_text()

    assert truth_cache.cached("folder", (tmp_path / "truth",), read) == "1"
    assert truth_cache.cached("folder", (tmp_path / "truth",), read) == "1" and len(calls) == 1
    inner.write_text("2")
    assert truth_cache.cached("folder", (tmp_path / "truth",), read) == "2" and len(calls) == 2


def test_failures_are_not_kept_and_the_oldest_reading_leaves_first(tmp_path: Path) -> None:
    path = tmp_path / "truth.txt"
    path.write_text("x")

    def fail() -> None:
        raise ValueError("broken")

    for _ in range(2):
        with pytest.raises(ValueError):
            truth_cache.cached("failing", (path,), fail)
    paths = [tmp_path / f"{k}.txt" for k in range(truth_cache.SIZE + 1)]
    readers = [Reader(p) for p in paths]
    for p, read in zip(paths, readers):
        p.write_text(p.name)
        truth_cache.cached("many", (p,), read)
    truth_cache.cached("many", (paths[-1],), readers[-1])
    truth_cache.cached("many", (paths[0],), readers[0])
    assert readers[-1].calls == 1 and readers[0].calls == 2  # the first had left: SIZE readings are kept


def test_a_missing_file_goes_to_its_reader(tmp_path: Path) -> None:
    with pytest.raises(FileNotFoundError):
        truth_cache.cached("missing", (tmp_path / "none",), lambda: (tmp_path / "none").read_text())


def test_scoring_twice_reads_the_ilsvrc_boxes_once(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    demo = get("ilsvrc2012-loc").write_demo(tmp_path)
    calls: list[Path] = []
    real = ilsvrc.read_val_boxes

    def counting(source: Path, n_images: int, id_of_wnid: dict[str, int]) -> list:
        calls.append(source)
        return real(source, n_images, id_of_wnid)

    monkeypatch.setattr(ilsvrc, "read_val_boxes", counting)
    first = engine.evaluate("ilsvrc2012-loc", demo.truth, demo.submission, demo.settings)
    second = engine.evaluate("ilsvrc2012-loc", demo.truth, demo.submission, demo.settings)
    assert len(calls) == 1 and first.scores == second.scores
    boxes = Path(demo.settings["boxes"])
    target = next(boxes.iterdir()) if boxes.is_dir() else boxes
    target.write_bytes(target.read_bytes())  # written again with the same bytes: the same truth, kept
    engine.evaluate("ilsvrc2012-loc", demo.truth, demo.submission, demo.settings)
    assert len(calls) == 1


def test_the_truth_is_hashed_once_for_the_cache_and_the_signature(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The truth cache's key and the result's signature share one digest of the truth (it was hashed twice), and a
    truth written again is hashed again, for both."""
    demo = get("ilsvrc2012-cls").write_demo(tmp_path)
    written_long_ago(monkeypatch)  # a truth written in the tick it is hashed in is hashed at every call
    hashed = count_hashing(monkeypatch)
    result = engine.evaluate("ilsvrc2012-cls", demo.truth, demo.submission)
    assert hashed == [demo.truth] and result.signature["truth"] == provenance.fingerprint(demo.truth)
    engine.evaluate("ilsvrc2012-cls", demo.truth, demo.submission)
    assert len(hashed) == 2  # the fingerprint just above; the second evaluation hashed nothing
    status = os.stat(demo.truth)
    demo.truth.write_bytes(demo.truth.read_bytes().replace(b"\n", b"\n", 1))
    os.utime(demo.truth, ns=(status.st_atime_ns, status.st_mtime_ns))  # the change time cannot be set back
    again = engine.evaluate("ilsvrc2012-cls", demo.truth, demo.submission)
    assert hashed[2:] == [demo.truth] and again.signature["truth"] == result.signature["truth"]
