"""The organizer's dashboard in figures: submissions per day, active teams, the queue, the workers, failures by cause.

Each figure is one indexed query over the contest's tracks (``tracks``: the
contest's own, or its ``[[track]]`` ids), so that it stays fast at any number
of submissions: the submissions by the time they were sent
(``ix_submissions_track_created``) or ended (``ix_submissions_track_finished``), the jobs
by state (``ix_jobs_state_id``). Waits and run times are those of the
submissions that ended in the last hour: the wait from the job's creation to
the start of its run, the run from its start to its end.

A submission that did not score is counted under its cause
(:func:`cause`): its checks (``rejected``: the files, or an upload without an
entry point), the time, memory or disk limit of a program, a crash (any other
end of a program: an exit code, no output), or podium's own error (it gave
up after its retries; never the team's fault).
"""

from __future__ import annotations

import statistics
from collections import Counter
from datetime import datetime, timedelta
from typing import Any

from sqlalchemy import Connection, func, select

from podium.service import heartbeats, scoped
from podium.service.statuses import ERROR, FAILED, JOB_QUEUED, JOB_RUNNING, REJECTED
from podium.service.tables import jobs, submissions, teams

DAYS = 30  # the chart's days, up to today
RECENT = 50  # the newest submissions the dashboard lists
CAUSES = {  # a cause -> what the dashboard calls it
    "checks": "rejected by the checks",
    "time": "time limit",
    "memory": "memory limit",
    "disk": "disk limit",
    "crash": "crashed or wrote nothing",
    "podium": "podium's own error",
}
_LIMITS = (  # words of podium.scoring.run's reasons for a program stopped at a limit -> the cause
    ("at the time limit", "time"),
    ("at the memory limit", "memory"),
    ("the disk limit", "disk"),
)


def cause(status: str, reason: str | None) -> str:
    """The cause of a submission that did not score (a key of :data:`CAUSES`), from its status and reason."""
    if status == ERROR:
        return "podium"
    if status == REJECTED:
        return "checks"
    text = reason or ""
    return next((kind for words, kind in _LIMITS if words in text), "crash")


def figures(connection: Connection, contest: str, tracks: list[str], now: datetime) -> dict[str, Any]:
    """Every figure of the dashboard, for the submissions of ``contest``'s teams to ``tracks``, as of ``now``."""
    on_tracks = scoped.on_tracks(contest, tracks)
    return {
        "now": now.isoformat(),
        "per_day": per_day(connection, on_tracks, now),
        "active_teams": {
            "day": _active(connection, on_tracks, now - timedelta(days=1)),
            "week": _active(connection, on_tracks, now - timedelta(days=7)),
        },
        **live_figures(connection, tracks, now),
    }


def live_figures(connection: Connection, tracks: list[str], now: datetime) -> dict[str, Any]:
    """The figures that move by the second, which the dashboard's page reads again every few seconds: the queue, the workers, the failures."""
    on_tracks = submissions.c.track.in_(tracks)
    return {
        "queue": queue_figures(connection, on_tracks, now),
        "workers": workers(connection, now, on_tracks),
        "failures": failures(connection, on_tracks),
    }


def per_day(connection: Connection, on_tracks: Any, now: datetime) -> list[dict[str, Any]]:
    """Submissions sent each UTC day of the last :data:`DAYS` days, today last (days without any included).

    The days are counted by the database (``date()`` of the UTC time): 30 rows come back, not one per submission.
    """
    first = (now - timedelta(days=DAYS - 1)).date()
    start = datetime(first.year, first.month, first.day, tzinfo=now.tzinfo)
    created = submissions.c.created
    day = func.date(created if connection.dialect.name == "sqlite" else func.timezone("UTC", created))
    counts = {
        str(found): int(count)
        for found, count in connection.execute(
            select(day, func.count()).where(on_tracks, created >= start).group_by(day)
        )
    }
    days = [(first + timedelta(days=n)).isoformat() for n in range(DAYS)]
    return [{"day": day, "submissions": counts.get(day, 0)} for day in days]


def _seconds(connection: Connection, later: Any, earlier: Any) -> Any:
    """``later - earlier`` in seconds, computed by the database (no time is decoded row by row)."""
    if connection.dialect.name == "sqlite":
        return (func.julianday(later) - func.julianday(earlier)) * 86_400.0
    return func.extract("epoch", later - earlier)


def _active(connection: Connection, on_tracks: Any, since: datetime) -> int:
    query = select(func.count(func.distinct(submissions.c.team_id))).where(on_tracks, submissions.c.created >= since)
    return int(connection.execute(query).scalar() or 0)


