"""Downloads being sent at once: a few per caller, a bound in all, so that nobody holds every connection or thread.

A download (a submission's file, result or logs; an organizer's archive,
zipped as it streams) holds a slot from its answer until its last byte is
sent or its client goes away (:meth:`DownloadSlots.answer`). A caller (a user,
or a team's token made by a command) has at most ``per_caller`` at once; the
process at most ``total``. Beyond either, the answer is 429 with
``Retry-After``, at once: a client that opens a hundred downloads and reads
none of them holds two slots, not a hundred. Counted in each web process
(``--web-processes N`` allows N times ``total``).
"""

from __future__ import annotations

import threading
from collections import Counter
from collections.abc import Callable, Hashable

from fastapi import HTTPException
from starlette.responses import Response
from starlette.types import Receive, Scope, Send

from podium.service.accounts import Caller

RETRY_AFTER_S = 10


class DownloadSlots:
    """At most ``per_caller`` downloads of one caller and ``total`` in all being sent at once (in this process)."""

    def __init__(self, per_caller: int = 2, total: int = 16) -> None:
        self.per_caller, self.total = per_caller, total
        self.busy: Counter[Hashable] = Counter()
        self.lock = threading.Lock()  # taken on the handlers' threads, given back on the event loop

    def answer(self, who: Caller, respond: Callable[[], Response]) -> Response:
        """``respond()``'s answer, holding one of ``who``'s slots until it is sent (429 with ``Retry-After`` when none is free)."""
        key = ("user", who.user_id) if who.user_id is not None else ("team", who.team_id, who.organizer)
        with self.lock:
            if self.busy[key] >= self.per_caller:
                raise self._full(f"you are already downloading {self.per_caller} files; wait for one to finish")
            if self.busy.total() >= self.total:
                raise self._full(f"the server is sending {self.total} downloads already; try again shortly")
            self.busy[key] += 1
        try:
            return _Held(respond(), lambda: self._give_back(key))
        except BaseException:
            self._give_back(key)
            raise

    def _give_back(self, key: Hashable) -> None:
        with self.lock:
            self.busy[key] -= 1
            if self.busy[key] <= 0:
                del self.busy[key]

    @staticmethod
    def _full(message: str) -> HTTPException:
        return HTTPException(429, f"{message} (retry after {RETRY_AFTER_S} s)", {"Retry-After": str(RETRY_AFTER_S)})


class _Held(Response):
    """``inner`` sent as it is; ``release`` called once it is sent, failed, or its client went away."""

    def __init__(self, inner: Response, release: Callable[[], None]) -> None:
        self.inner, self.release = inner, release
        self.status_code, self.raw_headers, self.background = inner.status_code, inner.raw_headers, None

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        try:
            await self.inner(scope, receive, send)
        finally:
            self.release()
        if self.background is not None:  # FastAPI's own background tasks, after the body as usual
            await self.background()
