"""A changed board's page drawn off the request path (podium.service.board_pages), on real uvicorn, SQLite and PostgreSQL.

While the background thread draws the new page (held at a gate here), the
readers get the previous page at once, with its ETag; once it lands, the page
is the one a fresh web process draws of the same database. The reveal never
waits behind a public page, and a draw that fails is drawn again on the
request path.
"""

from __future__ import annotations

import http.client
import threading
import time
from pathlib import Path
from typing import Any

import pytest

from podium.service import accounts, board_cache, pages, state
from podium.service.app import Service
from podium.service.client import packed
from podium.service.database import connect, writing
from podium.service.worker import Worker
from service_helpers import Clock, LiveServer, at, set_up, worse_copy, write_contest

WAIT_S = 30.0  # the most a test waits for the thread's page to land


def _get(live: LiveServer, path: str, headers: dict[str, str] | None = None) -> tuple[int, str, bytes]:
    """A GET: the status, the ETag and the body."""
    connection = http.client.HTTPConnection(live.url.removeprefix("http://"), timeout=30)
    try:
        connection.request("GET", path, headers=headers or {})
        response = connection.getresponse()
        return response.status, response.getheader("etag") or "", response.read()
    finally:
        connection.close()


class Gate:
    """Holds the background thread's page draws until :meth:`open` (the request path's draws pass)."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch, fail: bool = False) -> None:
        self.opened = threading.Event()
        self.fail = fail
        self.held = 0
        values = pages.board_page_values

        def held(*args: Any) -> dict[str, Any]:
            if threading.current_thread().name.startswith("podium-board-pages"):
                self.held += 1
                assert self.opened.wait(WAIT_S)
                if self.fail:
                    raise RuntimeError("a draw that fails")
            return values(*args)

        monkeypatch.setattr(pages, "board_page_values", held)

    def open(self) -> None:
        self.opened.set()


def _on_sqlite(tmp_path: Path) -> tuple[Service, dict[str, str], Clock]:
    """A service on SQLite with one team, alpha, before the phase ends: the service, the team's token, the clock."""
    clock = Clock(at("2026-03-10T12:00:00Z"))
    contest = write_contest(tmp_path / "contest")
    service, token = set_up(f"sqlite:///{tmp_path / 'podium.sqlite3'}", contest, tmp_path / "data", ("alpha",), clock)
    return service, token, clock


def _scored(live: LiveServer, worker: Worker, token: str, archive: bytes) -> None:
    """``archive`` uploaded by ``token``'s team and scored: the board changes."""
    assert live.call("POST", "/api/submissions", token, body=archive, query={"filename": "s.tar.gz"}).status == 201
    assert worker.work_once()


def _landed(live: LiveServer, old: bytes) -> bytes:
    """The page once it is no longer ``old`` (bounded: :data:`WAIT_S`)."""
    deadline = time.monotonic() + WAIT_S
    while time.monotonic() < deadline:
        status, _, body = _get(live, "/leaderboard")
        assert status == 200
        if body != old:
            return body
        time.sleep(0.05)
    raise AssertionError(f"the new page did not land within {WAIT_S} s")


