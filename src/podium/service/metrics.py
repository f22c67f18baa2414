"""``GET /metrics`` (Prometheus' text format, by ``prometheus-client``) and what ``/healthz`` reports.

What the database holds is read from it at each scrape, so the figures are
right whichever process (the web app, a worker on another machine) changed
them: the jobs queued and running and the age of the oldest queued one, the
submissions by status, the scoring time of each submission's newest run
(a histogram, by challenge and outcome), and each worker's newest heartbeat
(:mod:`podium.service.heartbeats`). Events that only the web process sees are
counters (they restart at zero with ``podium serve``, as Prometheus
expects): the requests each web process answered, uploads refused before
they are recorded, by reason, and log-ins refused, by reason, both told
from the answer's HTTP status by :class:`Watch`. With several web processes
(``--web-processes``) each one's counters are summed at each scrape
(prometheus-client's multiprocess mode: ``PROMETHEUS_MULTIPROC_DIR``).

``/metrics`` answers an organizer's API token only (``Authorization: Bearer``,
Prometheus' ``authorization.credentials_file``): it names the workers' hosts.
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Iterator
from datetime import datetime
from pathlib import Path
from typing import Any

from prometheus_client import CollectorRegistry, Counter
from prometheus_client.core import GaugeMetricFamily, HistogramMetricFamily, Metric
from prometheus_client.multiprocess import MultiProcessCollector
from prometheus_client.registry import Collector
from sqlalchemy import Connection, Engine, Float, case, cast, extract, func, select
from sqlalchemy.sql import ColumnElement
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from podium.service.board_warm import WARM
from podium.service.heartbeats import ALIVE_S, beats
from podium.service.server import WEB_INDEX
from podium.service.statuses import FAILED, JOB_QUEUED, JOB_RUNNING, REJECTED, SCORED, STATUSES, Clock
from podium.service.tables import jobs, submissions
from podium.service.urls import unprefixed_path

SCORING_BUCKETS_S = (1.0, 5.0, 15.0, 60.0, 300.0, 1800.0, 3600.0, 4 * 3600.0)
RAN = (SCORED, REJECTED, FAILED)  # outcomes of a worker's run
LOW_DISK_BYTES = 1 << 30
UPLOAD_REFUSALS = {
    401: "no_token",
    403: "not_a_team",
    409: "no_open_phase",
    413: "too_large",
    422: "empty_or_malformed",
    429: "quota",
}
LOGIN_REFUSALS = {401: "wrong_password", 422: "malformed", 429: "too_many_attempts"}
LOGINS = ("/api/tokens", "/login")
UPLOADS = ("/api/submissions", "/submissions/upload")


def _seconds(connection: Connection, start: Any, end: Any) -> ColumnElement[Any]:
    """``end - start`` in seconds, in the database's own arithmetic."""
    if connection.dialect.name == "sqlite":
        return (func.julianday(end) - func.julianday(start)) * 86400.0
    return extract("epoch", end - start)


def _job_counts(connection: Connection) -> dict[str, int]:
    query = select(jobs.c.state, func.count()).where(jobs.c.state.in_((JOB_QUEUED, JOB_RUNNING))).group_by(jobs.c.state)
    return dict(connection.execute(query).all())


class DatabaseCollector(Collector):
    """The figures the database holds, read at each scrape."""

    def __init__(self, engine: Engine, challenge: Any, clock: Clock) -> None:
        self.engine = engine
        self.challenge = challenge  # a callable: the served contest's challenge id, read at each scrape
        self.clock = clock

    def collect(self) -> Iterator[Metric]:
        now = self.clock()
        with self.engine.connect() as connection, connection.begin():
            yield from self._queue(connection, now)
            by_status: dict[str, int] = dict(
                connection.execute(select(submissions.c.status, func.count()).group_by(submissions.c.status)).all()
            )
            family = GaugeMetricFamily("podium_submissions", "Submissions by status", labels=["status"])
            for status in STATUSES:
                family.add_metric([status], by_status.get(status, 0))
            yield family
            yield from self._scoring(connection, self.challenge())
            heartbeat = GaugeMetricFamily(
                "podium_worker_heartbeat_age_seconds", "Seconds since each worker's newest heartbeat", labels=["worker"]
            )
            for found in beats(connection):
                heartbeat.add_metric([found.worker], (now - found.at).total_seconds())
            yield heartbeat

    def _queue(self, connection: Connection, now: datetime) -> Iterator[Metric]:
        counts = _job_counts(connection)
        family = GaugeMetricFamily(
            "podium_queue_jobs", "Scoring jobs waiting (queued) or being scored (running)", labels=["state"]
        )
        for job_state in (JOB_QUEUED, JOB_RUNNING):
            family.add_metric([job_state], counts.get(job_state, 0))
        yield family
        oldest = connection.execute(
            select(func.min(jobs.c.created)).where(jobs.c.state == JOB_QUEUED)
        ).scalar()  # an aware UTC time
        age = 0.0 if oldest is None else max(0.0, (now - oldest).total_seconds())
        yield GaugeMetricFamily(
            "podium_queue_oldest_job_age_seconds", "Seconds the oldest queued job has waited (0: none waits)", value=age
        )

    def _scoring(self, connection: Connection, challenge: str) -> Iterator[Metric]:
        took = cast(_seconds(connection, submissions.c.started, submissions.c.finished), Float)
        columns = [func.count(), func.coalesce(func.sum(took), 0.0)] + [
            func.sum(case((took <= bound, 1), else_=0)) for bound in SCORING_BUCKETS_S
        ]
        query = (
            select(submissions.c.status, *columns)
            .where(
                submissions.c.status.in_(RAN), submissions.c.started.is_not(None), submissions.c.finished.is_not(None)
            )
            .group_by(submissions.c.status)
        )
        found = {row[0]: row[1:] for row in connection.execute(query)}
        family = HistogramMetricFamily(
            "podium_scoring_seconds",
            "Seconds from a worker's claim to the outcome, of each submission's newest run",
            labels=["challenge", "outcome"],
        )
        for outcome in RAN:
            count, total, *under = found.get(outcome, (0, 0.0, *[0] * len(SCORING_BUCKETS_S)))
            buckets = [(f"{bound:g}", int(n or 0)) for bound, n in zip(SCORING_BUCKETS_S, under, strict=True)] + [
                ("+Inf", int(count))
            ]
            family.add_metric([challenge, outcome], buckets, float(total))
        yield family


