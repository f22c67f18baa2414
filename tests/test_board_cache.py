"""The leaderboard kept per web process (podium.service.board_cache): never stale, hit when unchanged, the same for every caller.

Two web apps on one database stand for two web processes (each its own
engine and cache), served by real uvicorn on SQLite and on a real PostgreSQL
server; every change is made as podium makes it (an upload, a worker's
result, a selection, ``podium reveal``'s setting, a rescore) or, for a team
renamed or removed (no command does it yet), in SQL.
"""

from __future__ import annotations

import gzip
import http.client
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import delete, event, update

from podium.contest import load
from podium.service import accounts, board_cache, state
from podium.service.app import Service
from podium.service.board_cache import KEPT
from podium.service.client import packed
from podium.service.conditional import accepts_gzip, gzipped
from podium.service.database import connect, reading, writing
from podium.service.leaderboard import leaderboard
from podium.service.rescore import rescore
from podium.service.server import register_contest
from podium.service.tables import results, submissions, teams, tokens
from podium.service.worker import Worker
from service_helpers import Clock, LiveServer, at, set_up, worse_copy, write_contest


def rows(live: LiveServer, token: str | None = None) -> dict[str, Any]:
    board = live.call("GET", "/api/leaderboard", token).body
    return {t["team"]: (t["status"], t["scores"]) for t in board["teams"]} | {"split": board["split"]}


def test_a_change_shows_at_once_in_every_web_process(database_url: str, tmp_path: Path) -> None:
    contest = write_contest(tmp_path / "contest", ranking='final = "selected"\nmax_selected = 1', quota="per_day = 5")
    clock = Clock(at("2026-03-10T12:00:00Z"))
    first, token = set_up(database_url, contest, tmp_path / "data", ("alpha", "beta"), clock)
    second = Service(
        connect(database_url), tmp_path / "data", clock
    )  # another web process: its own engine, its own cache
    worker = Worker(first.engine, first.data, clock=clock)
    demo = contest.parent / "demo"
    good = packed(demo / "submission", tmp_path).read_bytes()
    worse = packed(worse_copy(demo / "submission", tmp_path / "worse"), tmp_path).read_bytes()
    with LiveServer(first) as one, LiveServer(second) as two:
        both = (one, two)
        assert all(rows(live) == {"alpha": ("none", {}), "beta": ("none", {}), "split": "public"} for live in both)
        sent = one.call("POST", "/api/submissions", token["alpha"], body=worse, query={"filename": "w.tar.gz"}).body
        assert all(rows(live)["alpha"] == ("no scored submission", {}) for live in both)  # a team's first submission
        assert worker.work_once()
        scored = rows(one)["alpha"]
        assert scored[0] == "scored" and scored[1] and rows(two)["alpha"] == scored  # the result, read at once by both

        one.call("POST", "/api/submissions", token["alpha"], body=good, query={"filename": "g.tar.gz"})
        assert worker.work_once()
        better = rows(two)["alpha"]
        assert better[1] != scored[1] and rows(one)["alpha"] == better  # the best by public score
        # a selection: after the reveal the board shows the selected (worse) submission's private scores
        assert (
            two.call(
                "PUT", f"/api/submissions/{sent['id']}/selected", token["alpha"], query={"selected": "true"}
            ).status
            == 200
        )
        with writing(first.engine) as connection:
            state.put(connection, state.REVEALED, clock().isoformat(), state.only_contest(connection))  # podium reveal
        revealed = rows(one)
        assert revealed["split"] == "private" and revealed == rows(two)
        with writing(first.engine) as connection:
            private = (
                connection.execute(results.select().where(results.c.submission_id == sent["id"])).one().private_scores
            )
        assert revealed["alpha"] == ("scored", private)

        with writing(first.engine) as connection:  # a team renamed, then removed (in SQL: no command does it yet)
            connection.execute(update(teams).where(teams.c.name == "beta").values(name="gamma"))
        assert all(set(rows(live)) == {"alpha", "gamma", "split"} for live in both)
        with writing(first.engine) as connection:
            connection.execute(delete(tokens).where(tokens.c.team_id == accounts.team_id(connection, "gamma")))
            connection.execute(delete(teams).where(teams.c.name == "gamma"))
        assert all(set(rows(live)) == {"alpha", "split"} for live in both)

        rescore(first.engine)  # a new round: each submission counts with its newest result until it is scored again
        assert all(rows(live)["alpha"] == revealed["alpha"] for live in both)
        while worker.work_once():
            pass
        assert all(rows(live)["alpha"] == revealed["alpha"] for live in both)


