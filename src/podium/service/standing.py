"""Who may take part: an organizer bans a team or a user (and lifts the ban), or approves a team that waits.

A banned team's members cannot log in, its tokens are answered 403 with the
reason on every request, it cannot upload, and it is off the leaderboard; its
submissions and results are kept, and organizers still see them. A banned
user is refused the same way, their team is not. A team that registered
itself where the contest sets ``[service] approval = true`` may log in and
read but not submit, and is off the board, until an organizer approves it.
A ban or an approval changes the board: a trigger bumps its version stamp
(migration 0008).
"""

from __future__ import annotations

from typing import Any

from sqlalchemy import Connection, select, update

from podium.core.errors import UsageError
from podium.service.accounts import contest_key
from podium.service.tables import teams, users


def set_team(
    connection: Connection,
    name: str,
    *,
    banned: bool | None = None,
    approved: bool | None = None,
    contest: str | None = None,
) -> dict[str, Any]:
    """Ban or let back (``banned``), approve (``approved``) the team ``name`` of ``contest`` (``None``: of the one
    contest served); the team's standing after it."""
    values = {k: v for k, v in (("banned", banned), ("approved", approved)) if v is not None}
    named = (teams.c.contest == contest_key(connection, contest), teams.c.name == name[:64])
    if connection.execute(update(teams).where(*named).values(**values)).rowcount == 0:
        raise UsageError(f"no team {name[:80]!r}")
    row = connection.execute(select(teams.c.name, teams.c.banned, teams.c.approved).where(*named)).one()
    return {"team": row.name, "banned": bool(row.banned), "approved": bool(row.approved)}


def set_user(connection: Connection, name: str, *, banned: bool) -> dict[str, Any]:
    """Ban a user, or let them back; the user's standing after it."""
    if connection.execute(update(users).where(users.c.name == name[:64]).values(banned=banned)).rowcount == 0:
        raise UsageError(f"no user {name[:80]!r}")
    return {"user": name, "banned": banned}