class Watch:
    """ASGI middleware: counts the uploads and log-ins the app refuses, by the answer's status.

    An upload answered 422 is refused when its answer is an error (an empty
    body, a malformed query), not when it is a recorded submission that its
    checks rejected (the answer then starts with its ``id``; those are counted
    by status in ``podium_submissions``).
    """

    def __init__(self, app: ASGIApp, uploads: Counter, logins: Counter, requests: Counter) -> None:
        self.app = app
        self.uploads = uploads
        self.logins = logins
        self.requests = requests.labels(os.environ.get(WEB_INDEX, "0"))

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http" and WARM not in scope.get("extensions", {}):  # not the boards drawn at start-up
            self.requests.inc()
        path = unprefixed_path(scope)
        if scope["type"] != "http" or scope.get("method") != "POST" or path not in UPLOADS + LOGINS:
            await self.app(scope, receive, send)
            return
        refusals, counter = (UPLOAD_REFUSALS, self.uploads) if path in UPLOADS else (LOGIN_REFUSALS, self.logins)
        status = 0

        async def watched(message: Message) -> None:
            nonlocal status
            if message["type"] == "http.response.start":
                status = int(message["status"])
                if status in refusals and not (status == 422 and path in UPLOADS):
                    counter.labels(refusals[status]).inc()
            elif message["type"] == "http.response.body" and status == 422 and path in UPLOADS:
                if not message.get("body", b"").startswith(b'{"id":'):
                    counter.labels(refusals[status]).inc()
                status = 0  # counted once, on the first part of the body
            await send(message)

        await self.app(scope, receive, watched)


def registry(engine: Engine, challenge: Any, clock: Clock) -> tuple[CollectorRegistry, Counter, Counter, Counter]:
    """The app's own registry (not the process-wide one: a process may serve several apps); its three counters.

    In multiprocess mode the counters are read back, summed over the web
    processes, from their files, not from this process's memory.
    """
    found = CollectorRegistry(auto_describe=True)
    found.register(DatabaseCollector(engine, challenge, clock))
    shared = bool(os.environ.get("PROMETHEUS_MULTIPROC_DIR"))
    if shared:
        MultiProcessCollector(found)
    own = None if shared else found
    uploads = Counter(
        "podium_uploads_refused",
        "Uploads refused before they were recorded, by reason (a rejected submission is recorded)",
        ["reason"],
        registry=own,
    )
    logins = Counter("podium_logins_refused", "Log-ins refused, by reason", ["reason"], registry=own)
    requests = Counter(
        "podium_web_requests", "HTTP requests answered, by web process (0 to N-1)", ["process"], registry=own
    )
    return found, uploads, logins, requests


def health(engine: Engine, data: Path, clock: Clock) -> tuple[bool, dict[str, Any]]:
    """Whether the database answers; the data folder's free disk; the workers that are alive. Names nothing of the server."""
    now = clock()
    try:
        with engine.connect() as connection, connection.begin():
            counts = _job_counts(connection)
            ages = [(now - found.at).total_seconds() for found in beats(connection)]
    except Exception as exc:  # the database is down: that is what this reports
        return False, {"database": f"unreachable: {type(exc).__name__}"}
    free = shutil.disk_usage(
        next(p for p in (data, *data.parents) if p.exists())
    ).free  # the folder is made at the first upload
    alive = [age for age in ages if age <= ALIVE_S]
    return True, {
        "queued": counts.get(JOB_QUEUED, 0),
        "running": counts.get(JOB_RUNNING, 0),
        "database": "ok",
        "disk": {"free_bytes": free, "low": free < LOW_DISK_BYTES},
        "workers": {"alive": len(alive), "newest_heartbeat_age_s": round(min(alive), 3) if alive else None},
    }