def test_the_phase_end_reveals_the_kept_board(tmp_path: Path) -> None:
    """No write marks the last phase's end: the clock does, and the kept public board is not served past it."""
    contest = write_contest(tmp_path / "contest")
    clock = Clock(at("2026-05-31T23:59:59Z"))
    service, _ = set_up(f"sqlite:///{tmp_path / 'podium.sqlite3'}", contest, tmp_path / "data", ("alpha",), clock)
    service.boards.current(service.contests.get(), clock())
    with LiveServer(service) as live:
        assert live.call("GET", "/api/leaderboard").body["split"] == "public"
        clock.now = at("2026-06-01T00:00:00Z")
        assert live.call("GET", "/api/leaderboard").body["split"] == "private"
        assert "Final ranking on the private split." in live.call("GET", "/leaderboard").body


def test_the_kept_board_is_served_until_it_changes(database_url: str, tmp_path: Path) -> None:
    contest = write_contest(tmp_path / "contest")
    clock = Clock(at("2026-03-10T12:00:00Z"))
    service, _ = set_up(database_url, contest, tmp_path / "data", ("alpha", "beta"), clock)
    statements: list[str] = []
    event.listen(service.engine, "before_cursor_execute", lambda *args: statements.append(args[2]))
    with LiveServer(service) as live:
        assert live.call("GET", "/api/leaderboard").status == 200 and live.call("GET", "/leaderboard").status == 200
        computed, before = service.boards.computed, len(statements)
        for _ in range(10):
            assert live.call("GET", "/api/leaderboard").status == 200
            assert live.call("GET", "/leaderboard").status == 200
        assert service.boards.computed == computed == 1
        read = [s for s in statements[before:] if s != "BEGIN"]
        assert len(read) <= 2 * 10 + 3 * 10, read[
            :6
        ]  # the contest's round and file, then the stamp and the reveal (and the page's contest)
        assert not any("FROM results" in s or "FROM teams" in s for s in statements[before:])
        with writing(service.engine) as connection:
            connection.execute(
                update(submissions).where(submissions.c.id == -1).values(selected=True)
            )  # a statement on the column, no row
            accounts.add_team(connection, "gamma", clock())
        assert "gamma" in rows(live) and service.boards.computed == 2


def test_every_caller_gets_the_same_public_board_before_the_reveal(tmp_path: Path) -> None:
    """The organizer's request fills the cache first; a team then gets the public split's scores, never the private ones it holds."""
    contest = write_contest(tmp_path / "contest")
    clock = Clock(at("2026-03-10T12:00:00Z"))
    service, token = set_up(
        f"sqlite:///{tmp_path / 'podium.sqlite3'}", contest, tmp_path / "data", ("alpha", "beta"), clock
    )
    with writing(service.engine) as connection:
        organizer = accounts.new_token(connection, None, True, "organizer", clock())
    good = packed(contest.parent / "demo" / "submission", tmp_path).read_bytes()
    with LiveServer(service) as live:
        live.call("POST", "/api/submissions", token["alpha"], body=good, query={"filename": "g.tar.gz"})
        assert Worker(service.engine, service.data, clock=clock).work_once()
        boards = [
            live.call("GET", "/api/leaderboard", who).body for who in (organizer, token["alpha"], token["beta"], None)
        ]
        pages = [live.call("GET", "/leaderboard/table").body for _ in range(2)]
    assert all(b == boards[0] for b in boards) and pages[0] == pages[1]
    with writing(service.engine) as connection:
        stored = connection.execute(results.select()).one()
    assert stored.public_scores != stored.private_scores
    assert boards[0]["split"] == "public" and boards[0]["teams"][0]["scores"] == stored.public_scores
    with reading(service.engine) as connection:
        assert boards[0] == leaderboard(
            connection, service.contests.get(), clock()
        )  # what the board computed afresh gives


def test_kept_boards_are_bounded(tmp_path: Path) -> None:
    contest = write_contest(tmp_path / "contest")
    clock = Clock(at("2026-03-10T12:00:00Z"))
    service, _ = set_up(f"sqlite:///{tmp_path / 'podium.sqlite3'}", contest, tmp_path / "data", (), clock)
    for i in range(20):
        with writing(service.engine) as connection:
            accounts.add_team(connection, f"team{i}", clock())
        assert len(service.boards.current(service.contests.get(), clock()).board["teams"]) == i + 1
    assert len(service.boards) == KEPT and service.boards.computed == 20


def _get(live: LiveServer, path: str, headers: dict[str, str] | None = None) -> tuple[int, dict[str, str], bytes]:
    """A GET with ``headers``: the status, the answer's headers (lower-case names) and its body."""
    connection = http.client.HTTPConnection(live.url.removeprefix("http://"), timeout=30)
    try:
        connection.request("GET", path, headers=headers or {})
        response = connection.getresponse()
        return response.status, {k.lower(): v for k, v in response.getheaders()}, response.read()
    finally:
        connection.close()


