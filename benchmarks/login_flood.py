"""Writes under a flood of log-ins: a team's cancel while 24 clients log in over and over (issue 34, item 6).

``podium serve`` runs as its own process (no workers) on SQLite, then on a
private PostgreSQL server (tests/postgres_server.py; skipped where none can be
started). 24 client threads post the right password to ``POST /api/tokens``
as fast as the server answers, each from an address of its own (sent in
``X-Forwarded-For``, believed from ``--trusted-proxy 127.0.0.1``), so no
limiter slows them and every one costs an scrypt hash. Meanwhile a team
cancels a submission it does not have, 40 times, 50 ms apart: a write
transaction (``BEGIN IMMEDIATE`` on SQLite, a row lock on PostgreSQL) answered
404. The figures are the cancel's latency (median, 95th percentile, most)
alone and under the flood, and the log-ins served per second.

``--podium-src DIR`` runs the server from another checkout's ``src`` (e.g. an
older release) for a before/after comparison; its servers may lack
``--trusted-proxy`` (then it is left out). One run per database; loopback only.

    .venv/bin/python benchmarks/login_flood.py [--clients 24] [--podium-src ../main/src]
"""

from __future__ import annotations

import argparse
import http.client
import json
import os
import re
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from timing import machine_header

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))

CONTEST = """id = "flood"
title = "flood"
challenge = "camera-traps"
truth = "{truth}"
[[phase]]
name = "open"
start = 2020-01-01T00:00:00Z
end = 2040-01-01T00:00:00Z
submissions = "files"
"""
PASSWORD = "a-long-password-7"


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _post(port: int, path: str, body: bytes, headers: dict[str, str]) -> int:
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=60)
    try:
        connection.request("POST", path, body=body, headers=headers)
        response = connection.getresponse()
        response.read()
        return response.status
    finally:
        connection.close()


@contextmanager
def served(folder: Path, database: str | None, source: str | None) -> Iterator[tuple[int, str]]:
    """``podium serve`` with a team and a user: its port and the team's token."""
    from podium.challenges import get

    environment = {**os.environ, **({"PYTHONPATH": source} if source else {})}
    truth = get("camera-traps").write_demo(folder / "demo").truth
    contest = folder / "contest.toml"
    contest.write_text(CONTEST.format(truth=truth))
    base = [sys.executable, "-m", "podium"]
    where = ["--data", str(folder / "data")] + (["--database", database] if database else [])
    subprocess.run(
        [*base, "team", "add", "alpha", "--contest", str(contest), *where],
        check=True,
        capture_output=True,
        env=environment,
    )
    subprocess.run(
        [*base, "user", "add", "ann", "--team", "alpha", "--password-stdin", *where],
        input=PASSWORD + "\n",
        text=True,
        check=True,
        capture_output=True,
        env=environment,
    )
    port = _free_port()
    help_text = subprocess.run([*base, "serve", "--help"], capture_output=True, text=True, env=environment).stdout
    proxy = ["--trusted-proxy", "127.0.0.1"] if "--trusted-proxy" in help_text else []
    server = subprocess.Popen(
        [
            *base,
            "serve",
            "--contest",
            str(contest),
            *where,
            "--port",
            str(port),
            "--workers",
            "0",
            "--team",
            "alpha",
            *proxy,
        ],
        stdout=subprocess.PIPE,
        stderr=None if os.environ.get("FLOOD_DEBUG") else subprocess.DEVNULL,
        text=True,
        env=environment,
    )
    try:
        token = None
        assert server.stdout is not None
        for line in server.stdout:  # bounded: the server prints a few lines, then the team's token
            found = re.search(r"--token (\S+)", line)
            if found:
                token = found.group(1)
                break
        assert token is not None, "podium serve printed no token"
        for _ in range(200):  # bounded: 20 s
            try:
                socket.create_connection(("127.0.0.1", port), timeout=1).close()
                break
            except OSError:
                time.sleep(0.1)
        yield port, token
    finally:
        server.terminate()
        server.wait(timeout=30)


def cancels(port: int, token: str, count: int = 40) -> tuple[list[float], int]:
    """Milliseconds of ``count`` cancels of a submission the team does not have (404), 50 ms apart; how many failed (not 404)."""
    times, failed = [], 0
    for _ in range(count):
        started = time.perf_counter()
        failed += _post(port, "/api/submissions/999999/cancel", b"", {"Authorization": f"Bearer {token}"}) != 404
        times.append((time.perf_counter() - started) * 1000)
        time.sleep(0.05)
    return times, failed


def flood(port: int, clients: int, stop: threading.Event, served_count: list[int]) -> list[threading.Thread]:
    body = json.dumps({"user": "ann", "password": PASSWORD}).encode()

    def client(i: int) -> None:
        headers = {"Content-Type": "application/json", "X-Forwarded-For": f"198.51.100.{i + 1}"}
        while not stop.is_set():
            if _post(port, "/api/tokens", body, headers) == 201:
                served_count[i] += 1

    threads = [threading.Thread(target=client, args=(i,), daemon=True) for i in range(clients)]
    for thread in threads:
        thread.start()
    return threads


def summary(measured: tuple[list[float], int]) -> str:
    ordered, failed = sorted(measured[0]), measured[1]
    figures = f"median {statistics.median(ordered):7.1f} ms  p95 {ordered[int(len(ordered) * 0.95) - 1]:7.1f} ms  max {ordered[-1]:7.1f} ms"
    return figures + (f"  ({failed} of {len(ordered)} answered other than 404)" if failed else "")


def measure(name: str, database: str | None, clients: int, source: str | None) -> None:
    with (
        tempfile.TemporaryDirectory(prefix="podium-flood-") as folder,
        served(Path(folder), database, source) as (port, token),
    ):
        alone = cancels(port, token)
        stop, served_count = threading.Event(), [0] * clients
        threads = flood(port, clients, stop, served_count)
        time.sleep(1.0)
        started = time.perf_counter()
        loaded = cancels(port, token)
        seconds = time.perf_counter() - started
        stop.set()
        for thread in threads:
            thread.join(timeout=60)
        print(f"{name:<10} cancel alone:       {summary(alone)}")
        print(
            f"{name:<10} cancel, {clients} log-ins: {summary(loaded)}  ({sum(served_count) / seconds:.1f} log-ins/s served)"
        )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--clients", type=int, default=24)
    parser.add_argument("--podium-src", default=None, help="run the server from this source folder (PYTHONPATH)")
    options = parser.parse_args()
    machine_header(1, "one run")
    print(f"server code: {options.podium_src or 'this checkout'}")
    measure("SQLite", None, options.clients, options.podium_src)
    import postgres_server

    if postgres_server.problem() is not None:
        print(f"PostgreSQL skipped: {postgres_server.problem()}")
        return
    server = postgres_server.Server()
    server.start()
    try:
        measure("PostgreSQL", server.new_database(), options.clients, options.podium_src)
    finally:
        server.stop()


if __name__ == "__main__":
    main()
