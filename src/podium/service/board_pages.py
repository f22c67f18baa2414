"""The leaderboard page an anonymous visitor gets, drawn again off the request path when its board changes.

Drawing the page of a new board costs what the board itself does not: the
bootstrap intervals (:mod:`podium.service.confidence`, 1,000 resamples), the
best score over time and the template (for the GlaS demo's 20 teams, 60 scored
submissions: 60-110 ms wall at load 19, 310-410 ms before the bootstrap was
vectorised). Drawn by the first reader after a change, that cost was the HTML
board's 99th percentile, every reader arriving meanwhile waiting for it.

:class:`BoardPages` keeps, per *slot* (whether revealed, the track, the phases,
and which page: template, order, path), the newest page drawn. Once a page of a
slot exists, a reader of a newer board that has no page yet is answered that
page (with its own ``ETag``) at once, while one background thread draws the new
board's page; the readers get it as soon as it lands. A slot never answers
another slot's page: a board before the reveal never stands in for one after
it (nor a track or phase for another). A slot's first page, and any page after
a failed draw, is drawn on the request path as before.

Changes faster than pages are drawn do not queue: the thread draws the newest
board asked for in a slot and skips those it has left behind. With
``--web-processes N`` one process draws a page and the others read it
(:mod:`podium.service.board_share`).
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any

from podium.service.board_cache import Board
from podium.service.board_share import SharedDraws

log = logging.getLogger("podium.service")
Slot = tuple[Any, ...]  # the board's key without its stamp (revealed, track, phases), and the page's key


@dataclass(frozen=True)
class Drawn:
    """A page drawn: the stamp of its board, its bytes and their ``ETag``."""

    stamp: int
    body: bytes
    etag: str


class BoardPages:
    """The newest page of each slot, and one thread drawing the pages of changed boards (``behind``; else on the request path)."""

    def __init__(self, behind: bool = False, shared: SharedDraws | None = None) -> None:
        self.behind = behind
        self.shared = shared  # the pages drawn by one web process, read by the others (podium.service.board_share)
        self._drawn: dict[Slot, Drawn] = {}
        self._wanted: dict[Slot, Board] = {}  # the board whose page the thread is to draw, per slot
        self._failed: dict[Slot, Board] = {}  # a board whose page the thread could not draw: drawn on the request path
        self._lock = threading.Lock()
        self._thread: ThreadPoolExecutor | None = None
        self.drawn_behind = 0  # pages the thread drew (a test tells the two ways apart by it)

    def draw(self, kept: Board, key: Any, draw: Callable[[], bytes]) -> Drawn:
        """``kept``'s page ``key``: ``draw()``, once per board (a thread waits for another drawing it), remembered for its slot."""
        body = kept.derived(key, lambda: self._landed(kept, key, self._drawn_once(kept, key, draw)))
        return Drawn(kept.key[0], body, kept.etag(key, body))

    def previous(self, kept: Board, key: Any, draw: Callable[[], bytes]) -> Drawn | None:
        """The newest page of ``kept``'s slot drawn for an older board, while the thread draws ``kept``'s; ``None``: draw it now."""
        if not self.behind:
            return None
        slot = (*kept.key[1:], key)
        with self._lock:
            found = self._drawn.get(slot)
            if found is None or found.stamp >= kept.key[0] or self._failed.get(slot) is kept:
                return None
            if self._wanted.get(slot) is not kept:
                self._wanted[slot] = kept
                if self._thread is None:
                    self._thread = ThreadPoolExecutor(1, thread_name_prefix="podium-board-pages")
                self._thread.submit(self._behind, slot, kept, key, draw)
        return found

    def drawing(self, kept: Board, key: Any) -> Drawn | None:
        """What :meth:`previous` answers while the thread draws ``kept``'s page ``key`` (the slot's newest page), without
        a draw to ask for: ``None`` when the thread is not drawing it."""
        slot = (*kept.key[1:], key)
        with self._lock:
            return self._drawn.get(slot) if self._wanted.get(slot) is kept else None

    def _behind(self, slot: Slot, kept: Board, key: Any, draw: Callable[[], bytes]) -> None:
        """The thread's task: ``kept``'s page, unless a newer board of the slot was asked for since."""
        with self._lock:
            if self._wanted.get(slot) is not kept:
                return
        try:
            self.draw(kept, key, draw)
            self.drawn_behind += 1
        except Exception:  # the request path draws it again and answers the error as any request's
            log.exception("the leaderboard page could not be drawn")
            with self._lock:
                self._failed[slot] = kept
        finally:
            with self._lock:
                if self._wanted.get(slot) is kept:
                    del self._wanted[slot]

    def _drawn_once(self, kept: Board, key: Any, draw: Callable[[], bytes]) -> bytes:
        """``draw()``, or the page another web process drew of ``kept`` (the same board: its stamp, contest, track and phases)."""
        if self.shared is None:
            return draw()
        stamp, *slot = kept.key
        return self.shared.get(kept.key[2], stamp, ("page", *slot, key), draw)

    def _landed(self, kept: Board, key: Any, body: bytes) -> bytes:
        """Keep ``body`` as its slot's newest page (unless a newer board's landed first)."""
        slot, stamp = (*kept.key[1:], key), kept.key[0]
        etag = kept.etag(key, body)
        with self._lock:
            found = self._drawn.get(slot)
            if found is None or found.stamp <= stamp:
                self._drawn[slot] = Drawn(stamp, body, etag)
        return body