def test_a_fresh_stamp_is_trusted_for_its_bound_then_read_again(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``podium serve``'s bound where the look does not read the board (idle, ``IDLE_S``): within it the board is
    answered from memory (no SQL statement); past it a change shows (``tests/test_board_look.py``: the look's)."""
    monkeypatch.setattr(board_cache, "IDLE_S", 0.0)  # the look forgets every board: the readers read the stamps
    contest = write_contest(tmp_path / "contest")
    clock = Clock(at("2026-03-10T12:00:00Z"))
    service, _ = set_up(f"sqlite:///{tmp_path / 'podium.sqlite3'}", contest, tmp_path / "data", ("alpha",), clock)
    service.boards.fresh_s = 0.5
    statements: list[str] = []
    event.listen(service.engine, "before_cursor_execute", lambda *args: statements.append(args[2]))
    with LiveServer(service) as live:
        for path in ("/api/leaderboard", "/leaderboard", "/leaderboard/table?sort=team"):
            assert _get(live, path)[0] == 200  # read: the stamp, and the board computed
        started = time.monotonic()
        with writing(service.engine) as connection:
            accounts.add_team(connection, "beta", clock())
        before = len(statements)  # the team's insert (its transaction, checks, INSERT)
        answers = [_get(live, path) for _ in range(5) for path in ("/api/leaderboard", "/leaderboard")]
        if time.monotonic() - started < 0.5:  # a loaded machine may take longer: then only the change is checked
            # no read: the ten answers from memory
            assert len(statements) == before, statements[before:]
            assert all(b"beta" not in body for _, _, body in answers)
        time.sleep(0.5)
        assert "beta" in rows(live) and b"beta" in _get(live, "/leaderboard")[2]
        clock.now = at("2026-06-01T00:00:00Z")  # the last phase ends: the reveal is never late
        assert rows(live)["split"] == "private"


def test_an_unchanged_board_is_answered_304(tmp_path: Path) -> None:
    """The API's board and an anonymous visitor's board pages carry an ETag; asked again with it, 304 until the board changes.

    A session's page names its team: it is drawn for it and carries none.
    """
    contest = write_contest(tmp_path / "contest")
    clock = Clock(at("2026-03-10T12:00:00Z"))
    service, _ = set_up(f"sqlite:///{tmp_path / 'podium.sqlite3'}", contest, tmp_path / "data", ("alpha",), clock)
    with writing(service.engine) as connection:
        session = accounts.new_token(connection, None, True, "organizer", clock(), session=True)
    with LiveServer(service) as live:
        for path in ("/api/leaderboard", "/leaderboard", "/leaderboard/table", "/leaderboard?sort=team"):
            status, headers, body = _get(live, path)
            assert status == 200 and headers["cache-control"] == "no-cache" and headers["etag"].startswith('"')
            again = _get(live, path, {"If-None-Match": f'"other", W/{headers["etag"]}'})
            assert again[0] == 304 and again[2] == b"" and again[1]["etag"] == headers["etag"]
            assert _get(live, path, {"If-None-Match": '"other"'})[2] == body
        etag = _get(live, "/api/leaderboard")[1]["etag"]
        with writing(service.engine) as connection:
            accounts.add_team(connection, "beta", clock())
        changed = _get(live, "/api/leaderboard", {"If-None-Match": etag})
        assert changed[0] == 200 and b"beta" in changed[2] and changed[1]["etag"] != etag
        # an order the board does not know: drawn, escaped, not kept
        odd = _get(live, "/leaderboard?sort=%3Cscript%3Ex")
        assert odd[0] == 200 and "etag" not in odd[1] and b"<script>x" not in odd[2]
        mine = _get(live, "/leaderboard", {"Cookie": f"podium_session={session}"})
        assert mine[0] == 200 and "etag" not in mine[1] and mine[1]["cache-control"] == "no-store"
        assert b">Dashboard<" in mine[2] and b">Dashboard<" not in _get(live, "/leaderboard")[2]


def test_past_the_bound_one_request_reads_the_stamp_while_the_others_get_the_board_read_last(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """50 readers past the bound send one thread to read the stamp, not one each: the others are answered from memory
    (a board the look does not read: ``IDLE_S``).

    The stamp's read is slowed (0.3 s) so every reader arrives while it is under way; each thread's read took a
    connection and the GIL from the event loop, and was the idle board's 99th percentile at 50 readers.
    """
    monkeypatch.setattr(board_cache, "IDLE_S", 0.0)  # the look forgets every board: the readers read the stamps
    contest = write_contest(tmp_path / "contest")
    clock = Clock(at("2026-03-10T12:00:00Z"))
    service, _ = set_up(f"sqlite:///{tmp_path / 'podium.sqlite3'}", contest, tmp_path / "data", ("alpha",), clock)
    service.boards.fresh_s = 0.5
    stamps: list[str] = []

    def slow_stamp(*args: Any) -> None:
        if "board_version" in args[2]:
            stamps.append(args[2])
            time.sleep(0.3)

    with LiveServer(service) as live:
        assert _get(live, "/api/leaderboard")[0] == 200  # the board read and kept
        time.sleep(0.5)  # past the bound
        event.listen(service.engine, "before_cursor_execute", slow_stamp)
        started = time.monotonic()
        with ThreadPoolExecutor(50) as pool:
            answers = list(pool.map(lambda _: _get(live, "/api/leaderboard"), range(50)))
        bounds = int((time.monotonic() - started) / 0.5)  # on a loaded machine the readers may outlast a bound or more
        assert all(status == 200 and b"alpha" in body for status, _, body in answers)
        assert len(stamps) <= 1 + bounds, f"{len(stamps)} reads of the stamp by 50 readers in {bounds + 1} bounds"
        time.sleep(0.5)  # past the bound again: read again, and a change shows
        with writing(service.engine) as connection:
            accounts.add_team(connection, "beta", clock())
        assert "beta" in rows(live)


def test_a_change_in_one_contest_keeps_the_other_contests_boards(database_url: str, tmp_path: Path) -> None:
    """The stamp is per contest (migration 0010): a team added to one contest computes its board again, not the other's."""
    path = write_contest(tmp_path / "contest")
    other_path = tmp_path / "other.toml"
    other_path.write_text(path.read_text().replace('id = "test-glas"', 'id = "other"'))
    clock = Clock(at("2026-03-10T12:00:00Z"))
    service, _ = set_up(database_url, path, tmp_path / "data", ("alpha",), clock)
    register_contest(service.engine, load(other_path), alone=False)
    with writing(service.engine) as connection:
        accounts.add_team(connection, "omega", clock(), "other")
    one, other = service.contests.get("test-glas"), service.contests.get("other")
    assert [t["team"] for t in service.boards.current(one, clock()).board["teams"]] == ["alpha"]
    assert [t["team"] for t in service.boards.current(other, clock()).board["teams"]] == ["omega"]
    assert service.boards.computed == 2
    with writing(service.engine) as connection:
        accounts.add_team(connection, "beta", clock(), "test-glas")
    assert [t["team"] for t in service.boards.current(other, clock()).board["teams"]] == ["omega"]
    assert service.boards.computed == 2  # the other contest's board kept
    assert {t["team"] for t in service.boards.current(one, clock()).board["teams"]} == {"alpha", "beta"}
    assert service.boards.computed == 3


def test_a_client_taking_gzip_gets_the_kept_board_compressed_once(tmp_path: Path) -> None:
    """The API's board and the anonymous pages, gzip'd for a client that takes it: the same bytes, compressed once per
    board, under an ETag of their own (a 304 for it); a client refusing gzip (``q=0``) or not naming it gets them plain."""
    contest = write_contest(tmp_path / "contest")
    clock = Clock(at("2026-03-10T12:00:00Z"))
    names = tuple(f"team{i:02d}" for i in range(30))  # a board over GZIP_MIN
    service, _ = set_up(f"sqlite:///{tmp_path / 'podium.sqlite3'}", contest, tmp_path / "data", names, clock)
    with LiveServer(service) as live:
        for path in ("/api/leaderboard", "/leaderboard", "/leaderboard/table"):
            status, plain, body = _get(live, path)
            assert status == 200 and "content-encoding" not in plain and "Accept-Encoding" in plain["vary"]
            misses = gzipped.cache_info().misses
            answers = [_get(live, path, {"Accept-Encoding": "br, gzip;q=0.5"}) for _ in range(3)]
            assert gzipped.cache_info().misses <= misses + 1  # compressed once, however many ask
            for status, headers, packed_body in answers:
                assert status == 200 and headers["content-encoding"] == "gzip"
                assert gzip.decompress(packed_body) == body and headers["etag"] == plain["etag"][:-1] + '-gzip"'
            again = _get(live, path, {"Accept-Encoding": "gzip", "If-None-Match": answers[0][1]["etag"]})
            assert again[0] == 304 and again[2] == b""
            for refusing in ("gzip;q=0, identity", "*, gzip;q=0"):  # * stands for the codings not named
                refused = _get(live, path, {"Accept-Encoding": refusing})
                assert "content-encoding" not in refused[1] and refused[2] == body, refusing
    assert accepts_gzip("*") and accepts_gzip("deflate, GZIP") and not accepts_gzip("gzip;q=0.0")
    assert not accepts_gzip(None) and not accepts_gzip("gzip;q=x") and not accepts_gzip("br")
    assert not accepts_gzip("*;q=1, gzip;q=0") and accepts_gzip("gzip;q=0.1, *;q=0") and accepts_gzip("br, *;q=0.5")
