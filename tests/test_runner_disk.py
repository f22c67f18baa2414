"""``[limits] disk_mb``: a program cannot fill the server's disk from its working folder.

Real programs in the real sandbox (bubblewrap; in CI it must be there), and
unconfined (``--sandbox none``), which the same bounds hold.
"""

from __future__ import annotations

import os
import shutil
import sys
import tempfile
import textwrap
from pathlib import Path

import pytest

from conftest import require
from podium.challenges import get
from podium.runner.confine import drop_to
from podium.runner.disk import used_bytes
from podium.runner.process import Limits
from podium.runner.sandbox import CODE_FOLDER, SANDBOX_ID, bwrap_problem
from podium.scoring.run import RunRequest, run_program

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="Linux runner")
LIMIT_MB = 64
MARGIN_MB = 48  # what a writer adds between two scans (measured: 4 to 27 MB), with room for a busy machine


@pytest.fixture(params=["bwrap", "none"])
def sandbox(request: pytest.FixtureRequest) -> str:
    if request.param == "bwrap":
        require("bubblewrap", bwrap_problem())
    return str(request.param)


def run(
    tmp_path: Path, sandbox: str, code: str, disk_limit_mb: float | None = LIMIT_MB, time_limit_s: float = 30
) -> dict:
    """Run ``code`` (Python) as a face-clustering program; the run section, and the folder's peak measured by the test."""
    demo = get("face-clustering").write_demo(tmp_path / "contest")
    folder = tmp_path / "program"
    folder.mkdir()
    (folder / "p.py").write_text(textwrap.dedent(code))
    result = run_program(
        RunRequest(
            "face-clustering",
            tmp_path / "contest" / "images",
            demo.truth,
            Limits(time_limit_s, 1024, disk_limit_mb),
            command=f"python3 {CODE_FOLDER if sandbox == 'bwrap' else folder}/p.py",
            settings={"th1_s": "5", "th2_s": "60", "ram_max_mb": "4096"},
            sandbox=sandbox,
            code=folder,
        )
    )
    assert result.run is not None
    return {**result.run, "errors": [issue.message for issue in result.errors], "status": result.status}


MANY_FILES = """
    import os
    chunk = os.urandom(1 << 20)
    for k in range(100_000):  # 100 GB if nothing stopped it
        with open(f"junk-{k}.bin", "wb") as f:
            for _ in range(4):
                f.write(chunk)
"""


PREALLOCATED = """
    import os
    for k in range(100_000):  # each file under the limit, reserved at once rather than written
        fd = os.open(f"junk-{k}.bin", os.O_CREAT | os.O_WRONLY)
        os.posix_fallocate(fd, 0, 60 << 20)
        os.close(fd)
"""


@pytest.mark.parametrize("code", [MANY_FILES, PREALLOCATED], ids=["written", "fallocated"])
def test_a_fast_writer_of_many_files_is_stopped_near_the_limit(tmp_path: Path, sandbox: str, code: str) -> None:
    run_ = run(tmp_path, sandbox, code)
    assert run_["outcome"] == "disk_limit" and run_["status"] == "rejected", run_
    assert run_["errors"] == [
        f"the program was stopped: its working folder reached the disk limit of {LIMIT_MB} MB (files it writes count, in all)"
    ]
    assert LIMIT_MB < run_["peak_disk_mb"] < LIMIT_MB + MARGIN_MB, run_
    assert run_["wall_s"] < 10 and run_["disk_limit_mb"] == LIMIT_MB


def test_one_file_stops_at_the_limit_sparse_or_not(tmp_path: Path, sandbox: str) -> None:
    code = """
        import os, sys
        try:
            open("sparse.bin", "wb").truncate(10 << 30)  # 10 GB of nothing
        except OSError as exc:
            print("truncate:", exc.strerror, file=sys.stderr)
        with open("big.bin", "wb") as f:
            while True:
                f.write(b"x" * (1 << 20))
    """
    run_ = run(tmp_path / "a", sandbox, code)
    assert run_["outcome"] == "disk_limit", run_
    assert "truncate: File too large" in run_["stderr_tail"]  # RLIMIT_FSIZE: no file past the limit, not even a hole
    assert LIMIT_MB <= run_["peak_disk_mb"] < LIMIT_MB + 1, run_  # the kernel stops the file at the limit exactly


