"""The durable queue: a jobs table with a lease and a heartbeat.

A worker claims the oldest job that is queued, or running with a lease that
has ended (its worker died), in one write transaction: ``SELECT ... FOR UPDATE
SKIP LOCKED`` on PostgreSQL, ``BEGIN IMMEDIATE`` on SQLite, so no two workers
claim one job. It renews the lease while it scores (the heartbeat). It
finishes the job only if it still holds the lease, and the result is written
under a unique (submission, round) key in the same transaction: a job taken
over after a lost lease completes once, never twice. A failure that is
podium's own is retried ``MAX_ATTEMPTS`` times, then the submission ends in
``error``, which no quota counts.

Lease times come from the workers' clocks, which must agree to well under
``LEASE_S`` (NTP does).
"""

from __future__ import annotations

import secrets
from dataclasses import dataclass
from datetime import datetime, timedelta

from sqlalchemy import ColumnElement, Connection, Engine, and_, insert, or_, select, update

from podium.service import mail
from podium.service.database import writing
from podium.service.scoring import Outcome
from podium.service.statuses import ERROR, JOB_DONE, JOB_GAVE_UP, JOB_QUEUED, JOB_RUNNING, QUEUED, RUNNING
from podium.service.tables import jobs, results, submissions

LEASE_S = 60.0
MAX_ATTEMPTS = 3


@dataclass(frozen=True)
class Claim:
    job_id: int
    submission_id: int
    round: int
    lease: str
    attempt: int


def enqueue(connection: Connection, submission_id: int, round_: int, now: datetime, *, notify: bool = False) -> None:
    """Queue the scoring of a submission in a round (nothing if that round's job exists already).

    ``notify``: its result is mailed to the team even if it is not the first (an organizer's re-run).
    """
    exists = connection.execute(
        select(jobs.c.id).where(jobs.c.submission_id == submission_id, jobs.c.round == round_)
    ).first()
    if exists is None:
        values = {"submission_id": submission_id, "round": round_, "state": JOB_QUEUED, "attempts": 0}
        connection.execute(insert(jobs).values(**values, created=now, notify=notify))
    connection.execute(
        update(submissions).where(submissions.c.id == submission_id).values(status=QUEUED, started=None, finished=None)
    )


NEW_JOB = insert(jobs).values(state=JOB_QUEUED, attempts=0, notify=False)


def enqueue_new(connection: Connection, submission_id: int, round_: int, now: datetime) -> None:
    """Queue the first scoring of a submission just inserted as queued: one statement (no job of it exists yet, and its
    row says queued already), where :func:`enqueue` looks for the job and sets the row."""
    connection.execute(NEW_JOB, {"submission_id": submission_id, "round": round_, "created": now})


def claim(engine: Engine, worker: str, now: datetime, lease_s: float = LEASE_S) -> Claim | None:
    """Take the oldest free job; ``None`` when there is none."""
    free = or_(jobs.c.state == JOB_QUEUED, and_(jobs.c.state == JOB_RUNNING, jobs.c.lease_until < now))
    while True:
        with writing(engine) as connection:
            row = connection.execute(
                select(jobs).where(free).order_by(jobs.c.id).limit(1).with_for_update(skip_locked=True)
            ).first()
            if row is None:
                return None
            if row.attempts >= MAX_ATTEMPTS:  # its workers died on it every time: give up, uncharged
                _give_up(
                    connection,
                    row.id,
                    row.submission_id,
                    row.error or f"podium stopped {row.attempts} times while scoring it",
                    now,
                )
                continue
            lease = secrets.token_hex(16)
            connection.execute(
                update(jobs)
                .where(jobs.c.id == row.id)
                .values(
                    state=JOB_RUNNING,
                    lease=lease,
                    lease_until=now + timedelta(seconds=lease_s),
                    worker=worker[:128],
                    attempts=row.attempts + 1,
                )
            )
            connection.execute(
                update(submissions)
                .where(submissions.c.id == row.submission_id)
                .values(status=RUNNING, started=now, finished=None)
            )
            return Claim(row.id, row.submission_id, row.round, lease, row.attempts + 1)


