"""The leaderboard kept in each web process, computed again only when the database says it changed.

The database holds a version stamp per contest (its ``board_versions`` row)
that its own triggers bump in the same transaction as any change the
contest's boards show (a result stored, a rescore, the reveal, a selection, a
team added, renamed or removed; migrations 0003 and 0010), whichever process
makes it: a worker, a command, another web process. A change in one contest
leaves the other contests' boards kept. A request reads the stamp (one row) and whether the board is
revealed, which the clock decides too (the last phase ending); the board is
computed again only for a key it has not seen. The stamp is read *before* the
board, so a board kept under a stamp is never older than the stamp: a change
committed after the read bumps the stamp, and the next request computes again.

The board is the same for every caller (public scores until the reveal, then
the private split's): no team's view is kept apart, and nothing of a team's
own submissions is in it (the page marks the caller's row as it draws it). What
is derived from a board (the leaderboard page's bootstrap intervals, the best
score over time, the CSV, its encoded JSON, the page an anonymous visitor
gets) is kept with it (:meth:`Board.derived`), with a validator (:meth:`Board.etag`)
that lets a client asking again with ``If-None-Match`` be answered ``304``.

``podium serve`` trusts a stamp read less than :data:`FRESH_S` ago
(``BoardCache(fresh_s=...)``): the event loop then answers from memory, with no
SQL statement and no thread, and a change reaches the board at most
:data:`FRESH_S` later (as it reaches a browser polling every 10 s at most 10 s
later). Once the bound has passed, one request reads the stamp again (in a
thread); the others arriving meanwhile are answered the board it read last,
from memory, rather than each sending a thread to read the same row (at 50
readers, that herd every :data:`FRESH_S` was the idle board's 99th percentile).
The reveal by the clock is never late: it is decided at each request.
``fresh_s=0`` (a :class:`~podium.service.deps.Service`'s default) reads the
stamp at every request.

With ``fresh_s > 0``, a changed board is computed by the first request that
reads the new stamp; a request arriving meanwhile is answered the previous
board of its track and phases (revealed alike: never a public board once the
board is revealed) rather than waiting, so a change costs one request its
computation instead of every reader (:mod:`podium.service.board_pages` does the
same for the leaderboard page).
"""

from __future__ import annotations

import hashlib
import json
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, TypeVar

from sqlalchemy import Connection, Engine, func, select

from podium.contest import Contest
from podium.ranking.bootstrap import Confidence
from podium.service import state
from podium.service.board_files import best_over_time, board_csv, history_spec
from podium.service.board_share import SharedDraws
from podium.service.confidence import board_confidence
from podium.service.database import reading
from podium.service.leaderboard import standings
from podium.service.state import revealed
from podium.service.tables import board_versions, settings
from podium.service.titles import title

T = TypeVar("T")
KEPT = 4  # boards kept per track and phase: the newest, and a few a slow request may still be reading
FRESH_S = 0.5  # podium serve: how long a web process trusts the stamp it read (a change shows at most this late)


def board_stamp(connection: Connection, contest: str) -> tuple[int, bool]:
    """``contest``'s version stamp (bumped by the database's triggers; 0 before its first change) and whether an
    organizer revealed it: one statement."""
    version = select(board_versions.c.version).where(board_versions.c.contest == contest).scalar_subquery()
    revealed_at = (
        select(settings.c.value)
        .where(settings.c.contest == contest, settings.c.key == state.REVEALED)
        .scalar_subquery()
    )
    stamp, at = connection.execute(select(func.coalesce(version, 0), revealed_at)).one()
    return int(stamp), at is not None


Key = tuple[
    int, bool, str, str, str
]  # the stamp, revealed, the contest, the track, the board's first phase ("": every phase)
Asked = tuple[
    str | None, str | None, str | None, bool
]  # the contest, the track and the phase a request named (None: the default), whether a page's (deps.board_asked)


def board_key(stamp: int, by_organizer: bool, contest: Contest, now: datetime) -> Key:
    """The key a board is kept under: the stamp, whether it is revealed (by an organizer or by the clock), the contest
    (track ids repeat across contests), the track and phases."""
    return stamp, revealed(by_organizer, contest, now), contest.id, contest.track, contest.board_id()


