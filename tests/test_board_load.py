"""The board in the real deployment: ``podium serve --web-processes 2``, read by many keep-alive clients while it changes.

The reveal by the clock shows on both web processes at once (never a public board after the last phase's end, answered
from memory or not); alone on the machine (``latency``), 50 readers get the board and its page for a tenth of a
millisecond of CPU a GET, within generous bounds of time, on SQLite and PostgreSQL, while a team is added every second
(each bumping the board's stamp).
"""

from __future__ import annotations

import asyncio
import http.client
import json
import re
import threading
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path

import psutil
import pytest

from podium.service import accounts
from podium.service.database import connect, migrate, writing
from podium.service.server import register_contest
from served import Serve
from service_helpers import write_contest

END = re.compile(r"end = 2026-06-01T00:00:00Z")
FINAL = b"Final ranking on the private split"


def _contest(folder: Path, end: datetime) -> Path:
    """The GlaS test contest, its one phase ending at ``end``."""
    path = write_contest(folder)
    path.write_text(END.sub(f"end = {end.strftime('%Y-%m-%dT%H:%M:%SZ')}", path.read_text()))
    return path


def _database(url: str, contest: Path, teams: int) -> None:
    engine = connect(url)
    migrate(engine)
    from podium.contest import load

    register_contest(engine, load(contest))
    with writing(engine) as connection:
        for i in range(teams):
            accounts.add_team(connection, f"team{i:02d}", datetime.now(UTC))
    engine.dispose()


def test_the_reveal_by_the_clock_shows_on_both_web_processes_at_once(tmp_path: Path) -> None:
    """16 keep-alive readers (each held by one web process: both are read, but for a chance of 2^-15) poll the API's
    board and the page across the last phase's end: every answer to a request sent after it is the final board."""
    end = (datetime.now(UTC) + timedelta(seconds=30)).replace(microsecond=0)  # podium serve started by then
    contest = _contest(tmp_path / "contest", end)
    url = f"sqlite:///{tmp_path / 'podium.sqlite3'}"
    _database(url, contest, 3)
    answers: list[tuple[float, float, bool]] = []  # sent, received, final
    stop = threading.Event()

    def read(port: int) -> None:
        connection = http.client.HTTPConnection("127.0.0.1", port, timeout=60)
        while not stop.is_set():  # bounded by the test's end
            for path in ("/api/leaderboard", "/leaderboard"):
                sent = time.time()
                connection.request("GET", path)
                response = connection.getresponse()
                body = response.read()
                assert response.status == 200
                final = json.loads(body)["split"] == "private" if path.startswith("/api") else FINAL in body
                answers.append((sent, time.time(), final))
        connection.close()

    with Serve(contest, tmp_path / "data", url, "--web-processes", "2", workers=1) as served:
        readers = [threading.Thread(target=read, args=(served.port,), daemon=True) for _ in range(16)]
        for reader in readers:
            reader.start()
        while time.time() < end.timestamp() + 3:  # bounded: 33 s
            time.sleep(0.2)
        stop.set()
        for reader in readers:
            reader.join(timeout=60)
    closes = end.timestamp()
    before = [a for a in answers if a[1] < closes]
    after = [a for a in answers if a[0] >= closes]
    assert before and after, (len(before), len(after))
    assert not any(final for _, _, final in before)  # the public board until the end
    assert all(final for _, _, final in after), sum(not final for _, _, final in after)


async def _read(port: int, path: str, seconds: float, readers: int) -> tuple[list[float], int, set[str]]:
    """``readers`` keep-alive clients GETting ``path`` for ``seconds``: each GET's seconds, the connections the server
    closed, the ETags seen."""
    request = f"GET {path} HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n".encode()
    times: list[float] = []
    etags: set[str] = set()
    closed = 0

    async def reader(stop: float) -> None:
        nonlocal closed
        stream, sink = await asyncio.open_connection("127.0.0.1", port)
        while time.monotonic() < stop:
            started = time.perf_counter()
            sink.write(request)
            head = (await stream.readuntil(b"\r\n\r\n")).decode("latin-1").lower()
            fields = dict(line.split(":", 1) for line in head.split("\r\n")[1:] if ":" in line)
            await stream.readexactly(int(fields["content-length"]))
            times.append(time.perf_counter() - started)
            assert head.startswith("http/1.1 200")
            etags.add(fields["etag"].strip())
            closed += fields.get("connection", "").strip() == "close"
        sink.close()

    stop = time.monotonic() + seconds
    await asyncio.gather(*(reader(stop) for _ in range(readers)))
    return sorted(times), closed, etags


@pytest.mark.latency  # times requests: run alone (make test)
def test_the_board_under_50_readers_on_two_web_processes_while_it_changes(database_url: str, tmp_path: Path) -> None:
    contest = _contest(tmp_path / "contest", datetime(2040, 1, 1, tzinfo=UTC))
    _database(database_url, contest, 20)
    engine = connect(database_url)
    stop = threading.Event()

    def writer() -> None:
        added = 0
        while not stop.wait(1.0):  # a team added every second (as benchmarks/board_speed.py's writer): a new board
            with writing(engine) as connection:
                accounts.add_team(connection, f"late{added:03d}", datetime.now(UTC))
            added += 1

    with Serve(contest, tmp_path / "data", database_url, "--web-processes", "2", workers=1) as served:
        thread = threading.Thread(target=writer, daemon=True)
        thread.start()
        for path in ("/api/leaderboard", "/leaderboard"):  # not counted: both web processes drew their boards
            asyncio.run(_read(served.port, path, 1.0, 50))
        found = {}
        try:
            for path in ("/api/leaderboard", "/leaderboard"):
                cpu = _web_cpu(served)
                found[path] = (*asyncio.run(_read(served.port, path, 4.0, 50)), _web_cpu(served) - cpu)
        finally:
            stop.set()
            thread.join(timeout=30)
    engine.dispose()
    for path, (times, closed, etags, cpu) in found.items():
        p50, p99 = times[len(times) // 2], times[int(0.99 * (len(times) - 1))]
        figures = f"{path}: p50 {1000 * p50:.1f} ms, p99 {1000 * p99:.1f} ms, {1000 * cpu / len(times):.3f} ms CPU of {len(times)} GETs"
        # generous, for a shared machine (the goal, p99 < 100 ms, is benchmarks/board_speed.py's): before, 0.45 ms of
        # CPU a GET, p50 20-25 ms and p99 180-400 ms at load 10-12
        assert p50 < 0.05 and p99 < 0.5 and cpu / len(times) < 0.00025, figures
        assert closed == 0 and len(etags) >= 2, (path, closed, len(etags))  # the changes seen


def _web_cpu(served: Serve) -> float:
    """User and system seconds of ``podium serve``'s web processes."""
    assert served.process is not None
    web = [p for p in psutil.Process(served.process.pid).children() if "web_processes" in " ".join(p.cmdline())]
    assert len(web) == 2
    return sum(p.cpu_times().user + p.cpu_times().system for p in web)
