"""What a team decides about its own submissions: cancel a queued one, select scored ones for the final ranking.

Each function takes a connection in a write transaction and raises
:class:`~podium.service.intake.Refused` with the HTTP status to answer.
"""

from __future__ import annotations

from datetime import datetime

from sqlalchemy import Connection, Engine, func, select, update

from podium.contest import Contest
from podium.service import accounts
from podium.service.database import writing
from podium.service.intake import Refused
from podium.service.statuses import CANCELLED, JOB_CANCELLED, JOB_QUEUED, QUEUED, SCORED
from podium.service.tables import MAX_ID, jobs, submissions


def _not_yours(submission_id: int) -> Refused:
    return Refused(404, f"no submission {submission_id} of yours")


def cancel(connection: Connection, team_id: int, submission_id: int, now: datetime, user: int | None = None) -> None:
    """Cancel the team's queued submission (it uses no quota) and its job; ``user`` as :func:`select_submission` has it."""
    if not 0 < submission_id <= MAX_ID:
        raise _not_yours(submission_id)
    refused = accounts.lock_team(connection, team_id, user)
    if refused is not None:
        raise Refused(403, refused)
    row = connection.execute(
        select(submissions).where(submissions.c.id == submission_id, submissions.c.team_id == team_id).with_for_update()
    ).first()
    if row is None:
        raise _not_yours(submission_id)
    if row.status != QUEUED:
        raise Refused(409, f"submission {submission_id} is {row.status}; only a queued one can be cancelled")
    connection.execute(
        update(jobs)
        .where(jobs.c.submission_id == submission_id, jobs.c.state == JOB_QUEUED)
        .values(state=JOB_CANCELLED)
    )
    connection.execute(
        update(submissions).where(submissions.c.id == submission_id).values(status=CANCELLED, finished=now)
    )


def check_selectable(contest: Contest, submission_id: int, now: datetime) -> None:
    """Refused before any transaction: no track of the contest ranks a selection, the selections froze, or no such id."""
    if all(c.ranking.final != "selected" for c in contest.tracks or (contest,)):
        raise Refused(
            409, f"this contest ranks each team's {contest.ranking.final} submission; there is nothing to select"
        )
    if now >= contest.phases[-1].end:
        raise Refused(
            409,
            f"selections froze when the last phase closed at {contest.phases[-1].end.isoformat()}; the final ranking uses them",
        )
    if not 0 < submission_id <= MAX_ID:
        raise _not_yours(submission_id)


def select_submission(
    connection: Connection,
    contest: Contest,
    team_id: int,
    submission_id: int,
    selected: bool,
    now: datetime,
    user: int | None = None,
) -> None:
    """Select (``True``) or unselect the team's submission, within its track's ``max_selected`` (counted on that track, and
    on its phase's board when phases name data); a board's selections freeze when its last phase closes. ``user`` (the
    caller, when a user) must still be the team's member, the team and user not banned, as read under the team's lock:
    a member who left while their form's body came no longer chooses for the team."""
    refused = accounts.lock_team(connection, team_id, user)  # two selections at once cannot both pass max_selected
    if refused is not None:
        raise Refused(403, refused)
    row = connection.execute(
        select(submissions).where(submissions.c.id == submission_id, submissions.c.team_id == team_id)
    ).first()
    if row is None:
        raise _not_yours(submission_id)
    board = contest.on(row.track, row.phase) if contest.phased() else contest.of_track(row.track)
    ranking = board.ranking
    if ranking.final != "selected":
        raise Refused(
            409, f"track {row.track} ranks each team's {ranking.final} submission; there is nothing to select"
        )
    if selected and row.status != SCORED:
        raise Refused(409, f"submission {submission_id} is {row.status}; only a scored one can be selected")
    if now >= board.closes():
        raise Refused(
            409,
            f"selections on the board of phase {', '.join(board.board)} froze when it closed at {board.closes().isoformat()}",
        )
    others = (
        submissions.c.team_id == team_id,
        submissions.c.track == row.track,
        *([submissions.c.phase.in_(board.board)] if board.board else []),  # counted on the submission's board
        submissions.c.selected,
        submissions.c.id != submission_id,
    )
    count = connection.execute(select(func.count()).select_from(submissions).where(*others)).scalar_one()
    limit = ranking.max_selected
    if selected and limit is not None and count >= limit:
        raise Refused(409, f"{count} submissions are selected, the most this contest allows; unselect one first")
    connection.execute(update(submissions).where(submissions.c.id == submission_id).values(selected=selected))


def cancel_queued(engine: Engine, team_id: int, submission_id: int, now: datetime, user: int | None = None) -> None:
    """:func:`cancel` in a write transaction of its own: what the API and the submissions page both do."""
    with writing(engine) as connection:
        cancel(connection, team_id, submission_id, now, user)


def decide(
    engine: Engine,
    contest: Contest,
    team_id: int,
    submission_id: int,
    selected: bool,
    now: datetime,
    user: int | None = None,
) -> None:
    """:func:`check_selectable`, then :func:`select_submission` in a write transaction: the API's and the page's one way to choose."""
    check_selectable(contest, submission_id, now)
    with writing(engine) as connection:
        select_submission(connection, contest, team_id, submission_id, selected, now, user)


def selecting(contest: Contest, now: datetime) -> dict[str, int | None]:
    """The tracks whose teams may still select, with each one's ``max_selected`` (none once the last phase closed)."""
    if now >= contest.phases[-1].end:
        return {}
    return {c.track_id: c.ranking.max_selected for c in contest.tracks or (contest,) if c.ranking.final == "selected"}
