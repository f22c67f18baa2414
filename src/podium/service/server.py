"""``podium serve``: the web app on uvicorn and N worker processes beside it, restarted if they die.

The workers are told by the kernel to stop (SIGTERM, ``PR_SET_PDEATHSIG``)
when ``podium serve`` dies, even by SIGKILL, so none runs on as an orphan; at
start, uploads half received by a server that was killed are deleted.
"""

from __future__ import annotations

import ctypes
import os
import shutil
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import TYPE_CHECKING

from sqlalchemy import Engine

from podium.contest import Contest
from podium.errors import UsageError
from podium.service import state
from podium.service.database import writing

if TYPE_CHECKING:
    from podium.service.scoring import Runtime

RESTART_PAUSE_S = 2.0
PR_SET_PDEATHSIG = 1


def clean_leftovers(data: Path, older_than_s: float = 0.0) -> int:
    """Delete what uploads left in ``DATA/incoming`` (spooled bodies, unpacked staging folders) older than ``older_than_s``; how many."""
    incoming = data / "incoming"
    if not incoming.is_dir():
        return 0
    cleaned = 0
    for entry in incoming.iterdir():
        if time.time() - entry.lstat().st_mtime < older_than_s:
            continue
        if entry.is_dir() and not entry.is_symlink():
            shutil.rmtree(entry, ignore_errors=True)
        else:
            entry.unlink(missing_ok=True)
        cleaned += 1
    return cleaned


def stop_with(parent: int) -> None:
    """Have this process sent SIGTERM when ``parent`` (the process that started it) dies; at once if it has died already."""
    if sys.platform == "linux":
        ctypes.CDLL(None, use_errno=True).prctl(PR_SET_PDEATHSIG, signal.SIGTERM, 0, 0, 0)
    if os.getppid() != parent:
        os.kill(os.getpid(), signal.SIGTERM)


def register_contest(engine: Engine, contest: Contest) -> None:
    """Tie the database to ``contest`` (refused if it holds another contest's submissions)."""
    with writing(engine) as connection:
        known = state.get(connection, state.CONTEST_ID)
        if known is not None and known != contest.id:
            raise UsageError(f"this database holds the contest {known!r}, not {contest.id!r}; give another --data or --database")
        state.put(connection, state.CONTEST_ID, contest.id)
        state.put(connection, state.CONTEST_PATH, str(contest.path.resolve()))


def worker_argv(database: str, data: Path, runtime: Runtime) -> list[str]:
    command = [sys.executable, "-m", "podium", "worker", "--database", database, "--data", str(data), "--sandbox", runtime.sandbox, "--stop-with", str(os.getpid())]
    return command + (["--cgroup", str(runtime.cgroup)] if runtime.cgroup else []) + (["--scheduler", runtime.scheduler] if runtime.scheduler else [])


class Workers:
    """N ``podium worker`` processes, each started again if it ends while the service runs."""

    def __init__(self, command: list[str], count: int) -> None:
        self.command = command
        self.stopping = threading.Event()
        self.processes: list[subprocess.Popen[bytes]] = []
        self.threads = [threading.Thread(target=self._keep_one, daemon=True) for _ in range(count)]

    def start(self) -> None:
        for thread in self.threads:
            thread.start()

    def _keep_one(self) -> None:
        while not self.stopping.is_set():
            process = subprocess.Popen(self.command)
            self.processes.append(process)
            process.wait()
            if not self.stopping.is_set():
                print(f"podium: a worker ended (exit code {process.returncode}); starting another", file=sys.stderr)
                self.stopping.wait(RESTART_PAUSE_S)

    def stop(self) -> None:
        self.stopping.set()
        for process in self.processes:
            if process.poll() is None:
                process.terminate()
        for process in self.processes:
            try:
                process.wait(timeout=30)
            except subprocess.TimeoutExpired:
                process.kill()
