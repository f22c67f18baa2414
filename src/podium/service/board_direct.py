"""The board's GETs answered from memory by the app's innermost layer, before the router, while the board is fresh.

A GET of ``/api/leaderboard`` answered from memory still went through
FastAPI's router, which tried the app's routes one by one (each route twice:
with a contest's prefix and without) and solved the handler's dependencies:
of the 0.40 ms of CPU an answer took in the app (the GlaS demo's board, 20
teams), the router and the dependencies took ~0.35 ms. Under 50 readers on a
shared machine, where ``podium serve`` gets a fixed share of the cores (the
kernel's autogroups), that CPU per answer was the board's latency: at a third
of a core, 50 readers waited ~60 ms for their turn, and every pause of the
process (a wait for a core, a garbage collection) came on top.

:class:`BoardDirect` answers, without the router, a GET of a board the web
process read within :data:`~podium.service.board_cache.FRESH_S`
(:meth:`~podium.service.board_cache.BoardCache.fresh`): the API's board
(``/api/leaderboard``, ``/api/contests/ID/leaderboard``) and an anonymous
visitor's leaderboard page and table (``/leaderboard``, ``/leaderboard/table``,
``/c/ID/...``) whose page the process has drawn already, or whose previous page the
router answers while a thread draws the new one. It gives the bytes and
headers the route gives (:func:`board_json` and :func:`kept_page`, which the
routes call too), and it sits inside the other layers (request ids, security
headers, counters). Anything else, and any request it is not sure of (a
cookie, a query naming anything but ``track``, ``phase`` and the page's
``sort`` or naming one twice, a value longer than a route takes, a board not
read lately), goes to the router as before: the answer is the router's.
"""

from __future__ import annotations

import re
from datetime import datetime
from typing import Any
from urllib.parse import parse_qsl

from starlette.requests import Request
from starlette.responses import Response
from starlette.types import ASGIApp, Receive, Scope, Send

from podium.contest import Contest
from podium.service.board_cache import Board
from podium.service.board_pages import Drawn
from podium.service.conditional import kept_response
from podium.service.deps import Service, board_asked
from podium.service.urls import route_path

API = re.compile(
    r"/api(?:/contests/([^/]{1,64}))?/leaderboard"
)  # the contest's id: at most 64 characters, as the route
PAGE = re.compile(r"(?:/c/([^/]{1,64}))?/leaderboard(/table)?")
NAMED = 64  # characters: the longest track or phase the routes take (TrackQuery, PhaseQuery)
HTML = "text/html; charset=utf-8"


def board_json(request: Request, kept: Board) -> Response:
    """``GET /api/leaderboard``'s answer: ``kept``'s JSON, encoded once per board, with its ``ETag``."""
    body = kept.json()
    return kept_response(request, body, kept.etag("json", body), "application/json")


def page_key(
    served: Contest, contest: Contest, name: str, sort: str | None, scope: Scope, now: datetime
) -> tuple[Any, ...]:
    """The key an anonymous visitor's page ``name`` (its template) of ``contest``'s board is kept under: the order,
    the path and root path, and the phases shown and which of them closed (the clock's, not the board's)."""
    boards = served.of_track(contest.track or None).shown_boards(now) if contest.board else []
    phase_boards = tuple((b.board_id(), ", ".join(b.board), now >= b.closes()) for b in boards)
    return ("page", name, sort or "", route_path(scope), scope.get("root_path", ""), phase_boards)


def kept_page(request: Request, kept: Board, key: tuple[Any, ...]) -> Response | None:
    """The page ``key`` of ``kept`` as drawn already, with its ``ETag``; ``None`` if it is not drawn yet."""
    body: bytes | None = kept.kept(key)
    return None if body is None else kept_response(request, body, kept.etag(key, body), HTML)


def drawn_page(request: Request, page: Drawn) -> Response:
    """A page drawn (:class:`~podium.service.board_pages.Drawn`) with its ``ETag``."""
    return kept_response(request, page.body, page.etag, HTML)


class BoardDirect:
    """ASGI middleware: a fresh board's GET answered from memory (:func:`board_json`, :func:`kept_page`), else passed on."""

    def __init__(self, app: ASGIApp, service: Service) -> None:
        self.app = app
        self.service = service
        self.answered = 0  # GETs answered here (a test tells them from the router's by it)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        response = self._kept(scope) if scope["type"] == "http" and scope["method"] == "GET" else None
        if response is None:
            await self.app(scope, receive, send)
            return
        self.answered += 1
        await response(scope, receive, send)

    def _kept(self, scope: Scope) -> Response | None:
        path = route_path(scope)
        api = API.fullmatch(path)
        page = None if api else PAGE.fullmatch(path)
        if (api is None and page is None) or (page is not None and _has_cookie(scope)):
            return None
        query = _query(scope, ("track", "phase") if api else ("track", "phase", "sort"))
        if query is None:
            return None
        now = self.service.clock()
        match = api or page
        assert match is not None
        found = self.service.boards.fresh(board_asked(match[1], query.get("track"), query.get("phase"), page), now)
        if found is None:
            return None
        served, contest, kept = found
        if api is not None:
            return board_json(Request(scope), kept)
        sort = query.get("sort")
        if (sort or "") not in kept.sorts():
            return None
        name = "leaderboard_table.html" if match[2] else "leaderboard.html"
        key, request = page_key(served, contest, name, sort, scope, now), Request(scope)
        answer = kept_page(request, kept, key)
        if answer is None:  # the thread draws it: the slot's previous page, as the router answers meanwhile
            drawing = self.service.pages.drawing(kept, key)
            answer = None if drawing is None else drawn_page(request, drawing)
        return answer


def _has_cookie(scope: Scope) -> bool:
    """Whether the request sends any cookie (a session's page names its team: the router draws it)."""
    return any(name == b"cookie" for name, _ in scope["headers"])


def _query(scope: Scope, names: tuple[str, ...]) -> dict[str, str] | None:
    """The query's values by name, as the routes read them; ``None`` (the router's to answer) for a name not in
    ``names``, a name given twice, or a track or phase longer than the routes take."""
    pairs = parse_qsl(scope.get("query_string", b"").decode("latin-1"), keep_blank_values=True)
    found = dict(pairs)
    if len(found) != len(pairs) or not set(found) <= set(names):
        return None
    if any(len(found.get(name, "")) > NAMED for name in ("track", "phase")):
        return None
    return found