def test_files_hidden_in_an_unreadable_folder_still_count(tmp_path: Path, sandbox: str) -> None:
    code = """
        import os, time
        os.mkdir("hidden")
        for k in range(24):
            with open(f"hidden/{k}.bin", "wb") as f:
                f.write(os.urandom(4 << 20))
        os.chmod("hidden", 0)
        time.sleep(30)
    """
    run_ = run(tmp_path, sandbox, code)
    assert run_["outcome"] == "disk_limit" and run_["wall_s"] < 10, run_


def test_a_program_within_the_limit_is_scored_and_its_use_reported(tmp_path: Path, sandbox: str) -> None:
    code = """
        import os
        open("scratch.bin", "wb").write(os.urandom(8 << 20))
        os.remove("scratch.bin")
        names = sorted(os.listdir(open("input.txt").read().strip()))
        open("team.csv", "w").write("".join(f"{name.rsplit('.', 1)[0]}, 1\\n" for name in names))
    """
    run_ = run(tmp_path, sandbox, code)
    assert run_["outcome"] == "finished" and run_["status"] == "scored", run_
    assert 0 < run_["peak_disk_mb"] < 9, run_
    unbounded = run(tmp_path / "unbounded", sandbox, code, disk_limit_mb=None)
    assert unbounded["outcome"] == "finished" and unbounded["peak_disk_mb"] is None


def test_fallocate_itself_is_refused(tmp_path: Path, sandbox: str) -> None:
    code = """
        import ctypes, os, sys
        libc = ctypes.CDLL(None, use_errno=True)
        fd = os.open("reserved.bin", os.O_CREAT | os.O_WRONLY)
        print("fallocate:", libc.fallocate(fd, 0, ctypes.c_long(0), ctypes.c_long(1 << 20)), os.strerror(ctypes.get_errno()), file=sys.stderr)
    """
    run_ = run(tmp_path, sandbox, code)
    assert "fallocate: -1 Operation not supported" in run_["stderr_tail"], run_


def test_used_bytes_counts_blocks_not_sizes(tmp_path: Path) -> None:
    with open(tmp_path / "sparse", "wb") as f:
        f.truncate(1 << 30)
    (tmp_path / "folder").mkdir()
    (tmp_path / "folder" / "data").write_bytes(b"x" * 100_000)
    assert 100_000 <= used_bytes(tmp_path) < 200_000


def test_used_bytes_opens_a_folder_its_owner_closed(tmp_path: Path) -> None:
    """podium runs as the program's owner when it is not root: a folder made unreadable must still be counted."""
    folder = Path(tempfile.mkdtemp(dir="/tmp"))  # reachable by the unprivileged user
    try:
        (folder / "hidden").mkdir()
        (folder / "hidden" / "data").write_bytes(b"x" * 1_000_000)
        (folder / "hidden").chmod(0)
        if os.geteuid() == 0:  # root reads it anyway: count as its unprivileged owner would, in a child
            for path in (folder, folder / "hidden", folder / "hidden" / "data"):
                os.chown(path, SANDBOX_ID, SANDBOX_ID)
            read, write = os.pipe()
            child = os.fork()
            if child == 0:
                drop_to(SANDBOX_ID, SANDBOX_ID)
                os.write(write, str(used_bytes(folder)).encode())
                os._exit(0)
            os.close(write)
            os.waitpid(child, 0)
            with os.fdopen(read) as pipe:
                counted = int(pipe.read() or 0)
        else:
            counted = used_bytes(folder)
        assert counted >= 1_000_000
    finally:
        shutil.rmtree(folder)
