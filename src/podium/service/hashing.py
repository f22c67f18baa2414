"""Password hashing off the request threads and outside every transaction: a bounded pool of its own.

scrypt costs 16 MiB and tens of milliseconds per hash and releases the GIL.
Run on FastAPI's request threads (or, worse, inside a write transaction) a
flood of log-ins held every other request and SQLite's write lock; here at
most ``threads`` hashes run at once and at most ``waiting`` wait, beyond which
a log-in is answered 503 at once, so a flood costs ``threads`` cores and
nothing else.
"""

from __future__ import annotations

import asyncio
import os
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from typing import TypeVar

from fastapi import HTTPException

T = TypeVar("T")


class HashPool:
    def __init__(self, threads: int = max(1, (os.cpu_count() or 2) // 2), waiting: int = 64) -> None:
        self.executor = ThreadPoolExecutor(threads, thread_name_prefix="podium-hash")
        self.limit = threads + waiting
        self.pending = 0

    async def run(self, function: Callable[..., T], *args: object) -> T:
        """``function(*args)`` on the pool (503 when the pool and its queue are full)."""
        if self.pending >= self.limit:
            raise HTTPException(503, "too many log-ins at once; try again in a few seconds", {"Retry-After": "5"})
        self.pending += 1
        try:
            return await asyncio.wrap_future(self.executor.submit(function, *args))
        finally:
            self.pending -= 1
