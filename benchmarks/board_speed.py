"""podium serve under readers and uploaders (issue 40, goal 6): uploads accepted per minute, the board's latency, closed keep-alive connections.

A real ``podium serve`` with 2 workers on the GlaS demo contest (six images,
half public), on SQLite and then on a private PostgreSQL server
(tests/postgres_server.py; skipped where none can be started):

1. uploads: ``--clients`` threads (20), one team each, post the demo
   submission (a 16 KB tar.gz) over and over for ``--seconds`` (20); the
   figures are the uploads accepted (201) per minute and the web processes' own
   CPU milliseconds per accepted upload (``/proc/PID/stat``: the serve
   process and its web processes, not its workers), and of the whole ``podium serve`` (its
   workers and check processes too, while the uploads last); each client sends from an address of its own
   (``X-Forwarded-For``, believed from ``--trusted-proxy 127.0.0.1``), so the
   server's cap on uploads at once per address does not refuse them;
2. once the queue is drained, one GET of the board (the first since the
   start: ``first``, not counted in the percentiles), then 50 readers, each on one keep-alive connection,
   GET ``/api/leaderboard`` for ``--read-seconds`` (10), then the HTML board
   (``/leaderboard``) as long: median and 99th percentile, and how many
   requests found their connection closed by the server (reconnected and
   counted, ``shut``), and the web processes' CPU per GET (``CPU``, ms: the writer's uploads included); meanwhile a writer
   uploads one submission a second, and the reads of each board start once its first upload changed the board: ``seen``
   is how many boards (distinct ETags) the readers got, ``writes`` the writer's uploads accepted. The readers are one
   asyncio client (``cli``: its CPU, in % of a core), so the machine's 2 cores are the server's rather than 50 client
   threads'. Then ``ms/chg``: the web processes' CPU milliseconds per change of the board (the writer's upload
   included) while both boards are asked for on new connections every 0.25 s, so that every web process is asked for
   every new board and page.

``--podium-src DIR`` runs the server from another checkout's ``src`` too
(e.g. main's), interleaved with this checkout's on each database and count of web processes, so the
machine's load weighs on both alike; each runs once per count of
``--web-processes`` (``1,2``: one web process, then two on the one port), this checkout per ``--loops``
(``uvloop,asyncio``: with uvloop and httptools, then with both hidden),
its upload checks in the web processes (``--check-processes 0``, the
default on 2 cores with 2 workers). One run of each; loopback only.

    .venv/bin/python benchmarks/board_speed.py [--podium-src /work/main/src] [--web-processes 1,2] [--seconds 20] [--read-seconds 10]
"""

from __future__ import annotations

import argparse
import asyncio
import http.client
import json
import os
import re
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import psutil
from service_throughput import CONTEST, free_port  # the same GlaS demo contest (its phase open until 2040)
from timing import machine_header

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))

READERS = 50
CLOSED = (http.client.RemoteDisconnected, ConnectionResetError, BrokenPipeError, http.client.BadStatusLine)


def hidden_fast_loop(folder: Path) -> Path:
    """``folder`` holding an ``uvloop`` and an ``httptools`` that cannot be imported: first on ``PYTHONPATH``, uvicorn
    falls back to asyncio's event loop and h11 (as where their wheels are absent); ``--podium-src``'s runs use it too."""
    for name in ("uvloop", "httptools"):
        (folder / f"{name}.py").write_text(f"raise ImportError('{name} hidden by benchmarks/board_speed.py')\n")
    return folder


