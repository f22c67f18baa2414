"""The boards of a web process drawn at its start, before any reader asks (``podium serve``).

The first GET of a board after a start computed it and drew its page on the
request path (for the GlaS demo 23 ms for the API's board, 70 ms for the
page; 2 s for a contest of 2,000 teams): that reader, and every reader
arriving meanwhile, waited for it. At start-up (the app's lifespan) one task
sends the web process itself, through the app as uvicorn would call it, a GET
of each served contest's board, its page and the page's table (the contest's
own paths when several are served, the plain ones when one is; each track's
of a contest of tracks), one after the
other, so the computing takes one thread at a time while the first readers are
answered. A reader arriving before its board is ready waits for it as before;
a failure is logged, and the board is computed by the first reader as before.

Then the task collects the garbage once and freezes what is left
(``gc.freeze``): the modules, the app, the kernels and the boards of the start,
~200,000 objects, are out of the collector's reach from then on. A full
collection walked them all, ~100 ms of CPU with the event loop stopped: the
99th percentile of the board under 50 readers (measured with ``gc.callbacks``
in ``podium serve`` under ``benchmarks/board_speed.py``: full collections of
84-412 ms wall at load 10).
The warming GETs carry the extension :data:`WARM`: ``/metrics`` does not count them.
"""

from __future__ import annotations

import asyncio
import gc
import logging
from collections.abc import Callable

from sqlalchemy import Engine
from starlette.types import ASGIApp, Message

from podium.contest import ContestError
from podium.core.errors import UsageError
from podium.service.database import reading
from podium.service.state import ContestCache, served_ids

log = logging.getLogger("podium.service")
WARM = "podium.warm"  # the scope's extension marking these GETs: /metrics does not count them
PATHS = ("/api{prefix}/leaderboard", "{page}/leaderboard", "{page}/leaderboard/table")


def board_paths(contests: dict[str, list[str]]) -> list[str]:
    """The paths a reader GETs the boards of ``contests`` (each served id, with its ``[[track]]`` ids) at: the plain
    ones for one contest, each track's (``?track=``) for a contest of tracks."""
    plain = len(contests) == 1
    return [
        path.format(prefix="" if plain else f"/contests/{id_}", page="" if plain else f"/c/{id_}")
        + (f"?track={track}" if track else "")
        for id_, tracks in contests.items()
        for track in tracks or [""]
        for path in PATHS
    ]


async def warm(app: ASGIApp, contests: Callable[[], dict[str, list[str]]], root_path: str = "") -> int:
    """GET each board path of ``contests()`` from ``app`` in turn (``root_path``: uvicorn's), then freeze the heap; how
    many answered 200."""
    try:
        paths = board_paths(await asyncio.to_thread(contests))
    except Exception:
        log.exception("the boards could not be drawn at start-up: the first readers draw them")
        paths = []
    answered = 0
    for path in paths:
        try:
            answered += await _get(app, path, root_path) == 200
        except Exception:
            log.exception("the board at %s could not be drawn at start-up: its first reader draws it", path)
    gc.collect()
    gc.freeze()  # what the start made, kept for the process's life: never walked again by a collection
    return answered


def served(engine: Engine, cache: ContestCache) -> Callable[[], dict[str, list[str]]]:
    """The contests the database serves, each with its ``[[track]]`` ids, read when called (in the task's thread); a
    contest whose file does not read is left to its first reader."""

    def tracks() -> dict[str, list[str]]:
        with reading(engine) as connection:
            ids = served_ids(connection)
        found = {}
        for id_ in ids:
            try:
                found[id_] = [t.track for t in cache.get(id_).tracks]
            except (UsageError, ContestError):
                log.warning("the boards of %s are not drawn at start-up: its contest does not read", id_)
        return found

    return tracks


async def _get(app: ASGIApp, path: str, root_path: str) -> int:
    """The status of ``GET path`` sent to ``app`` as uvicorn sends a request (its path after the root path)."""
    path, _, query = path.partition("?")
    full = root_path.rstrip("/") + path
    scope = {
        "type": "http",
        "asgi": {"version": "3.0", "spec_version": "2.3"},
        "http_version": "1.1",
        "method": "GET",
        "scheme": "http",
        "path": full,
        "raw_path": full.encode(),
        "root_path": root_path.rstrip("/"),
        "query_string": query.encode(),
        "headers": [(b"host", b"localhost")],
        "client": ("127.0.0.1", 0),
        "server": ("127.0.0.1", 0),
        "state": {},
        "extensions": {WARM: {}},
    }
    status = [0]

    async def receive() -> Message:
        return {"type": "http.request", "body": b"", "more_body": False}

    async def send(message: Message) -> None:
        if message["type"] == "http.response.start":
            status[0] = message["status"]

    await app(scope, receive, send)
    return status[0]
