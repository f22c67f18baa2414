"""Teams' invitation codes: a member shows the code to a teammate, who signs up with it to join the team.

A code is 20 random characters (about 119 bits), made when first asked for.
It works for :data:`LIFE` (7 days, as GitHub's organization invitations), for
every teammate who signs up with it in that time: one code serves a team of
several, so it is not spent by a use. The team's members see it on their
account page, with its end, and can renew it, which makes the old one useless
at once; once it has expired or been revoked, the next look makes a new one.
An organizer revokes a team's code (``podium team invitation NAME --revoke``,
``DELETE /api/teams/NAME/invitation``), when it has been posted where it should
not have been.

A refused code is told why (:class:`Refused`: unknown, expired, revoked) and
never which team it was: only who holds a code learns that it once worked.
Signing up with a code is limited like any registration
(:mod:`podium.service.limiter`), so codes cannot be guessed.
"""

from __future__ import annotations

import secrets
from dataclasses import dataclass
from datetime import datetime, timedelta

from sqlalchemy import Connection, select, update

from podium.core.errors import UsageError
from podium.service.tables import teams

LENGTH = 20
LIFE = timedelta(days=7)


class Refused(UsageError):
    """A code that admits to no team: why, and the HTTP status that says it (404 unknown, 410 expired or revoked)."""

    def __init__(self, message: str, status: int) -> None:
        super().__init__(message)
        self.status = status


@dataclass(frozen=True)
class Code:
    """A team's invitation code and when it stops working."""

    code: str
    expires: datetime


def current(connection: Connection, team: int, now: datetime) -> Code | None:
    """The team's code if it has one that works now (a reading transaction is enough)."""
    row = connection.execute(
        select(teams.c.invitation, teams.c.invitation_expires, teams.c.invitation_revoked).where(teams.c.id == team)
    ).one()
    if row.invitation and not row.invitation_revoked and row.invitation_expires > now:
        return Code(str(row.invitation), row.invitation_expires)
    return None


def code_of(connection: Connection, team: int, now: datetime, *, renew: bool = False) -> Code:
    """The team's invitation code: the one it has, or a new one (``renew``, or when it has none that works)."""
    if not renew and (working := current(connection, team, now)) is not None:
        return working
    code = Code(secrets.token_urlsafe(15)[:LENGTH], now + LIFE)
    connection.execute(
        update(teams)
        .where(teams.c.id == team)
        .values(invitation=code.code, invitation_expires=code.expires, invitation_revoked=False)
    )
    return code


def revoke(connection: Connection, team: int) -> bool:
    """End the team's code now (the next look at it makes a new one); whether it had one that worked."""
    ended = update(teams).where(
        teams.c.id == team, teams.c.invitation.is_not(None), teams.c.invitation_revoked.is_(False)
    )
    return connection.execute(ended.values(invitation_revoked=True)).rowcount == 1


def team_of_code(connection: Connection, code: str, contest: str, now: datetime) -> tuple[int, str]:
    """The team (id, name) of ``contest`` that ``code`` invites to; :class:`Refused` saying why it admits to none."""
    row = None
    if code and len(code) <= 64:
        query = select(teams.c.id, teams.c.name, teams.c.invitation_expires, teams.c.invitation_revoked).where(
            teams.c.invitation == code, teams.c.contest == contest
        )
        row = connection.execute(query).first()
    if row is None:
        raise Refused(
            "this invitation code is unknown (a member may have renewed it): ask them for the current one", 404
        )
    if row.invitation_revoked:
        raise Refused("this invitation code was revoked by the organizers: ask a member of the team for a new one", 410)
    if row.invitation_expires <= now:
        raise Refused(
            f"this invitation code expired on {row.invitation_expires:%Y-%m-%d %H:%M} UTC (a code works for "
            f"{LIFE.days} days): ask a member of the team for a new one",
            410,
        )
    return int(row.id), str(row.name)
