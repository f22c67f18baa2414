"""Rescoring: a new round in which every accepted submission is scored again; a re-run: one submission scored again.

After a change of podium's version, the contest's parameters, split or truth
(``podium rescore [--contest FILE]``), the round number goes up; workers
reload the contest file and score each submission that was ever accepted
(it has a job) again. Each result is kept under its (submission, round), so
earlier results stay with their signatures, and the leaderboard, which takes
each submission's newest result, rebuilds itself as the round completes.

An organizer's re-run (``podium rerun N``) scores one submission again in a
round of its own: one more than the newest it has. Its earlier results stay
in their rounds, the board takes the new one as it takes any newest result,
and the team is told of it as of a first result. The next rescore's round is
above every re-run's.
"""

from __future__ import annotations

from datetime import datetime

from sqlalchemy import Connection, Engine, func, select

from podium.service import queue, state
from podium.service.database import writing
from podium.service.intake import Refused
from podium.service.statuses import CANCELLED, QUEUED, RUNNING, utc_now
from podium.service.tables import MAX_ID, jobs, submissions, teams


def rescore(engine: Engine, contest: str | None = None) -> tuple[int, int]:
    """Start a new round of ``contest`` (``None``: the one served); (its number, the submissions queued)."""
    now = utc_now()
    with writing(engine) as connection:
        contest = state.only_contest(connection, contest)
        of_contest = jobs.join(submissions).join(teams)
        newest_job = (
            connection.execute(
                select(func.max(jobs.c.round)).select_from(of_contest).where(teams.c.contest == contest)
            ).scalar()
            or 0
        )
        round_ = max(state.current_round(connection, contest), newest_job) + 1  # above every re-run's round
        state.put(connection, state.ROUND, str(round_), contest)
        accepted = (
            select(jobs.c.submission_id)
            .select_from(jobs.join(submissions).join(teams))
            .where(teams.c.contest == contest, submissions.c.status != CANCELLED)
            .distinct()
            .order_by(jobs.c.submission_id)
        )
        ids = [row[0] for row in connection.execute(accepted)]
        for submission_id in ids:
            queue.enqueue(connection, submission_id, round_, now)
    return round_, len(ids)


def rerun(connection: Connection, submission_id: int, now: datetime, of: str | None = None) -> int:
    """Queue one submission (of the contest ``of``, if given) to be scored again, in a round one above its newest; that round.

    404 (:class:`Refused`) for no such submission, 409 for one cancelled or waiting to be scored already.
    """
    found = (
        connection.execute(
            select(submissions.c.status, teams.c.contest).join(teams).where(submissions.c.id == submission_id)
        ).first()
        if 0 < submission_id <= MAX_ID
        else None
    )
    if found is None or (of is not None and found.contest != of):
        raise Refused(404, f"no submission {submission_id}")
    status, contest = found
    if status in (CANCELLED, QUEUED, RUNNING):
        raise Refused(409, f"submission {submission_id} is {status}: only a submission that ended can be run again")
    newest = connection.execute(select(func.max(jobs.c.round)).where(jobs.c.submission_id == submission_id)).scalar()
    round_ = state.current_round(connection, contest) if newest is None else newest + 1
    queue.enqueue(connection, submission_id, round_, now, notify=True)
    return int(round_)
