"""The upload checks in processes beside the web process, the answer still in the upload's response.

The checks of a submission of files (reading and measuring every file: for
GlaS, decoding each image and matching its objects) take about half of the
web process's CPU per upload, and the web process runs Python on one core at
a time. :class:`CheckPool` runs them in a few processes of a forkserver that
imported the challenge's modules (and, for GlaS, loaded its compiled kernels)
once; the request's thread waits for the result, so the participant still
gets every problem in the upload's answer. A check process that dies (killed,
out of memory) ends that upload with a 503 and nothing recorded; the next
upload starts new processes.
"""

from __future__ import annotations

import multiprocessing
import os
import threading
from collections.abc import Callable
from concurrent.futures import ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from typing import Any, TypeVar

from podium.challenges import get
from podium.service.intake import Refused

T = TypeVar("T")
MOST_PROCESSES = 4
STOPPED = "the checks of this upload stopped before they ended (a check process died); nothing was recorded and no quota used: send it again"


def check_processes(workers: int, web: int = 1) -> int:
    """How many check processes ``podium serve`` runs beside ``workers`` scoring workers and ``web`` web processes: one per core that none of them uses, at most :data:`MOST_PROCESSES` (in all: each web process runs its own ÷ ``web``).

    On cores they would share, the checks cost more in processes than in the web process (GlaS demo on
    2 cores with 2 workers: 55 ms of CPU per upload against 39, and 932 uploads a minute against
    1,549; ``benchmarks/board_speed.py``).
    """
    return max(0, min(MOST_PROCESSES, (os.cpu_count() or 1) - web - workers)) // web


class CheckPool:
    """``processes`` check processes for the contest's challenge ``challenge_id``, started at the first upload."""

    def __init__(self, challenge_id: str, processes: int) -> None:
        self.challenge_id = challenge_id
        self.processes = processes
        self._pool: ProcessPoolExecutor | None = None
        self._lock = threading.Lock()

    def __call__(self, function: Callable[..., T], *args: Any, **kwargs: Any) -> T:
        """``function(*args, **kwargs)`` in a check process (:class:`Refused` 503 if that process dies)."""
        pool = self._started()
        try:
            return pool.submit(function, *args, **kwargs).result()
        except BrokenProcessPool:
            with self._lock:
                if self._pool is pool:
                    self._pool = None
            pool.shutdown(wait=False, cancel_futures=True)
            raise Refused(503, STOPPED) from None

    def _started(self) -> ProcessPoolExecutor:
        with self._lock:
            if self._pool is None:
                challenge = get(self.challenge_id)
                context = multiprocessing.get_context("forkserver")  # the web process runs threads: never fork it
                context.set_forkserver_preload(
                    ["podium.scoring.engine", type(challenge).__module__, *challenge.preload]
                )
                self._pool = ProcessPoolExecutor(self.processes, mp_context=context)
            return self._pool

    def shutdown(self) -> None:
        with self._lock:
            if self._pool is not None:
                self._pool.shutdown(wait=True, cancel_futures=True)
                self._pool = None