@dataclass
class Board:
    """A board as :func:`~podium.service.leaderboard.standings` gives it, under its key (stamp, revealed, track, phases)."""

    key: Key
    board: dict[str, Any]
    shown: dict[str, int]  # the submission shown of each team that has one (the server's use only)
    _derived: dict[str, Any] = field(default_factory=dict)
    # reentrant: a page is derived from the derived intervals
    _lock: threading.RLock = field(default_factory=threading.RLock)

    def csv(self) -> bytes:
        """The board as CSV (:func:`~podium.service.board_files.board_csv`), encoded once."""
        return self.derived("csv", lambda: board_csv(self.board))

    def json(self) -> bytes:
        """The board as the API sends it, encoded once (FastAPI's encoder took 0.7 ms a request for 20 teams, and grows with them)."""
        return self.derived(
            "json", lambda: json.dumps(self.board, ensure_ascii=False, allow_nan=False, separators=(",", ":")).encode()
        )

    def sorts(self) -> tuple[str, ...]:
        """The orders the pages sort the board in: as ranked, by team, by each criterion."""
        return ("", "team", *(c["name"] for c in self.board["criteria"]))

    def kept(self, name: Any) -> Any:
        """What :meth:`derived` keeps under ``name``, or ``None``: without waiting for a thread computing it."""
        return self._derived.get(name)

    def etag(self, name: Any, body: bytes) -> str:
        """A strong validator of ``body``, what the board gives as ``name`` (a hash of the bytes: the same in every process)."""
        return self.derived(("etag", name), lambda: '"' + hashlib.blake2b(body, digest_size=12).hexdigest() + '"')

    def derived(self, name: Any, compute: Callable[[], T]) -> T:
        """``compute()``, once per board: what the pages derive from it (``name`` tells them apart)."""
        with self._lock:
            if name not in self._derived:
                self._derived[name] = compute()
            return self._derived[name]


@dataclass(frozen=True)
class _Read:
    """What a request read of a board: when (``time.monotonic``), the contest served and on that track, the stamp, whether an organizer revealed."""

    at: float
    served: Contest
    contest: Contest
    stamp: int
    by_organizer: bool


