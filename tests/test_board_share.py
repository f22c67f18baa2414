"""The boards one web process computes, shared with the others (podium.service.board_share).

Two services on one database and one data folder stand for two web processes in-process; then a real ``podium serve
--web-processes 2`` serving two contests, read by keep-alive clients while a worker scores: every answer is of the
contest asked, public before the reveal, never older than the one the reader read before, and a change shows on
every process within the documented delay.
"""

from __future__ import annotations

import http.client
import json
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

from podium.contest import load
from podium.service import accounts
from podium.service.app import Service
from podium.service.board_cache import FRESH_S
from podium.service.board_share import FOLDER, KEPT_STAMPS, SharedDraws, shared_folder
from podium.service.database import connect, migrate, writing
from podium.service.server import register_contest
from served import Serve, open_contest
from service_helpers import Clock, LiveServer, at, demo_archive, set_up, write_contest


def _get(url: str, path: str) -> tuple[int, dict[str, str], bytes]:
    """``GET path`` on a new connection (so a server of several web processes answers from either)."""
    host, port = url.removeprefix("http://").split(":")
    connection = http.client.HTTPConnection(host, int(port), timeout=60)
    try:
        connection.request("GET", path)
        response = connection.getresponse()
        return response.status, {k.lower(): v for k, v in response.getheaders()}, response.read()
    finally:
        connection.close()


def test_a_board_and_page_made_by_one_process_are_read_by_the_other(tmp_path: Path) -> None:
    contest = write_contest(tmp_path / "contest")
    clock = Clock(at("2026-03-10T12:00:00Z"))
    url = f"sqlite:///{tmp_path / 'podium.sqlite3'}"
    first, _ = set_up(url, contest, tmp_path / "data", ("alpha",), clock)
    shared_folder(tmp_path / "data")
    one = Service(first.engine, first.data, clock, board_share=True)
    two = Service(connect(url), first.data, clock, board_share=True)  # another process: its own engine and memory
    with LiveServer(one) as served_one, LiveServer(two) as served_two:
        paths = ("/api/leaderboard", "/leaderboard", "/leaderboard/table")
        answers = [_get(served_one.url, path) for path in paths]
        assert one.boards.shared is not None and two.boards.shared is not None
        assert one.boards.shared.made == 1 + 2 and one.boards.shared.read == 0  # the board, two pages
        again = [_get(served_two.url, path) for path in paths]
        assert two.boards.shared.made == 0 and two.boards.shared.read == 3  # the same three, read
        assert [(a[0], a[1]["etag"], a[2]) for a in again] == [(a[0], a[1]["etag"], a[2]) for a in answers]
        with writing(one.engine) as connection:
            accounts.add_team(connection, "beta", clock())
        changed = _get(served_two.url, "/api/leaderboard")  # the second process first, this time
        assert b"beta" in changed[2] and two.boards.shared.made == 1
        assert _get(served_one.url, "/api/leaderboard")[2] == changed[2] and one.boards.shared.read == 1
    assert any((tmp_path / "data" / FOLDER).rglob("*-*"))


def test_two_asking_at_once_make_it_once_and_old_stamps_are_pruned(tmp_path: Path) -> None:
    shared = SharedDraws(shared_folder(tmp_path))
    calls: list[int] = []

    def make() -> bytes:
        calls.append(1)
        time.sleep(0.2)  # long enough for the others to arrive meanwhile
        return b"board"

    with ThreadPoolExecutor(8) as pool:  # each thread's lock is an open file of its own: as a process's
        found = list(pool.map(lambda _: SharedDraws(shared.folder).get("c", 1, ("board",), make), range(8)))
    assert found == [b"board"] * 8 and len(calls) == 1
    for stamp in range(2, 2 + KEPT_STAMPS + 1):
        shared.get("c", stamp, ("board",), lambda: b"newer")
    kept = sorted(int(p.name.split("-")[0]) for p in shared.folder.rglob("*") if p.is_file() and p.suffix != ".lock")
    assert kept == list(range(3, 2 + KEPT_STAMPS + 1))  # the newest KEPT_STAMPS stamps
    assert shared.get("other", 1, ("board",), lambda: b"other's") == b"other's"  # a contest's stamps are its own