def test_the_previous_page_is_answered_while_the_new_one_is_drawn(
    database_url: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    contest = write_contest(tmp_path / "contest")
    clock = Clock(at("2026-03-10T12:00:00Z"))
    service, token = set_up(database_url, contest, tmp_path / "data", ("alpha", "beta"), clock)
    service.pages.behind = True
    worker = Worker(service.engine, service.data, clock=clock)
    demo = contest.parent / "demo"
    good = packed(demo / "submission", tmp_path).read_bytes()
    worse = packed(worse_copy(demo / "submission", tmp_path / "worse"), tmp_path).read_bytes()
    gate = Gate(monkeypatch)
    with LiveServer(service) as live:
        _scored(live, worker, token["alpha"], good)
        status, etag, first = _get(live, "/leaderboard")  # a slot's first page: drawn on the request path
        assert status == 200 and b"alpha" in first and service.pages.drawn_behind == 0
        _scored(live, worker, token["beta"], worse)
        for _ in range(3):  # the new page is held: the previous one, at once, with its ETag
            assert _get(live, "/leaderboard") == (200, etag, first)
        assert _get(live, "/leaderboard", {"If-None-Match": etag})[0] == 304
        assert gate.held == 1  # one draw for every reader
        gate.open()
        drawn = _landed(live, first)
        assert service.pages.drawn_behind == 1 and _get(live, "/leaderboard")[2] == drawn
    fresh = Service(connect(database_url), service.data, clock)  # another web process, drawing on the request path
    with LiveServer(fresh) as other:
        assert _get(other, "/leaderboard")[2] == drawn
    assert b"beta" in drawn


def test_the_reveal_is_never_answered_by_a_public_page(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    service, token, clock = _on_sqlite(tmp_path)
    service.pages.behind = True
    archive = packed(tmp_path / "contest" / "demo" / "submission", tmp_path).read_bytes()
    Gate(monkeypatch)  # never opened: a page held behind would never come
    with LiveServer(service) as live:
        _scored(live, Worker(service.engine, service.data, clock=clock), token["alpha"], archive)
        assert b"Final ranking on the private split." not in _get(live, "/leaderboard")[2]
        with writing(service.engine) as connection:
            state.put(connection, state.REVEALED, clock().isoformat(), state.only_contest(connection))  # podium reveal
        assert b"Final ranking on the private split." in _get(live, "/leaderboard")[2]
        clock.now = at("2026-06-01T00:00:00Z")  # the clock's reveal as well
        assert b"Final ranking on the private split." in _get(live, "/leaderboard?sort=team")[2]
    assert service.pages.drawn_behind == 0


def test_a_page_the_thread_fails_to_draw_is_drawn_on_the_request_path(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    service, _, clock = _on_sqlite(tmp_path)
    service.pages.behind = True
    gate = Gate(monkeypatch, fail=True)
    with LiveServer(service) as live:
        first = _get(live, "/leaderboard")[2]
        with writing(service.engine) as connection:
            accounts.add_team(connection, "beta", clock())
        assert _get(live, "/leaderboard")[2] == first  # the thread's draw is held, then fails
        gate.open()
        assert b"beta" in _landed(live, first)  # drawn on the request path
    assert gate.held == 1 and service.pages.drawn_behind == 0


def test_a_reader_gets_the_previous_board_while_another_computes_the_new_one(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``podium serve`` (a stamp trusted a while), a board the look does not read (idle, ``IDLE_S``): one request
    computes a changed board, the others do not wait for it (``tests/test_board_look.py``: the look computes it)."""
    monkeypatch.setattr(board_cache, "IDLE_S", 0.0)  # the look forgets every board: the readers read the stamps
    service, _, clock = _on_sqlite(tmp_path)
    service.boards.fresh_s = 0.01
    computing, release = threading.Event(), threading.Event()
    computed = board_cache.standings

    def held(*args: Any) -> Any:
        if not release.is_set():
            computing.set()
            assert release.wait(WAIT_S)
        return computed(*args)

    with LiveServer(service) as live:
        assert [t["team"] for t in live.call("GET", "/api/leaderboard").body["teams"]] == ["alpha"]
        monkeypatch.setattr(board_cache, "standings", held)
        with writing(service.engine) as connection:
            accounts.add_team(connection, "beta", clock())
        time.sleep(0.02)  # past the stamp's trust
        first: list[Any] = []
        reader = threading.Thread(target=lambda: first.append(live.call("GET", "/api/leaderboard").body))
        reader.start()
        assert computing.wait(WAIT_S)
        for path in ("/api/leaderboard", "/leaderboard"):  # while the new board is computed: the previous one
            status, _, body = _get(live, path)
            assert status == 200 and b"alpha" in body and b"beta" not in body
        release.set()
        reader.join(WAIT_S)
        assert [t["team"] for t in first[0]["teams"]] == ["alpha", "beta"]  # the request that computed it
        assert sorted(t["team"] for t in live.call("GET", "/api/leaderboard").body["teams"]) == ["alpha", "beta"]
    assert service.boards.computed == 2