def _own_cpu(pid: int) -> float:
    """User + system seconds of process ``pid`` itself (not its children)."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def _web_cpu(pid: int) -> float:
    """User + system seconds of ``podium serve`` (``pid``) and of its web processes (``--web-processes``), not its workers."""
    web = [p.pid for p in psutil.Process(pid).children() if "web_processes" in " ".join(p.cmdline())]
    return sum(_own_cpu(process) for process in (pid, *web))


def _tree_cpu(pid: int) -> float:
    """User + system seconds of process ``pid`` and its live descendants (its workers, its check processes)."""
    total = 0.0
    for process in [psutil.Process(pid), *psutil.Process(pid).children(recursive=True)]:
        try:
            times = process.cpu_times()
            total += times.user + times.system
        except psutil.NoSuchProcess:
            pass
    return total


class Server:
    """``podium serve --workers 2`` from ``source`` (``None``: this checkout) with ``clients`` teams; their tokens."""

    def __init__(
        self,
        folder: Path,
        contest: Path,
        database: str | None,
        source: str | None,
        clients: int,
        extra: tuple[str, ...],
    ) -> None:
        self.environment = {**os.environ, **({"PYTHONPATH": source} if source else {})}
        self.port = free_port()
        base = [sys.executable, "-m", "podium"]
        where = ["--data", str(folder / "data")] + (["--database", database] if database else [])
        help_text = subprocess.run(
            [*base, "serve", "--help"], capture_output=True, text=True, env=self.environment
        ).stdout
        proxy = (
            ["--trusted-proxy", "127.0.0.1"] if "--trusted-proxy" in help_text else []
        )  # each client its own address (X-Forwarded-For)
        teams = [arg for i in range(clients) for arg in ("--team", f"team{i:02d}")]
        self.process = subprocess.Popen(
            [
                *base,
                "serve",
                "--contest",
                str(contest),
                *where,
                "--port",
                str(self.port),
                "--workers",
                "2",
                "--sandbox",
                "none",
                *teams,
                *proxy,
                *extra,
            ],
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            text=True,
            env=self.environment,
        )
        assert self.process.stdout is not None
        self.tokens: list[str] = []
        for line in self.process.stdout:  # bounded: the banner, then a line per team
            found = re.search(r"--token (\S+)", line)
            if found:
                self.tokens.append(found.group(1))
                if len(self.tokens) == clients:
                    break
        threading.Thread(
            target=self.process.stdout.read, daemon=True
        ).start()  # whatever else it prints, never blocking it
        for _ in range(600):  # bounded: 60 s
            try:
                if self.get("/healthz")[0] == 200:
                    return
            except OSError:
                time.sleep(0.1)
        raise SystemExit("podium serve did not answer within 60 s")

    def get(self, path: str, token: str | None = None) -> tuple[int, bytes]:
        connection = http.client.HTTPConnection("127.0.0.1", self.port, timeout=120)
        try:
            connection.request("GET", path, headers={"Authorization": f"Bearer {token}"} if token else {})
            response = connection.getresponse()
            return response.status, response.read()
        finally:
            connection.close()

    def stop(self) -> None:
        self.process.terminate()
        self.process.wait(timeout=60)


def uploads(server: Server, archive: bytes, seconds: float) -> tuple[int, float, float, float]:
    """Accepted uploads, the wall seconds they took, the CPU seconds meanwhile of the web process and of all of podium serve."""
    stop = time.monotonic() + seconds
    accepted = [0] * len(server.tokens)

    def client(i: int) -> None:
        connection = http.client.HTTPConnection("127.0.0.1", server.port, timeout=120)
        headers = {
            "Authorization": f"Bearer {server.tokens[i]}",
            "Content-Type": "application/octet-stream",
            "X-Forwarded-For": f"198.51.100.{i + 1}",
        }
        while time.monotonic() < stop:
            try:
                connection.request("POST", "/api/submissions?filename=s.tar.gz", body=archive, headers=headers)
                response = connection.getresponse()
                response.read()
                accepted[i] += response.status == 201
            except CLOSED:
                connection.close()
        connection.close()

    cpu, tree, started = _web_cpu(server.process.pid), _tree_cpu(server.process.pid), time.perf_counter()
    with ThreadPoolExecutor(len(server.tokens)) as pool:
        list(pool.map(client, range(len(server.tokens))))
    return (
        sum(accepted),
        time.perf_counter() - started,
        _web_cpu(server.process.pid) - cpu,
        _tree_cpu(server.process.pid) - tree,
    )


def drained(server: Server) -> None:
    for _ in range(3000):  # bounded: 5 minutes
        items = [item for token in server.tokens for item in json.loads(server.get("/api/submissions", token)[1])]
        if all(i["status"] not in ("queued", "running") for i in items):
            return
        time.sleep(0.1)


def writer(server: Server, archive: bytes, stop: threading.Event) -> list[int]:
    """Until ``stop``: one upload a second by the first team, each changing the board once scored; the uploads accepted (one item)."""
    accepted = [0]

    def post() -> None:
        headers = {"Authorization": f"Bearer {server.tokens[0]}", "Content-Type": "application/octet-stream"}
        while True:
            connection = http.client.HTTPConnection("127.0.0.1", server.port, timeout=120)
            try:
                connection.request("POST", "/api/submissions?filename=s.tar.gz", body=archive, headers=headers)
                accepted[0] += connection.getresponse().status == 201
            finally:
                connection.close()
            if stop.wait(1.0):
                return

    threading.Thread(target=post, daemon=True).start()
    return accepted


def changed(server: Server, path: str, seconds: float = 60.0) -> None:
    """Wait (at most ``seconds``) until the board at ``path`` changes: the writer's first submission scored, so the reads
    start under change rather than before the writer's first upload lands."""
    first = _etag(server, path)
    stop = time.monotonic() + seconds
    while time.monotonic() < stop and _etag(server, path) == first:  # bounded
        time.sleep(0.05)


