"""Scoring one submission's items on a Dask distributed cluster.

``podium evaluate --scheduler tcp://HOST:PORT`` (and ``podium serve`` /
``podium worker`` with the same option) hands the items of one job to the
workers of an existing Dask cluster instead of local processes. The engine
plans, merges and finalizes as always (:mod:`podium.scoring.engine`); only
:meth:`Challenge.evaluate_item` runs on the cluster, one task per batch of
consecutive items (large first, single items last), and the results are taken back in
item order. Statistics merge exactly, so the scores
are those of one local worker, bit for bit, whatever the cluster's size or the
order in which tasks finish.

What goes where:

- The job's context is scattered once to every worker (``broadcast``), not
  sent with each task.
- Items travel in the task graph, never scattered: a task whose worker dies
  is run again elsewhere from its graph, its whole batch of items (Dask retries a task whose
  workers die up to its ``allowed-failures``, 3 by default, then raises ``KilledWorker``).
- Files are read by the workers at the paths the items name: the truth and the
  submission must be at the same paths on every worker (a shared filesystem;
  an archive is unpacked under ``TMPDIR``, so give the workers and podium one
  shared ``TMPDIR``). Before the first task, every worker is asked whether it
  sees them and runs the same podium version; a worker that does not is named
  in a :class:`~podium.core.errors.UsageError`.

Dask is an optional dependency (``pip install 'podium[distributed]'``),
imported only here and only when a scheduler is given.
"""

from __future__ import annotations

import functools
import gc
import itertools
import os
import warnings
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from types import TracebackType
from typing import TYPE_CHECKING, Any

from podium._version import __version__
from podium.accel.allocator import keep_large_blocks
from podium.challenges import get
from podium.challenges.base import ItemResult
from podium.core.errors import UsageError

if TYPE_CHECKING:
    from distributed import Client

CONNECT_TIMEOUT_S = 10.0
WORKERS_TIMEOUT_S = 30.0  # how long a job waits for a first worker to join an empty cluster
GUIDED = 2  # each batch takes 1 / (GUIDED * threads) of the items left
INSTALL_HINT = "pip install 'podium[distributed]'"


def connect(address: str) -> Client:
    """A client of the scheduler at ``address``; :class:`~podium.core.errors.UsageError` if there is none."""
    try:
        from distributed import Client
    except ImportError:
        raise UsageError(f"--scheduler needs Dask distributed: {INSTALL_HINT}") from None
    with _no_collection_inside():
        try:
            return Client(address, timeout=CONNECT_TIMEOUT_S, set_as_default=False)
        except (OSError, TimeoutError, ValueError) as exc:
            raise UsageError(f"cannot reach the Dask scheduler at {address}: {exc}") from None


@contextmanager
def _no_collection_inside() -> Iterator[None]:
    """Garbage collected before, and not during: starting a client holds a lock shared by every
    client's loop runner (``LoopRunner._lock``), and an older client finalized by a collection
    inside that start would wait on the same lock in its ``__del__`` (a hang, seen in the test
    suite; dask/distributed#7770 on clients that only the collector finalizes)."""
    gc.collect()
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()


def check_reachable(address: str) -> None:
    """Fail at once (a service's start) when no scheduler answers at ``address``, rather than at every job."""
    connect(address).close()


class Cluster:
    """A connection to a Dask scheduler for one job: :meth:`map` scores its items there."""

    def __init__(self, address: str, challenge_id: str, context: Any, paths: tuple[Path, ...] = ()) -> None:
        self.client = connect(address)
        try:
            self._check_workers(address, paths)
            self.challenge_id = challenge_id
            self.submission = str(paths[1]) if len(paths) > 1 else ""
            self.context = self.client.scatter(context, broadcast=True, hash=False)
        except BaseException:
            self.client.close()
            raise

    def _check_workers(self, address: str, paths: tuple[Path, ...]) -> None:
        """Wait for a worker; refuse workers that run another podium or do not see ``paths``."""
        try:
            self.client.wait_for_workers(1, timeout=WORKERS_TIMEOUT_S)
        except TimeoutError:
            raise UsageError(
                f"no Dask worker joined the scheduler at {address} within {WORKERS_TIMEOUT_S:g} s"
            ) from None
        answers = self.client.run(_worker_view, [str(p) for p in paths])
        for worker, (version, missing) in sorted(answers.items()):
            if version != __version__:
                raise UsageError(
                    f"Dask worker {worker} runs podium {version}, this process {__version__}: scores could differ"
                )
            if missing:
                raise UsageError(
                    f"Dask worker {worker} does not see {missing[0]}: the truth and the submission must be at the same paths on every worker"
                )

    def map(self, items: list[Any], progress: Callable[[int, int], None] | None = None) -> Iterator[ItemResult[Any]]:
        """The items' results in item order; consecutive items go in batches (:func:`batch_sizes`), one task each."""
        threads = sum(worker.get("nthreads", 1) for worker in self.client.scheduler_info()["workers"].values())
        ends = list(itertools.accumulate(batch_sizes(len(items), threads)))
        batches = [items[start:end] for start, end in zip([0, *ends], ends)]
        with warnings.catch_warnings():  # items travel in the graph on purpose (see the module docstring)
            warnings.filterwarnings("ignore", message="Sending large graph", category=UserWarning)
            futures = self.client.map(
                _evaluate_items,
                batches,
                challenge_id=self.challenge_id,
                context=self.context,
                submission=self.submission,
                pure=False,
            )
        try:
            done = 0
            for future in futures:
                for result in future.result():
                    done += 1
                    yield result
                    if progress:
                        progress(done, len(items))
        finally:
            self.client.cancel(futures)

    def __enter__(self) -> Cluster:
        return self

    def __exit__(
        self, kind: type[BaseException] | None, value: BaseException | None, trace: TracebackType | None
    ) -> None:
        try:
            self.client.cancel([self.context])
        finally:
            self.client.close()  # never left to the garbage collector (see _no_collection_inside)


def _worker_view(paths: list[str]) -> tuple[str, list[str]]:
    """On a worker: its podium version, and which of ``paths`` it cannot see."""
    return __version__, [p for p in paths if not os.path.exists(p)]


@functools.cache
def _prepare_worker() -> None:
    """Once per worker process: the allocator set as in podium's own workers."""
    keep_large_blocks()


def batch_sizes(items: int, threads: int) -> list[int]:
    """Consecutive batches of items, one task each, largest first (guided self-scheduling): each
    batch takes ``1 / (GUIDED * threads)`` of the items left, at least one. Large batches keep
    Dask's cost per task (a few milliseconds through the scheduler) small beside their items'
    (a GlaS image: 7 ms); the small ones at the end keep the workers finishing together.

    >>> batch_sizes(50, 2)
    [13, 10, 7, 5, 4, 3, 2, 2, 1, 1, 1, 1]
    >>> len(batch_sizes(200, 2)), batch_sizes(3, 8), batch_sizes(0, 2)
    (16, [1, 1, 1], [])
    """
    sizes: list[int] = []
    left = items
    while left:
        sizes.append(max(1, -(-left // (GUIDED * max(threads, 1)))))
        left -= sizes[-1]
    return sizes


def _evaluate_items(items: list[Any], *, challenge_id: str, context: Any, submission: str) -> list[ItemResult[Any]]:
    """On a worker: the results of a batch of items, with the files of ``submission`` each read."""
    _prepare_worker()
    challenge = get(challenge_id)
    return [challenge.evaluate_reading(context, item, submission) for item in items]
