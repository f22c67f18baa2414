"""The boards' stamps looked at off the request path (BoardCache.watch), on real uvicorn, SQLite and PostgreSQL.

``podium serve`` trusts a stamp a while (``fresh_s``): a thread of each web
process reads the stamps of the boards asked for every ``fresh_s`` and computes
a changed board, so no reader reads a stamp or computes a board once its board
is known, and a change shows once the first look that started after it has
finished. Every bound here is a counter or an event (the looks finished, the
statements and the thread that sent them), never a time a loaded machine could
break.
"""

from __future__ import annotations

import http.client
import os
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import event, update

from podium.contest import load
from podium.service import accounts, board_cache
from podium.service.app import Service
from podium.service.board_cache import FRESH_S, LOOK
from podium.service.client import packed
from podium.service.database import connect, migrate, writing
from podium.service.server import register_contest
from podium.service.tables import contests
from podium.service.worker import Worker
from served import open_contest
from service_helpers import Clock, LiveServer, at, set_up, write_contest

WAIT_S = 60.0  # the most a test waits for the looks it counts on (a loaded machine's)
BOARDS = ("/api/leaderboard", "/leaderboard", "/leaderboard/table")


def _get(live: LiveServer, path: str) -> tuple[int, bytes]:
    connection = http.client.HTTPConnection(live.url.removeprefix("http://"), timeout=30)
    try:
        connection.request("GET", path)
        response = connection.getresponse()
        return response.status, response.read()
    finally:
        connection.close()


class Stamps:
    """The stamp reads (``board_versions``) of an engine, by the thread that sent them: the look's or another's."""

    def __init__(self, service: Service) -> None:
        self.by_look = 0
        self.by_others: list[str] = []

        def seen(*args: Any) -> None:
            if "board_versions" in args[2]:
                name = threading.current_thread().name
                if name == LOOK:
                    self.by_look += 1
                else:
                    self.by_others.append(name)

        event.listen(service.engine, "before_cursor_execute", seen)


def _looked_after(service: Service) -> None:
    """Wait until a look that started after this call has finished (bounded: :data:`WAIT_S`)."""
    wanted = service.boards.looks + 2  # the look under way now may have started before
    deadline = time.monotonic() + WAIT_S
    while service.boards.looks < wanted:
        assert time.monotonic() < deadline, f"the look did not finish within {WAIT_S} s"
        time.sleep(0.01)


@contextmanager
def _readers(live: LiveServer, paths: tuple[str, ...] = BOARDS) -> Iterator[list[bytes]]:
    """Readers GETting ``paths`` one after the other until the block ends: every body they got, in order."""
    bodies: list[bytes] = []
    stop = threading.Event()

    def read() -> None:
        while not stop.is_set():
            for path in paths:
                status, body = _get(live, path)
                assert status == 200
                bodies.append(body)

    threads = [threading.Thread(target=read) for _ in range(4)]
    for thread in threads:
        thread.start()
    try:
        yield bodies
    finally:
        stop.set()
        for thread in threads:
            thread.join(WAIT_S)


def _serve(database_url: str, tmp_path: Path) -> tuple[Service, dict[str, str], Clock]:
    """``podium serve``'s board settings on a new database with one team, alpha: the service, tokens, clock."""
    clock = Clock(at("2026-03-10T12:00:00Z"))
    contest = write_contest(tmp_path / "contest")
    service, token = set_up(database_url, contest, tmp_path / "data", ("alpha",), clock)
    service.boards.fresh_s = FRESH_S
    service.pages.behind = True
    return service, token, clock


def test_a_scored_submission_is_drawn_by_the_look_and_no_reader_computes_it(database_url: str, tmp_path: Path) -> None:
    service, token, clock = _serve(database_url, tmp_path)
    archive = packed(tmp_path / "contest" / "demo" / "submission", tmp_path).read_bytes()
    stamps = Stamps(service)
    with LiveServer(service) as live:
        first = {path: _get(live, path)[1] for path in BOARDS}  # each board's first reader reads and computes it
        assert b"alpha" in first["/api/leaderboard"] and service.boards.computed == 1
        on_request, stamps.by_others = service.boards.computed - service.boards.computed_behind, []
        sent = live.call("POST", "/api/submissions", token["alpha"], body=archive, query={"filename": "s.tar.gz"})
        assert sent.status == 201
        with _readers(live) as bodies:
            _looked_after(service)  # no change yet: the first submission shows as 'no scored submission'
            assert Worker(service.engine, service.data, clock=clock).work_once()  # scored: the board changes
            _looked_after(service)  # the promise: the first look that started after the change has drawn it
            board = live.call("GET", "/api/leaderboard").body
            _looked_after(service)  # the readers meanwhile got the new board's page too (drawn by the page thread)
        assert board["teams"][0]["status"] == "scored" and board["teams"][0]["scores"]
        assert len(bodies) > 20 and all(b"alpha" in body for body in bodies)
        assert service.boards.computed - service.boards.computed_behind == on_request  # no reader computed a board
        assert service.boards.computed_behind == 2  # the submission's arrival, then its score
        assert stamps.by_others == [] and stamps.by_look > 0  # and no reader read a stamp: the look only
        page = _get(live, "/leaderboard")[1]
        assert page != first["/leaderboard"] and service.pages.drawn_behind >= 1


