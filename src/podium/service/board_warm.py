"""The boards of a web process drawn at its start, before any reader asks (``podium serve``).

The first GET of a board after a start computed it and drew its page on the
request path (for the GlaS demo 23 ms for the API's board, 70 ms for the
page; 2 s for a contest of 2,000 teams): that reader, and every reader
arriving meanwhile, waited for it. At start-up (the app's lifespan) one task
sends the web process itself, through the app as uvicorn would call it, a GET
of each served contest's board, its page and the page's table (the contest's
own paths when several are served, the plain ones when one is; each track's
of a contest of tracks; when phases name data of their own, the board of each
phase shown, the earlier phases' final boards too, as the contest page and the
leaderboard page's links ask for them, ``?phase=``), one after the other, so
the computing takes one thread at a time while the first readers are answered. A reader arriving before its board is ready waits for it as before;
a failure is logged, and the board is computed by the first reader as before.

Then the task collects the garbage once and freezes what is left
(``gc.freeze``): the modules, the app, the kernels and the boards of the start,
~200,000 objects, are out of the collector's reach from then on. A full
collection walked them all, ~100 ms of CPU with the event loop stopped: the
99th percentile of the board under 50 readers (measured with ``gc.callbacks``
in ``podium serve`` under ``benchmarks/board_speed.py``: full collections of
84-412 ms wall at load 10).
The warming GETs carry the extension :data:`WARM`: ``/metrics`` does not count them.

Then, every :data:`WATCH_S`, the task looks at the contests served again (one
statement each, in a thread): a contest served anew, a contest file read again
(``podium contest reload``, SIGHUP: the contest's read stamp), or a board shown
or closed by the clock (a phase opening or ending) has its boards drawn again
the same way, :data:`~podium.service.board_cache.FRESH_S` after it was seen
(once the process's last reads of the old boards are stale), rather than by
its first reader.
"""

from __future__ import annotations

import asyncio
import gc
import logging
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime
from urllib.parse import urlencode

from sqlalchemy import Engine
from starlette.types import ASGIApp, Message

from podium.contest import Contest, ContestError
from podium.core.errors import UsageError
from podium.service.database import reading
from podium.service.state import ContestCache, served_ids
from podium.service.statuses import Clock

log = logging.getLogger("podium.service")
WARM = "podium.warm"  # the scope's extension marking these GETs: /metrics does not count them
PATHS = ("/api{prefix}/leaderboard", "{page}/leaderboard", "{page}/leaderboard/table")
WATCH_S = 2.0  # how often the contests served are looked at again


@dataclass(frozen=True)
class Served:
    """A contest served as the task saw it: the contest read (a new object once its file is read again), the boards
    the clock shows and closes, and the queries its boards are asked for with."""

    contest: Contest
    shown: tuple[tuple[str, str, bool], ...]
    queries: tuple[str, ...]

    def same(self, other: Served | None) -> bool:
        return other is not None and other.contest is self.contest and other.shown == self.shown


def board_queries(contest: Contest, now: datetime) -> tuple[str, ...]:
    """The queries ``contest``'s boards are asked for with at ``now``: each track's (``track=``, for a contest of
    tracks), and when phases name data of their own, each shown board's too (``phase=``: the latest started phase's,
    then the earlier ones')."""
    found = []
    for track in contest.track_ids() if contest.tracks else [None]:
        named = {"track": track} if track else {}
        found.append(urlencode(named))
        if contest.phased():
            found += [urlencode({**named, "phase": b.board_id()}) for b in contest.of_track(track).shown_boards(now)]
    return tuple(found)


def board_paths(contests: dict[str, tuple[str, ...]], plain: bool) -> list[str]:
    """The paths a reader GETs the boards of ``contests`` (each id, with its :func:`board_queries`) at: the plain ones
    when one contest is served (``plain``), each contest's own otherwise."""
    return [
        path.format(prefix="" if plain else f"/contests/{id_}", page="" if plain else f"/c/{id_}")
        + (f"?{query}" if query else "")
        for id_, queries in contests.items()
        for query in queries
        for path in PATHS
    ]


async def warm(
    app: ASGIApp,
    contests: Callable[[], dict[str, Served]],
    root_path: str = "",
    watch_s: float = 0.0,
    fresh_s: float = 0.0,
) -> int:
    """GET each board path of ``contests()`` from ``app`` in turn (``root_path``: uvicorn's), then freeze the heap;
    then, every ``watch_s`` (0: never), those of each contest changed since, ``fresh_s`` after the change is seen. How
    many answered 200 at the start (the task runs until cancelled when ``watch_s`` is given)."""
    drawn: dict[str, Served] = {}
    answered = await _draw(app, contests, root_path, drawn, 0.0)
    gc.collect()
    gc.freeze()  # what the start made, kept for the process's life: never walked again by a collection
    while watch_s > 0:
        await asyncio.sleep(watch_s)
        await _draw(app, contests, root_path, drawn, fresh_s)
    return answered


async def _draw(
    app: ASGIApp, contests: Callable[[], dict[str, Served]], root_path: str, drawn: dict[str, Served], wait_s: float
) -> int:
    """GET the board paths of each contest of ``contests()`` not the same as in ``drawn`` (updated), ``wait_s`` after
    finding them; how many answered 200."""
    try:
        found = await asyncio.to_thread(contests)
    except Exception:
        log.exception("the contests served could not be read: their first readers draw their boards")
        return 0
    changed = {id_: served.queries for id_, served in found.items() if not served.same(drawn.get(id_))}
    for id_ in set(drawn) - set(found):
        del drawn[id_]
    if not changed:
        return 0
    await asyncio.sleep(wait_s)
    answered = 0
    for path in board_paths(changed, len(found) == 1):
        try:
            answered += await _get(app, path, root_path) == 200
        except Exception:
            log.exception("the board at %s could not be drawn: its first reader draws it", path)
    drawn.update((id_, found[id_]) for id_ in changed)
    return answered


def served(engine: Engine, cache: ContestCache, clock: Clock) -> Callable[[], dict[str, Served]]:
    """The contests the database serves, each as :class:`Served` at ``clock()``, read when called (in the task's
    thread); a contest whose file does not read is left to its first reader."""

    def contests() -> dict[str, Served]:
        now = clock()
        found = {}
        with reading(engine) as connection:
            for id_ in served_ids(connection):
                try:
                    contest = cache.get(id_, connection)
                except (UsageError, ContestError):
                    log.warning("the boards of %s are not drawn ahead of readers: its contest does not read", id_)
                    continue
                shown = tuple(
                    (b.track or "", b.board_id(), now >= b.closes())
                    for track in contest.track_ids()
                    for b in contest.of_track(track if contest.tracks else None).shown_boards(now)
                )
                found[id_] = Served(contest, shown, board_queries(contest, now))
        return found

    return contests


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