def _etag(server: Server, path: str) -> str:
    connection = http.client.HTTPConnection("127.0.0.1", server.port, timeout=120)
    try:
        connection.request("GET", path)
        response = connection.getresponse()
        response.read()
        return response.getheader("ETag") or ""
    finally:
        connection.close()


async def _get(reader: asyncio.StreamReader, writer: asyncio.StreamWriter, request: bytes) -> tuple[int, str]:
    """One GET on a keep-alive connection: its status and ``ETag`` (the body read by its ``Content-Length``)."""
    writer.write(request)
    head = await reader.readuntil(b"\r\n\r\n")
    lines = head.decode("latin-1").split("\r\n")
    fields = dict(line.split(":", 1) for line in lines[1:] if ":" in line)
    fields = {name.strip().lower(): value.strip() for name, value in fields.items()}
    await reader.readexactly(int(fields.get("content-length", "0")))
    if fields.get("connection", "").lower() == "close":
        raise ConnectionResetError("the server closed the connection")
    return int(lines[0].split()[1]), fields.get("etag", "")


def readers(server: Server, path: str, reads: int) -> tuple[list[float], int]:
    """Seconds of every GET of ``path`` by 50 keep-alive readers (``reads`` each), and how many found their connection closed."""
    times, closed, _seen, _cpu = read_board(server, path, reads=reads)
    return times, closed


def read_board(
    server: Server, path: str, reads: int | None = None, seconds: float = 0.0
) -> tuple[list[float], int, int, float]:
    """50 keep-alive readers GETting ``path`` ``reads`` times each, else for ``seconds``, in one asyncio client (50
    threads of http.client took a core of their own, competing with the server for the machine's 2): every GET's
    seconds, how many found their connection closed (reconnected and counted), how many boards they saw (distinct
    ETags), the client's CPU seconds."""
    request = f"GET {path} HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n".encode()
    closed = [0]
    seen: set[str] = set()

    async def reader(stop: float) -> list[float]:
        times: list[float] = []
        stream = await asyncio.open_connection("127.0.0.1", server.port)
        while len(times) < reads if reads is not None else time.monotonic() < stop:
            started = time.perf_counter()
            for _attempt in range(3):  # bounded: a closed connection is counted, then opened again
                try:
                    status, etag = await _get(*stream, request)
                    assert status == 200, status
                    seen.add(etag)
                    break
                except (ConnectionError, asyncio.IncompleteReadError):
                    closed[0] += 1
                    stream[1].close()
                    stream = await asyncio.open_connection("127.0.0.1", server.port)
            times.append(time.perf_counter() - started)
        stream[1].close()
        return times

    async def all_readers() -> list[list[float]]:
        stop = time.monotonic() + seconds
        return await asyncio.gather(*(reader(stop) for _ in range(READERS)))

    cpu = time.process_time()
    found = asyncio.run(all_readers())
    return sorted(t for times in found for t in times), closed[0], len(seen), time.process_time() - cpu


def run(
    name: str,
    folder: Path,
    contest: Path,
    archive: bytes,
    database: str | None,
    source: str | None,
    extra: tuple[str, ...],
    clients: int,
    seconds: float,
    read_seconds: float,
) -> str:
    server = Server(folder, contest, database, source, clients, extra)
    try:
        count, wall, cpu, tree = uploads(server, archive, seconds)
        drained(server)
        line = (
            f"{name:<44} {60 * count / wall:7.0f} {1000 * cpu / max(count, 1):7.1f} {1000 * tree / max(count, 1):7.1f}"
        )
        stop = threading.Event()
        changes = writer(server, archive, stop)
        try:
            for path in ("/api/leaderboard", "/leaderboard"):
                started = time.perf_counter()
                assert server.get(path)[0] == 200  # the first read since the start (the page drawn): not counted
                first = time.perf_counter() - started
                changed(server, path)  # the writer's first submission scored: the reads start under change
                cpu = _web_cpu(server.process.pid)
                times, closed, boards, client = read_board(server, path, seconds=read_seconds)
                per_read = (_web_cpu(server.process.pid) - cpu) / len(times)
                line += (
                    f"  {1000 * first:6.1f} {1000 * statistics.median(times):6.1f} {1000 * times[int(0.99 * (len(times) - 1))]:7.1f}"
                    f" {1000 * per_read:5.2f} {closed:4d} {boards:4d} {100 * client / read_seconds:4.0f}%"
                )
            line += f"  {1000 * change_cost(server, read_seconds):6.1f}"
        finally:
            stop.set()
        return line + f"  {changes[0]:4d}"
    finally:
        server.stop()