def test_a_board_no_reader_asks_for_is_no_longer_looked_at(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Past :data:`~podium.service.board_cache.IDLE_S` without a reader, the look forgets a board; its next reader
    reads the stamp on the request path (once), and the look takes it again from there."""
    monkeypatch.setattr(board_cache, "IDLE_S", 0.0)  # forgotten at the next look
    service, _, clock = _serve(f"sqlite:///{tmp_path / 'podium.sqlite3'}", tmp_path)
    stamps = Stamps(service)
    with LiveServer(service) as live:
        assert _get(live, "/api/leaderboard")[0] == 200
        _looked_after(service)
        looked, stamps.by_others = stamps.by_look, []
        _looked_after(service)
        assert stamps.by_look == looked  # nothing left to look at
        with writing(service.engine) as connection:
            accounts.add_team(connection, "beta", clock())
        time.sleep(FRESH_S)  # past the bound of the last read
        assert b"beta" in _get(live, "/api/leaderboard")[1]  # read again by the reader itself
        assert stamps.by_others and set(stamps.by_others) != {LOOK}


def test_a_withdrawn_contest_is_no_longer_answered_from_memory(tmp_path: Path) -> None:
    """The look reads the contest served again as a request would: once it is withdrawn, the router answers 404."""
    service, _, _ = _serve(f"sqlite:///{tmp_path / 'podium.sqlite3'}", tmp_path)
    stamps = Stamps(service)
    with LiveServer(service) as live:
        paths = ("/api/contests/test-glas/leaderboard", "/c/test-glas/leaderboard", "/c/test-glas/leaderboard/table")
        assert all(_get(live, path)[0] == 200 for path in paths)
        _looked_after(service)
        assert all(_get(live, path)[0] == 200 for path in paths)  # from memory, the look reading them
        assert stamps.by_look and len(stamps.by_others) <= 2 * len(paths)  # the first reads' only
        with writing(service.engine) as connection:
            connection.execute(update(contests).values(withdrawn=True))
        _looked_after(service)
        assert all(_get(live, path)[0] == 404 for path in paths)


def test_a_board_computed_does_not_hold_another_contests_first_reader(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """While one contest's board is computed (held at a gate: the start-up's board of a contest of 2,000 teams took
    2 s), another contest's first reader computes its own board rather than queue behind it."""
    written = open_contest(write_contest(tmp_path / "glas"))
    url = f"sqlite:///{tmp_path / 'podium.sqlite3'}"
    engine = connect(url)
    migrate(engine)
    for id_ in ("one", "two"):
        path = tmp_path / f"{id_}.toml"
        path.write_text(written.read_text().replace('id = "test-glas"', f'id = "{id_}"'))
        register_contest(engine, load(path), alone=False)
    service = Service(engine, tmp_path / "data", Clock(at("2026-03-10T12:00:00Z")), board_fresh_s=FRESH_S)
    held, release = threading.Event(), threading.Event()
    computed = board_cache.standings

    def gated(connection: Any, contest: Any, now: Any) -> Any:
        if contest.id == "one":
            held.set()
            assert release.wait(WAIT_S)
        return computed(connection, contest, now)

    monkeypatch.setattr(board_cache, "standings", gated)
    with LiveServer(service) as live:
        first = threading.Thread(target=lambda: _get(live, "/api/contests/one/leaderboard"))
        first.start()
        try:
            assert held.wait(WAIT_S)
            answered: list[tuple[int, bytes]] = []
            other = threading.Thread(target=lambda: answered.append(_get(live, "/api/contests/two/leaderboard")))
            other.start()
            other.join(WAIT_S)  # on the old code: held until the gate opens, never within the bound
            assert answered and answered[0][0] == 200 and b'"contest":"two"' in answered[0][1]
            assert not release.is_set() and first.is_alive()  # while the first is still held
        finally:
            release.set()
            first.join(WAIT_S)


