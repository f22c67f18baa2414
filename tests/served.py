"""A real ``podium serve`` (uvicorn and its worker processes) in a process group of its own, for the operations tests."""

from __future__ import annotations

import os
import re
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from podium.service.client import Answer, ServerUnreachable, request
from podium.service.statuses import FINAL


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def open_contest(contest: Path) -> Path:
    """``contest`` (written by ``service_helpers.write_contest``) with its phase open until 2099, for a server on the real clock."""
    contest.write_text(re.sub(r"end = \d{4}-\d\d-\d\dT", "end = 2099-01-01T", contest.read_text()))
    return contest


def podium(*args: str, stdin: str | None = None) -> subprocess.CompletedProcess[str]:
    """``podium ARGS`` in a new process; its exit code and output."""
    return subprocess.run(
        [sys.executable, "-m", "podium", *args], input=stdin, capture_output=True, text=True, timeout=120, check=False
    )


class Serve:
    """``podium serve`` on a free loopback port; ``kill()`` sends SIGKILL to it and its workers."""

    def __init__(
        self, contest: Path, data: Path, database: str | None, *extra: str, workers: int = 1, option: str = "--contest"
    ) -> None:
        self.port, self.data = free_port(), data
        self.url = f"http://127.0.0.1:{self.port}"
        self.command = [
            sys.executable,
            "-m",
            "podium",
            "serve",
            option,  # --contests: a folder of contests
            str(contest),
            "--data",
            str(data),
            "--port",
            str(self.port),
            "--workers",
            str(workers),
            "--sandbox",
            "none",
            *(["--database", database] if database else []),
            *extra,
        ]
        self.out, self.err = data.parent / f"serve-{self.port}.out", data.parent / f"serve-{self.port}.err"
        self.process: subprocess.Popen[bytes] | None = None

    def __enter__(self) -> Serve:
        with self.out.open("wb") as out, self.err.open("wb") as err:
            self.process = subprocess.Popen(self.command, stdout=out, stderr=err, start_new_session=True)
        for _ in range(300):  # bounded: 30 s
            if self.process.poll() is not None:
                raise AssertionError(f"podium serve ended ({self.process.returncode}): {self.output()}")
            try:
                if request(self.url, "GET", "/healthz").status == 200:
                    return self
            except ServerUnreachable:
                pass  # not listening yet
            time.sleep(0.1)
        self.kill()
        raise AssertionError(f"podium serve did not answer within 30 s: {self.output()}")

    def __exit__(self, *_: object) -> None:
        self.kill()

    def output(self) -> str:
        return self.out.read_text(errors="replace")[-2000:] + self.err.read_text(errors="replace")[-4000:]

    def kill(self) -> None:
        """SIGKILL to podium serve and everything it started (its process group)."""
        if self.process is not None and self.process.poll() is None:
            os.killpg(self.process.pid, signal.SIGKILL)
            self.process.wait(timeout=30)

    def call(self, method: str, path: str, token: str | None = None, **kwargs: Any) -> Answer:
        return request(self.url, method, path, token, **kwargs)

    def settled(self, token: str, count: int, timeout_s: float = 120) -> list[dict[str, Any]]:
        """The team's submissions once ``count`` of them are final (scored, rejected, ...), each with its newest round."""
        deadline = time.monotonic() + timeout_s
        while True:
            shown = self.call("GET", "/api/submissions", token).body
            if sum(item["status"] in FINAL for item in shown) >= count or time.monotonic() > deadline:
                return shown
            time.sleep(0.2)
