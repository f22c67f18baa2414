"""A real Dask cluster for the tests: ``dask scheduler`` and ``dask worker`` processes on 127.0.0.1.

The scheduler listens on a free loopback port and writes its address to a
scheduler file; each worker is a separate process (no nanny, one thread, so a
killed worker stays dead, as a lost machine does) started in its own folder,
not the tests' working directory. Everything is stopped at the end.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

START_TIMEOUT_S = 60.0


class Cluster:
    def __init__(self, workers: int = 2) -> None:
        self.folder = Path(tempfile.mkdtemp(prefix="podium-dask-"))
        self.file = self.folder / "scheduler.json"
        self.started = 0
        self.scheduler = self._start(
            "scheduler",
            "distributed.cli.dask_scheduler",
            "--host",
            "127.0.0.1",
            "--port",
            "0",
            "--no-dashboard",
            "--scheduler-file",
            str(self.file),
        )
        self.address = self._address()
        self.workers: list[subprocess.Popen[bytes]] = []
        for _ in range(workers):
            self.workers.append(self.add_worker())
        self.wait_for(len(self.workers))

    def _start(self, name: str, module: str, *arguments: str) -> subprocess.Popen[bytes]:
        log = open(self.folder / f"{name}.log", "wb")  # noqa: SIM115 (kept open for the process's life)
        cwd = self.folder / name
        cwd.mkdir(exist_ok=True)
        return subprocess.Popen(
            [sys.executable, "-m", module, *arguments],
            cwd=cwd,
            stdout=log,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )

    def _address(self) -> str:
        deadline = time.monotonic() + START_TIMEOUT_S
        while time.monotonic() < deadline:
            if self.scheduler.poll() is not None:
                raise RuntimeError(f"dask scheduler ended: {self.log('scheduler')}")
            try:
                return str(json.loads(self.file.read_text())["address"])
            except (OSError, ValueError, KeyError):
                time.sleep(0.1)
        raise RuntimeError("dask scheduler did not start")

    def add_worker(self) -> subprocess.Popen[bytes]:
        self.started += 1
        name = f"worker-{self.started}"
        return self._start(
            name,
            "distributed.cli.dask_worker",
            self.address,
            "--nthreads",
            "1",
            "--no-nanny",
            "--no-dashboard",
            "--name",
            name,
            "--host",
            "127.0.0.1",
            "--local-directory",
            str(self.folder / name),
        )

    def wait_for(self, count: int) -> None:
        from distributed import Client

        with Client(self.address, timeout=START_TIMEOUT_S) as client:
            client.wait_for_workers(count, timeout=START_TIMEOUT_S)

    def kill(self, worker: subprocess.Popen[bytes]) -> None:
        os.killpg(worker.pid, signal.SIGKILL)
        worker.wait(timeout=10)

    def log(self, name: str) -> str:
        return (self.folder / f"{name}.log").read_text(errors="replace")[-3000:]

    def stop(self) -> None:
        for process in [*self.workers, self.scheduler]:
            if process.poll() is None:
                os.killpg(process.pid, signal.SIGTERM)
        for process in [*self.workers, self.scheduler]:
            try:
                process.wait(timeout=3)
            except subprocess.TimeoutExpired:
                os.killpg(process.pid, signal.SIGKILL)
                process.wait()
