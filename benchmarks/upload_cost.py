"""The web process's CPU per accepted upload, in one process without HTTP: the ASGI app driven directly.

A database served with the GlaS demo contest (six images, half public) and
20 teams, made by a short ``podium serve --workers 0``; then ``--uploads``
(300) uploads of the demo submission (a 16 KB tar.gz), the teams in turn,
each sent to the app as one ASGI request (no socket, no HTTP parsing), after
20 to warm up. Printed: CPU milliseconds per upload (``time.process_time``:
the event loop and the worker threads), and the SQL statements and
transactions per upload (SQLAlchemy's events). ``--podium-src DIR`` runs the
same from another checkout's ``src`` in a new process, interleaved with this
checkout's, ``--rounds`` times, each on a fresh copy of the database.

    .venv/bin/python benchmarks/upload_cost.py [--podium-src /work/main/src] [--rounds 2] [--uploads 300]
"""

from __future__ import annotations

import argparse
import asyncio
import collections
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from board_speed import Server
from service_throughput import CONTEST
from timing import machine_header

TEAMS = 20
WARM = 20


def prepared(folder: Path) -> Path:
    """A served database in ``folder/data`` with :data:`TEAMS` teams; ``folder/info.json`` holds their tokens and the archive."""
    from podium.challenges import get
    from podium.service.client import packed

    demo = get("glas").write_demo(folder / "demo")
    contest = folder / "contest.toml"
    contest.write_text(CONTEST.format(truth=demo.truth))
    archive = packed(demo.submission, folder)
    server = Server(folder, contest, None, None, TEAMS, ("--workers", "0"))
    server.stop()
    (folder / "info.json").write_text(json.dumps({"tokens": server.tokens, "archive": str(archive)}))
    return folder


def measure(folder: Path, uploads: int) -> str:
    """Upload ``uploads`` times through the app of this process's podium, on a copy of ``folder``'s database; one line."""
    from sqlalchemy import event

    from podium.service.app import create_app
    from podium.service.database import connect, database_url
    from podium.service.deps import Service

    info = json.loads((folder / "info.json").read_text())
    data = Path(tempfile.mkdtemp(prefix="podium-upload-cost-")) / "data"
    shutil.copytree(folder / "data", data, ignore=shutil.ignore_patterns("submissions", "incoming"))
    engine = connect(database_url(None, data))
    counts: collections.Counter[str] = collections.Counter()
    event.listen(engine, "begin", lambda _connection: counts.update(["transactions"]))
    event.listen(
        engine,
        "before_cursor_execute",
        lambda _c, _cursor, statement, *_: counts.update([] if statement.startswith("BEGIN") else ["statements"]),
    )
    app = create_app(Service(engine, data.resolve()))
    body = Path(info["archive"]).read_bytes()

    async def post(token: str) -> int:
        scope = {
            "type": "http",
            "asgi": {"version": "3.0"},
            "http_version": "1.1",
            "method": "POST",
            "scheme": "http",
            "path": "/api/submissions",
            "raw_path": b"/api/submissions",
            "query_string": b"filename=s.tar.gz",
            "root_path": "",
            "headers": [
                (b"host", b"127.0.0.1"),
                (b"authorization", f"Bearer {token}".encode()),
                (b"content-type", b"application/octet-stream"),
                (b"content-length", str(len(body)).encode()),
            ],
            "client": ("127.0.0.1", 5000),
            "server": ("127.0.0.1", 80),
            "state": {},
        }
        sent, status = False, 0

        async def receive() -> dict[str, Any]:
            nonlocal sent
            if not sent:
                sent = True
                return {"type": "http.request", "body": body, "more_body": False}
            await asyncio.Event().wait()  # the client never disconnects
            return {}

        async def send(message: dict[str, Any]) -> None:
            nonlocal status
            if message["type"] == "http.response.start":
                status = message["status"]

        await app(scope, receive, send)
        return status

    async def run() -> float:
        tokens = info["tokens"]
        for i in range(WARM):
            assert await post(tokens[i % TEAMS]) == 201
        counts.clear()
        started = time.process_time()
        for i in range(uploads):
            status = await post(tokens[i % TEAMS])
            assert status == 201, status
        return time.process_time() - started

    cpu = asyncio.run(run())
    shutil.rmtree(data.parent, ignore_errors=True)
    return (
        f"{1000 * cpu / uploads:8.2f} ms CPU {counts['statements'] / uploads:6.1f} statements "
        f"{counts['transactions'] / uploads:4.1f} transactions per upload  (load {os.getloadavg()[0]:.1f})"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--podium-src", default=None, help="also run from this source folder (PYTHONPATH), interleaved")
    parser.add_argument("--rounds", type=int, default=1)
    parser.add_argument("--uploads", type=int, default=300)
    # --measure FOLDER: measure the prepared folder in this process and print one line (the rounds' child processes)
    parser.add_argument("--measure", default=None, help=argparse.SUPPRESS)
    options = parser.parse_args()
    if options.measure:
        print(measure(Path(options.measure), options.uploads), flush=True)
        return
    machine_header(options.rounds, "interleaved")
    folder = prepared(Path(tempfile.mkdtemp(prefix="podium-upload-cost-")))
    sources = [("this checkout", None)] + ([(options.podium_src, options.podium_src)] if options.podium_src else [])
    for _ in range(options.rounds):
        for label, source in sources:
            environment = {**os.environ, **({"PYTHONPATH": source} if source else {})}
            command = [sys.executable, __file__, "--measure", str(folder), "--uploads", str(options.uploads)]
            line = subprocess.run(command, env=environment, capture_output=True, text=True, check=True).stdout.strip()
            print(f"{label[:40]:40} {line}", flush=True)
    shutil.rmtree(folder, ignore_errors=True)


if __name__ == "__main__":
    main()
