"""Workers' heartbeats: each worker writes the time every ``BEAT_S`` seconds, busy or idle, so that ``/metrics`` and ``/healthz`` see it.

A heartbeat is a row of the ``settings`` table (``heartbeat:`` and a hash of
the worker's name as its key; the name and the time, JSON, as its value), so
it needs no schema change and is seen by every process that reads the
database. A worker that stops removes its row; one killed leaves it, and its
age grows: that is the signal. Rows older than ``FORGET_S`` are removed by the
next worker that starts.
"""

from __future__ import annotations

import hashlib
import json
import threading
from dataclasses import dataclass
from datetime import datetime, timedelta

from sqlalchemy import Connection, Engine, delete, select

from podium.service import state
from podium.service.database import writing
from podium.service.statuses import Clock
from podium.service.tables import settings

PREFIX = "heartbeat:"
BEAT_S = 10.0
ALIVE_S = 3 * BEAT_S  # a worker whose last heartbeat is older is taken for dead
FORGET_S = 86_400.0


@dataclass(frozen=True)
class Beat:
    worker: str
    at: datetime


def _key(worker: str) -> str:
    return PREFIX + hashlib.sha256(worker.encode()).hexdigest()[:32]


def beat(engine: Engine, worker: str, now: datetime) -> None:
    with writing(engine) as connection:
        state.put(connection, _key(worker), json.dumps({"worker": worker, "at": now.isoformat()}))


def forget(engine: Engine, worker: str | None, now: datetime) -> None:
    """Remove ``worker``'s heartbeat (it stops), and every one older than ``FORGET_S``."""
    with writing(engine) as connection:
        stale = [b for b in beats(connection) if b.worker == worker or now - b.at > timedelta(seconds=FORGET_S)]
        if stale:
            connection.execute(delete(settings).where(settings.c.key.in_([_key(b.worker) for b in stale])))


def clear(connection: Connection) -> None:
    """Remove every heartbeat: a restored database's are those of the workers of the server it was backed up from."""
    connection.execute(delete(settings).where(settings.c.key.startswith(PREFIX, autoescape=True)))


def beats(connection: Connection) -> list[Beat]:
    """Every worker's newest heartbeat."""
    found = []
    for value in connection.execute(
        select(settings.c.value).where(settings.c.key.startswith(PREFIX, autoescape=True))
    ).scalars():
        item = json.loads(value)
        found.append(Beat(item["worker"], datetime.fromisoformat(item["at"])))
    return sorted(found, key=lambda b: b.worker)


class Heartbeat(threading.Thread):
    """Writes ``worker``'s heartbeat every ``BEAT_S`` seconds until stopped, then removes it."""

    def __init__(self, engine: Engine, worker: str, clock: Clock) -> None:
        super().__init__(daemon=True, name="podium-heartbeat")
        self.engine = engine
        self.worker = worker
        self.clock = clock
        self.stopped = threading.Event()

    def run(self) -> None:
        forget(self.engine, None, self.clock())
        while True:
            try:
                beat(self.engine, self.worker, self.clock())
            except Exception:  # a database hiccup: the next beat tries again
                pass
            if self.stopped.wait(BEAT_S):
                return

    def stop(self) -> None:
        self.stopped.set()
        self.join()
        forget(self.engine, self.worker, self.clock())
