"""The boards of a web process drawn at its start, before any reader asks (``podium serve``).

The first GET of a board after a start computed it and drew its page on the
request path (for the GlaS demo 23 ms for the API's board, 70 ms for the
page; 2 s for a contest of 2,000 teams): that reader, and every reader
arriving meanwhile, waited for it. At start-up (the app's lifespan) one task
sends the web process itself, through the app as uvicorn would call it, a GET
of each served contest's board, its page and the page's table (the contest's
own paths when several are served, the plain ones when one is), one after the
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
from collections.abc import Callable, Iterable

from sqlalchemy import Engine
from starlette.types import ASGIApp, Message

from podium.service.database import reading
from podium.service.state import served_ids

log = logging.getLogger("podium.service")
WARM = "podium.warm"  # the scope's extension marking these GETs: /metrics does not count them
PATHS = ("/api{prefix}/leaderboard", "{page}/leaderboard", "{page}/leaderboard/table")


def board_paths(contests: Iterable[str]) -> list[str]:
    """The paths a reader GETs the boards of ``contests`` (the ids served) at: the plain ones for one contest."""
    ids = list(contests)
    if len(ids) == 1:
        return [path.format(prefix="", page="") for path in PATHS]
    return [path.format(prefix=f"/contests/{id_}", page=f"/c/{id_}") for id_ in ids for path in PATHS]


async def warm(app: ASGIApp, contests: Callable[[], list[str]], root_path: str = "") -> int:
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


def served(engine: Engine) -> Callable[[], list[str]]:
    """The ids of the contests the database serves, read when called (in the warming task's thread)."""

    def ids() -> list[str]:
        with reading(engine) as connection:
            return served_ids(connection)

    return ids


async def _get(app: ASGIApp, path: str, root_path: str) -> int:
    """The status of ``GET path`` sent to ``app`` as uvicorn sends a request (its path after the root path)."""
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
        "query_string": b"",
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
