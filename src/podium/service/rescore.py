"""Rescoring: a new round in which every accepted submission is scored again.

After a change of podium's version, the contest's parameters, split or truth
(``podium rescore [--contest FILE]``), the round number goes up; workers
reload the contest file and score each submission that was ever accepted
(it has a job) again. Each result is kept under its (submission, round), so
earlier results stay with their signatures, and the leaderboard, which takes
each submission's newest result, rebuilds itself as the round completes.
"""

from __future__ import annotations

from sqlalchemy import Engine, select

from podium.service import queue, state
from podium.service.database import writing
from podium.service.statuses import CANCELLED, utc_now
from podium.service.tables import jobs, submissions, teams


def rescore(engine: Engine, contest: str | None = None) -> tuple[int, int]:
    """Start a new round of ``contest`` (``None``: the one served); (its number, the submissions queued)."""
    now = utc_now()
    with writing(engine) as connection:
        contest = state.only_contest(connection, contest)
        round_ = state.current_round(connection, contest) + 1
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
