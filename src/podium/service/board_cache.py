"""The leaderboard kept in each web process, computed again only when the database says it changed.

The database holds a version stamp (the ``board_version`` row) that its own
triggers bump in the same transaction as any change the board shows (a result
stored, a rescore, the reveal, a selection, a team added, renamed or removed;
migration 0003), whichever process makes it: a worker, a command, another web
process. A request reads the stamp (one row) and whether the board is
revealed, which the clock decides too (the last phase ending); the board is
computed again only for a key it has not seen. The stamp is read *before* the
board, so a board kept under a stamp is never older than the stamp: a change
committed after the read bumps the stamp, and the next request computes again.

The board is the same for every caller (public scores until the reveal, then
the private split's): no team's view is kept apart, and nothing of a team's
own submissions is in it. What is derived from a board (the leaderboard
page's bootstrap intervals) is kept with it (:meth:`Board.derived`).
"""

from __future__ import annotations

import json
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, TypeVar

from sqlalchemy import Connection, Engine, select

from podium.contest import Contest
from podium.ranking.bootstrap import Confidence
from podium.service import state
from podium.service.confidence import board_confidence
from podium.service.database import reading
from podium.service.leaderboard import standings
from podium.service.state import revealed
from podium.service.tables import board_version, settings

T = TypeVar("T")
KEPT = 4  # boards kept per track: the newest, and a few a slow request may still be reading


def board_key(connection: Connection, contest: Contest, now: datetime) -> tuple[int, bool, str]:
    """The board's version stamp (bumped by the database's triggers), whether it is revealed (one statement), and its track."""
    revealed_at = (
        select(settings.c.value)
        .where(settings.c.contest == contest.id, settings.c.key == state.REVEALED)
        .scalar_subquery()
    )
    stamp, at = connection.execute(select(board_version.c.version, revealed_at).where(board_version.c.id == 1)).one()
    return int(stamp), revealed(at is not None, contest, now), contest.track


@dataclass
class Board:
    """A board as :func:`~podium.service.leaderboard.standings` gives it, under its key (stamp, revealed, track)."""

    key: tuple[int, bool, str]
    board: dict[str, Any]
    shown: dict[str, int]  # the submission shown of each team that has one (the server's use only)
    _derived: dict[str, Any] = field(default_factory=dict)
    _lock: threading.Lock = field(default_factory=threading.Lock)

    def json(self) -> bytes:
        """The board as the API sends it, encoded once (FastAPI's encoder took 0.7 ms a request for 20 teams, and grows with them)."""
        return self.derived(
            "json", lambda: json.dumps(self.board, ensure_ascii=False, allow_nan=False, separators=(",", ":")).encode()
        )

    def derived(self, name: str, compute: Callable[[], T]) -> T:
        """``compute()``, once per board: what the pages derive from it (``name`` tells them apart)."""
        with self._lock:
            if name not in self._derived:
                self._derived[name] = compute()
            return self._derived[name]


class BoardCache:
    """The boards of one web process, by (version stamp, revealed, track); a board is computed once by one thread while others wait."""

    def __init__(self, engine: Engine) -> None:
        self.engine = engine
        self._boards: dict[tuple[int, bool, str], Board] = {}
        self._computing = threading.Lock()
        self.computed = 0  # boards computed (a test tells a hit from a miss by it)

    def __len__(self) -> int:
        return len(self._boards)

    def current(self, contest: Contest, now: datetime) -> Board:
        """The board as of ``now``: the kept one if the stamp and the reveal are unchanged, else computed."""
        with reading(self.engine) as connection:
            key = board_key(connection, contest, now)
        found = self._boards.get(key)
        if found is not None:
            return found
        with self._computing:
            with reading(self.engine) as connection:
                key = board_key(connection, contest, now)  # read again: the newest under the lock
                found = self._boards.get(key)
                if found is not None:
                    return found
                board, shown = standings(connection, contest, now)
            if len(self._boards) >= KEPT * len(contest.track_ids()):
                self._boards.pop(next(iter(self._boards)))
            self._boards[key] = found = Board(key, board, shown)
            self.computed += 1
            return found


def board_page_values(
    boards: BoardCache, confidence_cache: dict[Any, Any], contest: Contest, now: datetime, sort: str | None
) -> dict[str, Any]:
    """What the leaderboard page renders: the board, its rows sorted by ``sort`` (a criterion, or ``team``), the rank intervals."""
    kept = boards.current(contest, now)
    board = kept.board

    def intervals() -> dict[str, Confidence] | None:
        with reading(boards.engine) as connection:
            return board_confidence(confidence_cache, connection, contest, board, kept.shown)

    confidence = kept.derived("confidence", intervals)
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
    return {"board": board, "rows": rows, "sort": sort, "confidence": confidence}