def queue_figures(connection: Connection, on_tracks: Any, now: datetime) -> dict[str, Any]:
    """Jobs waiting and running, the oldest wait, and the median wait and run time of the last hour (seconds)."""
    waiting = (
        select(func.count(), func.min(jobs.c.created))
        .select_from(jobs.join(submissions))
        .where(jobs.c.state == JOB_QUEUED, on_tracks)
    )
    length, oldest = connection.execute(waiting).one()
    running = select(func.count()).select_from(jobs.join(submissions)).where(jobs.c.state == JOB_RUNNING, on_tracks)
    ended = connection.execute(
        select(
            submissions.c.id,
            jobs.c.id.label("job"),
            _seconds(connection, submissions.c.started, jobs.c.created).label("wait"),
            _seconds(connection, submissions.c.finished, submissions.c.started).label("run"),
        )
        .join(jobs)
        .where(
            submissions.c.finished >= now - timedelta(hours=1),
            submissions.c.started.is_not(None),
            jobs.c.created <= submissions.c.started,
            on_tracks,
        )
    ).all()
    last_job: dict[int, Any] = {}
    for row in ended:  # the job that ran last: the newest created before the run started (the smallest wait)
        if row.id not in last_job or row.wait < last_job[row.id].wait:
            last_job[row.id] = row
    waits = [round(float(r.wait), 3) for r in last_job.values()]  # to the millisecond: julianday's float is not exact
    runs = [round(float(r.run), 3) for r in last_job.values()]
    return {
        "queued": int(length),
        "running": int(connection.execute(running).scalar() or 0),
        "oldest_wait_s": None if oldest is None else max(0.0, (now - oldest).total_seconds()),
        "ended_last_hour": len(last_job),
        "median_wait_s": statistics.median(waits) if waits else None,
        "median_run_s": statistics.median(runs) if runs else None,
    }


def workers(connection: Connection, now: datetime, on_tracks: Any) -> list[dict[str, Any]]:
    """Each worker that wrote a heartbeat: its host, the age of its last beat, whether it is alive, the job it runs
    (one of the submissions ``on_tracks`` names: a worker scoring another contest's is shown busy, not with what)."""
    busy = {
        row.worker: row
        for row in connection.execute(
            select(jobs.c.worker, jobs.c.id, jobs.c.submission_id, on_tracks.label("ours"))
            .join(submissions)
            .where(jobs.c.state == JOB_RUNNING)
        )
    }
    found = []
    for beat in heartbeats.beats(connection):
        age = max(0.0, (now - beat.at).total_seconds())
        job = busy.get(beat.worker)
        found.append(
            {
                "worker": beat.worker,
                "host": beat.worker.split(":")[0],
                "last_beat": beat.at.isoformat(),
                "age_s": age,
                "alive": age <= heartbeats.ALIVE_S,
                "job": None if job is None or not job.ours else job.id,
                "submission": None if job is None or not job.ours else job.submission_id,
            }
        )
    return found


def failures(connection: Connection, on_tracks: Any) -> list[dict[str, Any]]:
    """Submissions that did not score, by status and cause (each cause of :data:`CAUSES` that occurs), most first."""
    counts: Counter[tuple[str, str]] = Counter()
    query = (
        select(submissions.c.status, submissions.c.reason, func.count())
        .where(submissions.c.status.in_((REJECTED, FAILED, ERROR)), on_tracks)
        .group_by(submissions.c.status, submissions.c.reason)
    )
    for status, reason, count in connection.execute(query):
        counts[status, cause(status, reason)] += count
    return [
        {"status": status, "cause": kind, "label": CAUSES[kind], "count": count}
        for (status, kind), count in sorted(counts.items(), key=lambda item: (-item[1], item[0]))
    ]


def recent(connection: Connection, contest: str, tracks: list[str], limit: int = RECENT) -> list[Any]:
    """The newest submissions of ``contest``'s teams to ``tracks`` (id, team, track, file, sent, status, reason), newest first."""
    query = (
        select(
            submissions.c.id,
            teams.c.name.label("team"),
            submissions.c.track,
            submissions.c.filename,
            submissions.c.created,
            submissions.c.status,
            submissions.c.reason,
        )
        .join(teams)
        .where(submissions.c.track.in_(tracks), teams.c.contest == contest)
        .order_by(submissions.c.created.desc(), submissions.c.id.desc())  # ix_submissions_track_created, read backwards
        .limit(limit)
    )
    return list(connection.execute(query))