def change_cost(server: Server, seconds: float) -> float:
    """The web processes' CPU seconds per change of the board: for ``seconds``, every 0.25 s, both boards GET on 4 new
    connections (so every web process is asked for each new board and page), while the writer changes it."""
    pages: set[str] = set()
    stop = time.monotonic() + seconds
    cpu = _web_cpu(server.process.pid)
    while time.monotonic() < stop:  # bounded
        for _ in range(4):
            _etag(server, "/api/leaderboard")
            pages.add(_etag(server, "/leaderboard"))
        time.sleep(0.25)
    return (_web_cpu(server.process.pid) - cpu) / max(1, len(pages) - 1)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument(
        "--podium-src", default=None, help="also run the server from this source folder (PYTHONPATH), interleaved"
    )
    parser.add_argument("--clients", type=int, default=20)
    parser.add_argument("--seconds", type=float, default=20.0)
    parser.add_argument(
        "--read-seconds",
        type=float,
        default=10.0,
        help="how long the 50 readers GET each board, the writer changing it",
    )
    parser.add_argument("--sqlite-only", action="store_true")
    parser.add_argument(
        "--web-processes", default="1,2", help="this checkout's runs: one per count of web processes (comma separated)"
    )
    parser.add_argument(
        "--loops",
        default="uvloop,asyncio",
        help="this checkout's runs: with uvloop and httptools (uvloop), and with them hidden (asyncio: asyncio and h11)",
    )
    options = parser.parse_args()
    machine_header(1, "one run")
    import postgres_server
    from podium.challenges import get
    from podium.service.client import packed

    plain = hidden_fast_loop(Path(tempfile.mkdtemp(prefix="podium-plain-loop-")))
    sources = [
        run
        for n in options.web_processes.split(",")
        for run in (
            *(
                [(f"before, {n} web process{'es' * (n != '1')}", options.podium_src, ("--web-processes", n))]
                if options.podium_src
                else []
            ),
            *(
                (
                    f"this checkout, {n} web process{'es' * (n != '1')}{', ' + loop if loop != 'uvloop' else ''}",
                    None if loop == "uvloop" else str(plain),
                    ("--web-processes", n, "--check-processes", "0"),
                )
                for loop in options.loops.split(",")
            ),
        )
    ]
    print(
        f"{options.clients} upload clients for {options.seconds:g} s, 2 workers; then {READERS} keep-alive readers for"
        f" {options.read_seconds:g} s per board, one upload a second meanwhile (the reads start once it changed the board)"
    )
    board = f"{'first':>6} {'p50':>6} {'p99':>7} {'CPU':>5} {'shut':>4} {'seen':>4} {'cli':>5}"
    print(
        f"{'':44} {'uploads':>7} {'web CPU':>7} {'all CPU':>7}  {'/api/leaderboard ms':>41}  {'/leaderboard (HTML) ms':>41}  {'board':>5}"
    )
    print(f"{'':44} {'/min':>7} {'ms/up':>7} {'ms/up':>7}  {board}  {board}  {'ms/chg':>6}  {'writes':>5}")
    pg = None if options.sqlite_only or postgres_server.problem() is not None else postgres_server.Server()
    if pg is not None:
        pg.start()
    try:
        for database_name in ("SQLite", "PostgreSQL"):
            if database_name == "PostgreSQL" and pg is None:
                print(f"PostgreSQL skipped: {postgres_server.problem() or '--sqlite-only'}")
                continue
            for label, source, extra in sources:
                with tempfile.TemporaryDirectory(prefix="podium-board-") as name:
                    folder = Path(name)
                    demo = get("glas").write_demo(folder / "demo")
                    contest = folder / "contest.toml"
                    contest.write_text(CONTEST.format(truth=demo.truth))
                    archive = packed(demo.submission, folder).read_bytes()
                    database = pg.new_database() if database_name == "PostgreSQL" and pg is not None else None
                    print(
                        run(
                            f"{database_name}, {label}"[:44],
                            folder,
                            contest,
                            archive,
                            database,
                            source,
                            extra,
                            options.clients,
                            options.seconds,
                            options.read_seconds,
                        ),
                        flush=True,
                    )
    finally:
        if pg is not None:
            pg.stop()


if __name__ == "__main__":
    main()
