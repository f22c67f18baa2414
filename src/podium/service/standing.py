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

from sqlalchemy import Connection, select, union_all, update

from podium.core.errors import UsageError
from podium.service import accounts
from podium.service.accounts import contest_key
from podium.service.tables import memberships, organizers, teams, users


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


def set_user(connection: Connection, name: str, *, banned: bool, by: accounts.Caller | None = None) -> dict[str, Any]:
    """Ban a user, or let them back; the user's standing after it.

    A ban is the server's: ``by``, an organizer of one contest (not the site's administrator), may ban only a user of
    no other contest (no team, no organizer's role there) who is not the administrator; another is answered as unknown.
    """
    row = accounts.user_row(connection, name)
    if row is None or (by is not None and not _decides_for(connection, by, row)):
        raise UsageError(f"no user {name[:80]!r}")
    connection.execute(update(users).where(users.c.id == row.id).values(banned=banned))
    return {"user": name, "banned": banned}


def _decides_for(connection: Connection, who: accounts.Caller, user: Any) -> bool:
    """Whether ``who`` (an organizer) may ban ``user`` (a users row): the site's administrator, or an organizer of the
    one contest the user belongs to (or of none) when the user is not the site's administrator."""
    if who.user_id is not None and connection.execute(select(users.c.admin).where(users.c.id == who.user_id)).scalar():
        return True
    if user.admin:
        return False
    elsewhere = union_all(
        select(memberships.c.contest).where(memberships.c.user_id == user.id, memberships.c.contest != who.contest),
        select(organizers.c.contest).where(organizers.c.user_id == user.id, organizers.c.contest != who.contest),
    )
    return connection.execute(select(elsewhere.subquery()).limit(1)).first() is None