def test_two_web_processes_answer_each_contest_its_own_board_never_older_never_private(tmp_path: Path) -> None:
    """A real ``podium serve --web-processes 2 --contests DIR`` and a worker: readers on new connections meanwhile."""
    folder = tmp_path / "contests"
    folder.mkdir()
    written = open_contest(write_contest(tmp_path / "glas"))
    for id_ in ("one", "two"):
        (folder / f"{id_}.toml").write_text(written.read_text().replace('id = "test-glas"', f'id = "{id_}"'))
    url = f"sqlite:///{tmp_path / 'podium.sqlite3'}"
    engine = connect(url)
    migrate(engine)
    tokens = {}
    for id_ in ("one", "two"):
        register_contest(engine, load(folder / f"{id_}.toml"), alone=False)
        with writing(engine) as connection:
            team = accounts.add_team(connection, f"team-{id_}", at("2026-03-10T12:00:00Z"), id_)
            tokens[id_] = accounts.new_token(connection, team, False, "test", at("2026-03-10T12:00:00Z"))
    engine.dispose()
    archive = demo_archive(written, tmp_path / "archive").read_bytes()
    seen: list[tuple[str, list[dict[str, Any]]]] = [("one", []), ("one", []), ("two", [])]
    stop = threading.Event()

    def read(id_: str, boards: list[dict[str, Any]]) -> None:
        """A reader on one keep-alive connection, as a browser polling the board (one process answers it)."""
        connection = http.client.HTTPConnection("127.0.0.1", served.port, timeout=60)
        while not stop.is_set():  # bounded by the test's end
            connection.request("GET", f"/api/contests/{id_}/leaderboard")
            response = connection.getresponse()
            assert response.status == 200
            boards.append(json.loads(response.read()))
        connection.close()

    data = tmp_path / "data"
    with Serve(folder, data, url, "--web-processes", "2", workers=1, option="--contests") as served:
        readers = [threading.Thread(target=read, args=reader, daemon=True) for reader in seen]
        for reader in readers:
            reader.start()
        answer = served.call(
            "POST", "/api/contests/one/submissions", tokens["one"], body=archive, query={"filename": "s.tar.gz"}
        )
        assert answer.status == 201, answer.body
        for _ in range(1200):  # bounded: 120 s for the worker to score it
            if served.call("GET", f"/api/contests/one/submissions/{answer.body['id']}", tokens["one"]).body[
                "status"
            ] not in ("queued", "running"):
                break
            time.sleep(0.1)
        scored = time.monotonic()
        time.sleep(FRESH_S + 0.5)  # the documented delay, and a margin for the page drawn by one process
        for _ in range(600):  # bounded: 60 s more for the boards drawn on a busy machine
            after = [json.loads(_get(served.url, "/api/contests/one/leaderboard")[2]) for _ in range(10)]
            pages = [_get(served.url, "/c/one/leaderboard")[2] for _ in range(10)]
            if all(b["teams"][0]["status"] == "scored" for b in after) and all(b"team-one" in p for p in pages):
                break
            time.sleep(0.1)
        stop.set()
        for reader in readers:
            reader.join(timeout=60)
        shared = sorted(p.name for p in (data / FOLDER).rglob("*") if p.is_file() and p.suffix != ".lock")
    assert time.monotonic() - scored < 60
    assert all(b["teams"][0]["status"] == "scored" for b in after), after  # on every process by now
    assert all(b"team-one" in page and b"team-two" not in page for page in pages)
    for id_, boards in seen:
        assert boards and all(b["contest"] == id_ and b["split"] == "public" for b in boards)
        assert {t["team"] for b in boards for t in b["teams"]} == {f"team-{id_}"}  # never the other contest's
        entries = [b["teams"][0]["entries"] for b in boards]
        assert entries == sorted(entries), entries  # never a board older than one the reader read before
    assert any(b["teams"][0]["entries"] for b in seen[0][1])  # the readers saw the change
    assert shared  # the boards the two processes share
