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

``podium serve`` has each web process look at the stamps of the boards its
readers ask for every ``FRESH_S / 2``, in a thread of its own (:meth:`BoardCache.watch`),
off the request path: the look reads again the contest served and the stamp (a
contest read again, a phase started, a contest withdrawn: as a request would),
computes each changed board (one at a time), and only then puts it in the
readers' way. The event loop answers every reader from memory, with no SQL
statement and no thread, the previous board until the new one is ready: no
reader waits for a stamp's read or a board's computation. A change is read at
most ``FRESH_S / 2`` after it is committed, and shows once its board is
computed: within :data:`FRESH_S` while that takes less than ``FRESH_S / 2`` (the
GlaS demo's board: ~10 ms; on a busy machine, or for a contest of thousands of
teams, later, the previous board answered meanwhile), as a browser polling every
10 s sees it at most 10 s later. Tested at that boundary: the first look that
starts after a change serves it. The reveal by the clock is never late: it is
decided at each request (the first reader past the last phase's end computes the
final board). Readers fall back to the request path (one request reads the stamp
again, in a thread, once it is :data:`FRESH_S` old; the others are answered the
board it read last) for a board no reader asked for within :data:`IDLE_S` (the
look stops reading it), a board that no longer resolves (a contest withdrawn, a
phase gone from a contest read again), and while the look is :data:`STALE_S`
late (a database away).
``fresh_s=0`` (a :class:`~podium.service.deps.Service`'s default) reads the
stamp at every request, and nothing looks at it in between.
"""

from __future__ import annotations

import hashlib
import json
import logging
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
log = logging.getLogger("podium.service")
LOOK = "podium-board-look"  # the name of the thread looking at the stamps (watch)
KEPT = 4  # boards kept per track and phase: the newest, and a few a slow request may still be reading
FRESH_S = 0.5  # podium serve: how late a change may show (the stamps are looked at twice as often, the board drawn)
IDLE_S = 30.0  # a board no reader asked for this long is no longer looked at: its next reader reads its stamp
STALE_S = 10.0  # a look this late no longer stands for the stamps: readers read them as before
STOP_S = 5.0  # the most a web process's shutdown waits for a look under way


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
Resolve = Callable[
    [Connection], tuple[Contest, Contest]
]  # the contest served and the board a request named, resolved again as the request did (raises: no longer)


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
        self._resolve: dict[Asked, Resolve] = {}  # the boards the look reads again, and how (watch)
        self._asked: dict[Asked, float] = {}  # when each of them was last asked for (time.monotonic)
        self._looked = -STALE_S  # when the look last read the stamps (time.monotonic; never: long ago)
        self._computing: dict[tuple[Any, ...], threading.Lock] = {}  # per track and phases, revealed or not
        self._keeping = threading.Lock()  # held to change the boards kept, and the locks
        self.computed = 0  # boards computed (a test tells a hit from a miss by it)
        self.computed_behind = 0  # of them, by the look, off the request path
        self.looks = 0  # looks finished (a test waits for the first one that started after a change)

    def __len__(self) -> int:
        return len(self._boards)

    def fresh(self, asked: Asked, now: datetime) -> tuple[Contest, Contest, Board] | None:
        """Without SQL: the contest served, on the board ``asked`` names (contest, track, phase), and that board, if
        their stamp was read within ``fresh_s``, the look keeps it read, or another request reads it again now (else
        ``None``: the caller reads it, between :meth:`reading` and :meth:`read`). Called on the event loop's thread only."""
        read = self._read.get(asked)
        if read is None:
            return None
        at = time.monotonic()
        if asked in self._resolve and at - self._looked < STALE_S:
            self._asked[asked] = at
        elif at - read.at >= self.fresh_s and asked not in self._reading:
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
        self,
        contest: Contest,
        now: datetime,
        asked: Asked = (None, None, None, False),
        served: Contest | None = None,
        resolve: Resolve | None = None,
    ) -> Board:
        """The board as of ``now``: the kept one if the stamp and the reveal are unchanged, else computed.

        ``asked`` and ``served``: the contest, track and phase the request named and the contest served, under which
        :meth:`fresh` finds this read again (``served`` not given: it is not kept); ``resolve``: how the look reads
        them again (not given: it does not).
        """
        at = time.monotonic()
        with reading(self.engine) as connection:
            stamp = board_stamp(connection, contest.id)
        found = self._boards.get(board_key(*stamp, contest, now))
        if found is None:  # (a kept board was drawn from the contest as its stamp's: see _compute)
            found, newest = self._compute(contest, now, board_key(*stamp, contest, now), resolve)
            if newest is None:  # the previous board, while another thread computes: not remembered as read
                return found
            stamp = newest
        self._remember(asked, served, _Read(at, served or contest, contest, *stamp), resolve)
        return found

    def _compute(
        self, contest: Contest, now: datetime, wanted: Key, resolve: Resolve | None = None
    ) -> tuple[Board, tuple[int, bool] | None]:
        """The board of ``wanted`` computed under its slot's lock (the newest stamp's if it moved since) and that
        stamp, or, while another thread computes a board of the slot (``fresh_s > 0``), the previous one and ``None``.

        ``resolve`` reads the contest again after the stamp: a contest reloaded (which bumps the stamp) between the
        caller's read of it and this stamp's was drawn as it was before under the new stamp, and that board kept until
        the next change (a title, a ranking rule, decimals changed by a reload, shown as before).

        A slot (the contest, track and phases, revealed or not) is computed by one thread at a time; the others do not
        wait for it (the start-up's board of a contest of 2,000 teams took 2 s, and held every other contest's first
        reader behind it while the lock was the process's).
        """
        with self._keeping:
            lock = self._computing.setdefault(wanted[1:], threading.Lock())
        if not lock.acquire(blocking=False):  # another thread computes this slot's board
            behind = self._previous(wanted) if self.fresh_s > 0 else None
            if behind is not None:
                return behind, None
            lock.acquire()
        try:
            with reading(self.engine) as connection:
                stamp = board_stamp(connection, contest.id)  # read again: the newest under the lock
                contest = contest if resolve is None else resolve(connection)[1]
                key = board_key(*stamp, contest, now)
                found = self._boards.get(key)
                if found is not None:
                    return found, stamp
                board, shown = self._standings(connection, contest, now, key)
            with self._keeping:
                same = [kept for kept in self._boards if kept[2] == contest.id]  # the oldest first
                if len(same) >= KEPT * len(contest.track_ids()) * max(1, len(contest.phases)):
                    self._boards.pop(same[0])
                self._boards[key] = found = Board(key, board, shown)
                self.computed += 1
                if threading.current_thread().name == LOOK:
                    self.computed_behind += 1
        finally:
            lock.release()
        return found, stamp

    def look(self, now: datetime) -> None:
        """Read again the contest served and the stamp of every board asked for within :data:`IDLE_S` (the others
        forgotten), in one transaction; then compute each changed board, and only then put it in the readers' way."""
        at = time.monotonic()
        for asked in [a for a in list(self._resolve) if at - self._asked.get(a, at) >= IDLE_S]:
            self._forget(asked)
        found = []
        stamps: dict[str, tuple[int, bool]] = {}
        with reading(self.engine) as connection:
            for asked, resolve in list(self._resolve.items()):
                try:
                    served, contest = resolve(connection)
                except Exception:  # no longer served, or no longer this board: its next reader asks the router
                    self._forget(asked)
                    continue
                if contest.id not in stamps:
                    stamps[contest.id] = board_stamp(connection, contest.id)
                found.append((asked, served, contest, stamps[contest.id], resolve))
        self._looked = at
        for asked, served, contest, stamp, resolve in found:
            key = board_key(*stamp, contest, now)
            newest: tuple[int, bool] | None = stamp
            if key not in self._boards:
                newest = self._compute(contest, now, key, resolve)[1]
            if newest is not None:  # else a request computes it: this board's readers keep the previous meanwhile
                self._remember(asked, served, _Read(at, served, contest, *newest), resolve)
        self.looks += 1

    def watch(self, clock: Callable[[], datetime]) -> Callable[[], None]:
        """Start the look (:meth:`look`) every ``fresh_s / 2`` in a thread of its own; the function that stops it.

        A database away is said once, with its traceback, and its return once: the look failed and logged every
        ``fresh_s / 2`` (four tracebacks a second). The stop waits at most :data:`STOP_S` for a look under way (one
        held by a database that does not answer, which psycopg waits for without end, held ``podium serve``'s
        shutdown as long); the thread, a daemon, ends with the process."""
        stop = threading.Event()

        def looking() -> None:
            away = False
            while True:
                started = time.monotonic()
                try:
                    self.look(clock())
                except Exception:  # a database away: readers fall back to reading the stamps past STALE_S
                    if not away:
                        log.exception("the boards' stamps could not be read (said once, until they are again)")
                    away = True
                else:
                    if away:
                        log.warning("the boards' stamps are read again")
                    away = False
                if stop.wait(max(0.0, self.fresh_s / 2 - (time.monotonic() - started))):
                    return

        thread = threading.Thread(target=looking, name=LOOK, daemon=True)
        thread.start()

        def stopped() -> None:
            stop.set()
            thread.join(STOP_S)
            if thread.is_alive():
                log.warning("the boards' look did not end within %s s (a database that does not answer): left", STOP_S)

        return stopped

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

    def _remember(self, asked: Asked, served: Contest | None, read: _Read, resolve: Resolve | None) -> None:
        if self.fresh_s > 0 and served is not None:
            known = self._read.get(asked)
            if known is not None and known.contest is read.contest and known.stamp > read.stamp:
                return  # the look's read, older than a request's since: a reader never goes back to an older board
            self._read[asked] = read  # the time of the read, before it: the bound holds from the statement on
            if resolve is not None:
                self._asked.setdefault(asked, read.at)
                self._resolve[asked] = resolve

    def _forget(self, asked: Asked) -> None:
        """``asked`` no longer read by the look: its next reader past the bound reads it."""
        self._resolve.pop(asked, None)
        self._asked.pop(asked, None)


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
