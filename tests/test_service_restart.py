"""``podium serve`` killed with SIGKILL: its workers die with it, and what killed workers left is removed at the next start;
its workers score at a lower CPU priority than its web process.

A real ``podium serve`` with a real worker process; loops are bounded.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

from podium.runner import tree
from podium.runner.workdir import RUN_PREFIX, STAGE_PREFIX, remove_abandoned, temporary_folder
from service_helpers import write_contest


def a_dead_pid() -> int:
    process = subprocess.Popen(["true"])
    process.wait()
    return process.pid


def workers_of(serve: int) -> list[int]:
    found = []
    for pid in tree.descendants(serve):
        try:
            if b"worker" in Path(f"/proc/{pid}/cmdline").read_bytes():
                found.append(pid)
        except OSError:
            continue  # ended meanwhile
    return found


def niceness(pid: int) -> dict[int, int]:
    """The niceness of each thread of process ``pid``, by thread id (Linux keeps one per thread)."""
    found = {}
    for task in Path(f"/proc/{pid}/task").iterdir():
        try:
            found[int(task.name)] = int((task / "stat").read_text().rsplit(")", 1)[1].split()[16])
        except (OSError, IndexError):
            continue  # ended meanwhile
    return found


def gone(pid: int) -> bool:
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] == "Z"
    except FileNotFoundError:
        return True


def test_workers_die_with_a_killed_serve_and_their_folders_go_at_the_next_start(tmp_path: Path) -> None:
    contest = write_contest(tmp_path / "contest")
    abandoned = Path(f"/tmp/{RUN_PREFIX}{a_dead_pid()}-test")  # a worker killed mid-run left it
    (abandoned / "work").mkdir(parents=True)
    (abandoned / "work" / "junk.bin").write_bytes(b"x" * 1000)
    database = f"sqlite:///{tmp_path / 'podium.sqlite3'}"
    command = [
        sys.executable,
        "-m",
        "podium",
        "serve",
        "--contest",
        str(contest),
        "--data",
        str(tmp_path / "data"),
        "--database",
        database,
        "--port",
        "0",
        "--workers",
        "1",
        "--sandbox",
        "none",
    ]
    serve = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, start_new_session=True)
    workers: list[int] = []
    try:
        for _ in range(300):  # bounded: 30 s
            workers = workers_of(serve.pid)
            if workers and not abandoned.exists():
                break
            time.sleep(0.1)
        assert workers and not abandoned.exists(), (
            workers,
            serve.stderr.read1().decode() if serve.poll() is not None and serve.stderr else "",
        )
        assert (
            b"sqlite" not in Path(f"/proc/{workers[0]}/cmdline").read_bytes()
        )  # the URL, which may hold a password, is not on its command line
        for _ in range(100):  # bounded: 10 s; the worker starts its thread that scores files as it starts
            if 10 in niceness(workers[0]).values():
                break
            time.sleep(0.1)
        # scoring files yields the cores to the web process (serve --worker-nice, 10 by default); the worker's own
        # thread, which runs programs (whose time is wall time), and the web process keep theirs
        assert sorted(set(niceness(workers[0]).values())) == [0, 10] and niceness(workers[0])[workers[0]] == 0
        assert set(niceness(serve.pid).values()) == {0}
        os.kill(serve.pid, signal.SIGKILL)
        serve.wait(timeout=10)
        for _ in range(100):  # bounded: 10 s
            if all(gone(pid) for pid in workers):
                break
            time.sleep(0.1)
        assert all(gone(pid) for pid in workers), workers
    finally:
        if serve.poll() is None:
            os.killpg(serve.pid, signal.SIGKILL)
        for pid in workers:  # orphans, if the test failed
            if not gone(pid):
                os.kill(pid, signal.SIGKILL)


def test_only_folders_of_processes_that_are_gone_are_removed() -> None:
    mine = temporary_folder(RUN_PREFIX)
    dead = [Path(f"/tmp/{prefix}{a_dead_pid()}-test") for prefix in (RUN_PREFIX, STAGE_PREFIX)]
    other = Path(f"/tmp/{RUN_PREFIX}x{os.getpid()}-test")  # not named by a process: not podium's (one per test process)
    for folder in (*dead, other):
        folder.mkdir()
    try:
        removed = remove_abandoned()
        assert set(dead) <= set(removed) and mine.exists() and other.exists()
        assert not any(folder.exists() for folder in dead)
    finally:
        for folder in (mine, other, *dead):
            if folder.exists():
                folder.rmdir()