def _holds(claim: Claim) -> ColumnElement[bool]:
    return and_(jobs.c.id == claim.job_id, jobs.c.lease == claim.lease, jobs.c.state == JOB_RUNNING)


def heartbeat(engine: Engine, claim: Claim, now: datetime, lease_s: float = LEASE_S) -> bool:
    """Renew the lease; ``False`` if it was lost (another worker took the job)."""
    with writing(engine) as connection:
        done = connection.execute(
            update(jobs).where(_holds(claim)).values(lease_until=now + timedelta(seconds=lease_s))
        )
        return done.rowcount == 1


def finish(engine: Engine, claim: Claim, outcome: Outcome, now: datetime) -> bool:
    """Keep the result and end the job, if the lease is still held; ``False`` (nothing written) otherwise."""
    with writing(engine) as connection:
        held = connection.execute(select(jobs.c.id, jobs.c.notify).where(_holds(claim)).with_for_update()).first()
        if held is None:
            return False
        kept = connection.execute(
            select(results.c.id).where(results.c.submission_id == claim.submission_id, results.c.round == claim.round)
        ).first()
        first = _unscored(connection, claim.submission_id) or held.notify
        if kept is None:
            connection.execute(
                insert(results).values(
                    submission_id=claim.submission_id,
                    round=claim.round,
                    status=outcome.document["status"],
                    public_scores=outcome.public_scores,
                    private_scores=outcome.private_scores,
                    document=outcome.document,
                    public_document=outcome.public_document,
                    created=now,
                )
            )
        connection.execute(
            update(jobs)
            .where(jobs.c.id == claim.job_id)
            .values(state=JOB_DONE, lease=None, lease_until=None, error=None)
        )
        connection.execute(
            update(submissions)
            .where(submissions.c.id == claim.submission_id)
            .values(status=outcome.status, reason=outcome.reason, problems=outcome.problems, finished=now)
        )
        if (
            first
        ):  # a rescore's results are not mailed (every team would get one message per submission); a re-run's are
            mail.submission_done(
                connection, claim.submission_id, outcome.status, outcome.reason, outcome.public_scores, now
            )
        return True


def retry(engine: Engine, claim: Claim, error: str, now: datetime) -> None:
    """Podium's own failure: queue the job again, or after ``MAX_ATTEMPTS`` end the submission in ``error``."""
    with writing(engine) as connection:
        if connection.execute(select(jobs.c.id).where(_holds(claim)).with_for_update()).first() is None:
            return
        if claim.attempt >= MAX_ATTEMPTS:
            first = _unscored(connection, claim.submission_id)
            _give_up(connection, claim.job_id, claim.submission_id, error, now)
            if first:
                mail.submission_done(
                    connection,
                    claim.submission_id,
                    ERROR,
                    "podium could not score it (not counted in your quota)",
                    None,
                    now,
                )
            return
        connection.execute(
            update(jobs)
            .where(jobs.c.id == claim.job_id)
            .values(state=JOB_QUEUED, lease=None, lease_until=None, error=error[:2000])
        )
        connection.execute(update(submissions).where(submissions.c.id == claim.submission_id).values(status=QUEUED))


def _give_up(connection: Connection, job_id: int, submission_id: int, error: str, now: datetime) -> None:
    connection.execute(
        update(jobs)
        .where(jobs.c.id == job_id)
        .values(state=JOB_GAVE_UP, lease=None, lease_until=None, error=error[:2000])
    )
    reason = f"podium could not score it (not counted in your quota): {error}"
    connection.execute(
        update(submissions)
        .where(submissions.c.id == submission_id)
        .values(status=ERROR, reason=reason[:2000], finished=now)
    )


def _unscored(connection: Connection, submission_id: int) -> bool:
    """Whether the submission has no result yet, of any round (its first scoring, not a rescore)."""
    return (
        connection.execute(select(results.c.id).where(results.c.submission_id == submission_id).limit(1)).first()
        is None
    )