def _postgres_processes(server: Any) -> list[int]:
    """The private server's postmaster and every process it started (its backends)."""
    postmaster = int((server.folder / "data" / "postmaster.pid").read_text().split()[0])
    children = []
    for status in Path("/proc").glob("[0-9]*/stat"):
        try:
            if int(status.read_text().rsplit(")", 1)[1].split()[1]) == postmaster:
                children.append(int(status.parent.name))
        except (OSError, IndexError, ValueError):
            continue  # gone meanwhile
    return [postmaster, *children]


def test_a_database_away_is_said_once_and_a_hung_one_holds_no_shutdown(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A PostgreSQL server stopped while the look reads it every FRESH_S / 2: the look said so once and its return
    once (it logged a traceback at every look, four a second), and draws the board again once it is back; a server
    that no longer answers (its processes stopped: psycopg waits without end) holds podium serve's shutdown at most
    STOP_S (it held it until the server answered again)."""
    import logging
    import signal

    import postgres_server as pg
    from conftest import require

    require("postgresql", pg.problem())
    server = pg.Server()
    server.start()
    stopped: list[int] = []
    said: list[logging.LogRecord] = []
    handler = logging.Handler()
    handler.emit = said.append  # type: ignore[method-assign]
    logging.getLogger("podium.service").addHandler(handler)
    try:
        service, _, clock = _serve(server.new_database(), tmp_path)
        looks: list[float] = []
        real = service.boards.look

        def counted(now: Any) -> None:
            looks.append(time.monotonic())
            real(now)

        monkeypatch.setattr(service.boards, "look", counted)
        live = LiveServer(service).__enter__()
        assert _get(live, "/api/leaderboard")[0] == 200
        _looked_after(service)
        server.halt()
        tried, deadline = len(looks), time.monotonic() + WAIT_S
        while len(looks) < tried + 6:  # six looks at a database away
            assert time.monotonic() < deadline
            time.sleep(0.05)
        server.resume()
        with writing(service.engine) as connection:
            accounts.add_team(connection, "beta", clock())
        _looked_after(service)
        assert b"beta" in _get(live, "/api/leaderboard")[1]
        by_look = [(r.levelname, r.getMessage(), r.exc_info is not None) for r in said if r.threadName == LOOK]
        assert by_look == [
            ("ERROR", "the boards' stamps could not be read (said once, until they are again)", True),
            ("WARNING", "the boards' stamps are read again", False),
        ], by_look
        stopped = _postgres_processes(server)
        for pid in stopped:
            os.kill(pid, signal.SIGSTOP)
        tried, deadline = len(looks), time.monotonic() + WAIT_S
        while len(looks) <= tried:  # a look under way, waiting for the server
            assert time.monotonic() < deadline
            time.sleep(0.05)
        started = time.monotonic()
        live.__exit__()
        assert not live.thread.is_alive(), "podium serve's shutdown waited for the look"
        assert time.monotonic() - started < board_cache.STOP_S + 20
    finally:
        for pid in stopped:
            os.kill(pid, signal.SIGCONT)
        logging.getLogger("podium.service").removeHandler(handler)
        server.stop()


@pytest.mark.parametrize("fresh_s", [0.0, FRESH_S])
def test_a_contest_reloaded_between_its_read_and_its_stamps_is_drawn_as_reloaded(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, fresh_s: float
) -> None:
    """A request reads the contest, then the board's stamp: a reload committed in between (it bumps the stamp) had
    the board drawn from the contest as it was, kept under the new stamp, and answered until the next change."""
    clock = Clock(at("2026-03-10T12:00:00Z"))
    path = write_contest(tmp_path / "contest")
    service, _ = set_up(f"sqlite:///{tmp_path / 'podium.sqlite3'}", path, tmp_path / "data", ("alpha",), clock)
    service.boards.fresh_s = fresh_s
    stamp, reloaded = board_cache.board_stamp, []

    def reload_first(connection: Any, contest: str) -> tuple[int, bool]:
        if not reloaded and threading.current_thread().name != LOOK:  # the request's read: the reload just before
            reloaded.append(path.read_text())
            path.write_text(reloaded[0].replace('title = "Test contest"', 'title = "Renamed"'))
            register_contest(service.engine, load(path))
        return stamp(connection, contest)

    monkeypatch.setattr(board_cache, "board_stamp", reload_first)
    with LiveServer(service) as live:
        assert live.call("GET", "/api/leaderboard").status == 200 and reloaded
        if fresh_s:
            _looked_after(service)
        assert live.call("GET", "/api/leaderboard").body["title"] == "Renamed"