class BoardCache:
    """The boards of one web process, by (version stamp, revealed, contest, track, phases); a board is computed once by one thread while others wait."""

    def __init__(self, engine: Engine, fresh_s: float = 0.0, shared: SharedDraws | None = None) -> None:
        self.engine = engine
        self.fresh_s = fresh_s
        self.shared = shared  # the boards computed by one web process, read by the others (podium.service.board_share)
        self._boards: dict[Key, Board] = {}
        self._read: dict[Asked, _Read] = {}  # by the contest, track and phase asked for (None: the default), once known
        self._reading: set[Asked] = (
            set()
        )  # the boards asked for whose stamp one request reads again now (event loop only)
        self._computing = threading.Lock()
        self.computed = 0  # boards computed (a test tells a hit from a miss by it)

    def __len__(self) -> int:
        return len(self._boards)

    def fresh(self, asked: Asked, now: datetime) -> tuple[Contest, Contest, Board] | None:
        """Without SQL: the contest served, on the board ``asked`` names (contest, track, phase), and that board, if
        their stamp was read within ``fresh_s``, or another request reads it again now (else ``None``: the caller
        reads it, between :meth:`reading` and :meth:`read`). Called on the event loop's thread only."""
        read = self._read.get(asked)
        if read is None or (time.monotonic() - read.at >= self.fresh_s and asked not in self._reading):
            return None
        found = self._boards.get(board_key(read.stamp, read.by_organizer, read.contest, now))
        return None if found is None else (read.served, read.contest, found)

    def reading(self, asked: Asked) -> None:
        """The caller reads ``asked``'s stamp again: until :meth:`read`, :meth:`fresh` answers others the board read last."""
        if asked in self._read:
            self._reading.add(asked)

    def read(self, asked: Asked) -> None:
        """The read :meth:`reading` announced is over (or failed): the next request past the bound reads again."""
        self._reading.discard(asked)

    def current(
        self, contest: Contest, now: datetime, asked: Asked = (None, None, None, False), served: Contest | None = None
    ) -> Board:
        """The board as of ``now``: the kept one if the stamp and the reveal are unchanged, else computed.

        ``asked`` and ``served``: the contest, track and phase the request named and the contest served, under which
        :meth:`fresh` finds this read again (``served`` not given: it is not kept).
        """
        at = time.monotonic()
        with reading(self.engine) as connection:
            stamp = board_stamp(connection, contest.id)
        found = self._boards.get(board_key(*stamp, contest, now))
        if found is not None:
            self._remember(asked, served, _Read(at, served or contest, contest, *stamp))
            return found
        if not self._computing.acquire(blocking=False):  # another thread computes a board
            behind = self._previous(board_key(*stamp, contest, now)) if self.fresh_s > 0 else None
            if behind is not None:
                return behind
            self._computing.acquire()
        try:
            with reading(self.engine) as connection:
                stamp = board_stamp(connection, contest.id)  # read again: the newest under the lock
                key = board_key(*stamp, contest, now)
                found = self._boards.get(key)
                if found is not None:
                    return found
                board, shown = self._standings(connection, contest, now, key)
            same = [kept for kept in self._boards if kept[2] == contest.id]  # the oldest first
            if len(same) >= KEPT * len(contest.track_ids()) * max(1, len(contest.phases)):
                self._boards.pop(same[0])
            self._boards[key] = found = Board(key, board, shown)
            self.computed += 1
        finally:
            self._computing.release()
        self._remember(asked, served, _Read(at, served or contest, contest, *stamp))
        return found

    def _standings(
        self, connection: Connection, contest: Contest, now: datetime, key: Key
    ) -> tuple[dict[str, Any], dict[str, int]]:
        """:func:`~podium.service.leaderboard.standings`, or the board another web process computed under ``key``."""
        if self.shared is None:
            return standings(connection, contest, now)

        def make() -> bytes:
            board, shown = standings(connection, contest, now)
            return json.dumps({"board": board, "shown": shown}, allow_nan=False, separators=(",", ":")).encode()

        found = json.loads(self.shared.get(contest.id, key[0], ("board", *key[1:]), make))
        return found["board"], found["shown"]  # as every process reads them, this one's own too

    def _previous(self, key: Key) -> Board | None:
        """The newest kept board of ``key``'s track and phases, revealed alike, under an older stamp (``None``: none)."""
        older = [b for b in list(self._boards.values()) if b.key[1:] == key[1:] and b.key[0] < key[0]]
        return max(older, key=lambda b: b.key[0], default=None)

    def _remember(self, asked: Asked, served: Contest | None, read: _Read) -> None:
        if self.fresh_s > 0 and served is not None:
            self._read[asked] = read  # the time of the read, before it: the bound holds from the statement on


def board_page_values(
    boards: BoardCache, kept: Board, confidence_cache: dict[Any, Any], contest: Contest, sort: str | None
) -> dict[str, Any]:
    """What the leaderboard page renders of ``kept``: the board, its rows sorted by ``sort`` (a criterion, or ``team``), the rank intervals, the best score over time."""
    board = kept.board

    def intervals() -> dict[str, Confidence] | None:
        with reading(boards.engine) as connection:
            return board_confidence(confidence_cache, connection, contest, board, kept.shown)

    confidence = kept.derived("confidence", intervals)

    def over_time() -> dict[str, Any]:
        with reading(boards.engine) as connection:
            history = best_over_time(connection, contest, board)
        return {**history, "spec": history_spec(history, title(history["criterion"]))}

    history = kept.derived("history", over_time) if board["criteria"] else None
    rows = board["teams"]
    names = [c["name"] for c in board["criteria"]]
    if sort in names:
        higher = next(c["higher_is_better"] for c in board["criteria"] if c["name"] == sort)
        rows = sorted(
            rows,
            key=lambda t: (
                t["scores"].get(sort) is None,
                -(t["scores"].get(sort) or 0) if higher else (t["scores"].get(sort) or 0),
            ),
        )
    elif sort == "team":
        rows = sorted(rows, key=lambda t: t["team"].lower())
    return {"board": board, "rows": rows, "sort": sort, "confidence": confidence, "history": history}
