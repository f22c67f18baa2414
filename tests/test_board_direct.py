"""A fresh board's GETs answered before the router (podium.service.board_direct): the router's bytes and headers, or the router's.

One live server (real uvicorn) on the example of three tracks (ILSVRC's tasks), trusting a stamp it read for an hour:
each GET is asked twice, the first answered by the router (the board read), the second from memory before it.
"""

from __future__ import annotations

import http.client
import shutil
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from podium.challenges import get
from podium.service import accounts
from podium.service.app import Service
from podium.service.board_direct import BoardDirect
from podium.service.database import writing
from service_helpers import Clock, LiveServer, at, set_up, write_contest
from test_board_pages import Gate

TRACKS = Path(__file__).resolve().parents[1] / "examples" / "contests" / "ilsvrc2012-tasks" / "contest.toml"
OWN = {"date", "x-request-id"}  # the headers each answer has its own of


@pytest.fixture(scope="module")
def live(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LiveServer]:
    folder = tmp_path_factory.mktemp("direct")
    for challenge in ("ilsvrc2012-cls", "ilsvrc2012-loc", "ilsvrc2012-fine"):
        get(challenge).write_demo(folder / "demo-data" / challenge)
    contest = folder / "examples" / "contests" / "ilsvrc2012-tasks" / "contest.toml"
    contest.parent.mkdir(parents=True)
    shutil.copyfile(TRACKS, contest)
    clock = Clock(at("2026-03-02T10:00:00Z"))
    first, _ = set_up(f"sqlite:///{folder / 'podium.sqlite3'}", contest, folder / "data", ("alpha", "beta"), clock)
    service = Service(first.engine, first.data, clock, board_fresh_s=3600.0)
    with LiveServer(service) as served:
        yield served


def _direct(live: LiveServer) -> BoardDirect:
    """The app's :class:`BoardDirect` layer, found down its middleware stack."""
    layer = live.server.config.loaded_app
    for _ in range(50):  # bounded: the stack's depth
        if isinstance(layer, BoardDirect):
            return layer
        layer = getattr(layer, "app", None) or layer.middleware_stack
    raise AssertionError("no BoardDirect layer")


def _get(live: LiveServer, path: str, headers: dict[str, str]) -> tuple[int, dict[str, str], bytes]:
    connection = http.client.HTTPConnection("127.0.0.1", int(live.url.rsplit(":", 1)[1]), timeout=60)
    try:
        connection.request("GET", path, headers=headers)
        response = connection.getresponse()
        found = {k.lower(): v for k, v in response.getheaders() if k.lower() not in OWN}
        return response.status, found, response.read()
    finally:
        connection.close()


@pytest.mark.parametrize(
    "path",
    [
        "/api/leaderboard?track=cls",
        "/api/leaderboard?track=fine&phase=development",
        "/leaderboard",
        "/leaderboard?track=loc&sort=team",
        "/leaderboard/table?track=fine",
    ],
)
@pytest.mark.parametrize("headers", [{}, {"Accept-Encoding": "gzip"}])
def test_a_fresh_boards_get_is_answered_before_the_router_with_the_routers_bytes_and_headers(
    live: LiveServer, path: str, headers: dict[str, str]
) -> None:
    direct = _direct(live)
    routed = _get(live, path, headers)
    if path.startswith("/leaderboard"):  # the page drawn by the first GET: the second is the first from memory
        routed = _get(live, path, headers)
    before = direct.answered
    assert _get(live, path, headers) == routed and routed[0] == 200
    assert direct.answered == before + 1
    etag = routed[1]["etag"]
    status, found, body = _get(live, path, headers | {"If-None-Match": etag})
    assert (status, found["etag"], body) == (304, etag, b"")
    assert direct.answered == before + 2


@pytest.mark.parametrize(
    ("path", "headers"),
    [
        ("/leaderboard", {"Cookie": "podium_session=unknown"}),  # a session's page names its team
        ("/api/leaderboard?track=cls&track=loc", {}),  # a name twice: the router takes the last
        ("/api/leaderboard?track=cls&x=1", {}),
        ("/api/leaderboard?track=" + "c" * 65, {}),  # longer than the route takes: 422
        ("/leaderboard?sort=nothing", {}),  # an order the board does not know
    ],
)
def test_what_the_layer_is_not_sure_of_goes_to_the_router(live: LiveServer, path: str, headers: dict[str, str]) -> None:
    _get(live, "/leaderboard", {})
    _get(live, "/api/leaderboard?track=cls", {})
    direct = _direct(live)
    before = direct.answered
    status = _get(live, path, headers)[0]
    assert direct.answered == before and status in (200, 422)


def test_the_api_refuses_a_board_of_no_track_after_a_page_showed_the_first_tracks(live: LiveServer) -> None:
    """A page of no track shows the first track's board; the API asked for no track of a contest of tracks answers 422
    (kept alike by the contest, track and phase asked, it answered the page's board: 200 before)."""
    assert _get(live, "/leaderboard", {})[0] == 200
    status, _headers, body = _get(live, "/api/leaderboard", {})
    assert status == 422 and b"cls" in body, body


def test_while_a_changed_boards_page_is_drawn_the_previous_page_is_answered_before_the_router_too(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The router answers the previous page while the thread draws the new board's (podium.service.board_pages) and so
    does the layer, for the readers arriving meanwhile: the same bytes and headers, then the new page once it lands."""
    clock = Clock(at("2026-03-10T12:00:00Z"))
    first, _ = set_up(
        f"sqlite:///{tmp_path / 'podium.sqlite3'}",
        write_contest(tmp_path / "contest"),
        tmp_path / "data",
        ("alpha",),
        clock,
    )
    service = Service(first.engine, first.data, clock, board_fresh_s=1.0, board_pages_behind=True)
    gate = Gate(monkeypatch)
    with LiveServer(service) as live:
        page = _get(live, "/leaderboard", {})  # a slot's first page: drawn on the request path
        with writing(service.engine) as connection:
            accounts.add_team(connection, "beta", clock())
        time.sleep(1.1)  # the stamp read is stale: the next reader reads the new one
        direct = _direct(live)
        before = direct.answered
        assert [_get(live, "/leaderboard", {}) for _ in range(3)] == [page] * 3
        assert direct.answered == before + 2 and gate.held == 1  # the first read the new board, the router's
        gate.open()
        for _ in range(400):  # bounded: 20 s
            if b"beta" in _get(live, "/leaderboard", {})[2]:
                break
            time.sleep(0.05)
        assert b"beta" in _get(live, "/leaderboard", {})[2]
