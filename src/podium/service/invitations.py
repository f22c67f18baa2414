"""Teams' invitation codes: a member shows the code to a teammate, who signs up with it to join the team.

A code is 20 random characters (about 119 bits), made when first asked for;
the team's members see it on their account page and can renew it, which makes
the old one useless at once. A code names its team only; signing up with it
is limited like any registration (:mod:`podium.service.limiter`), so codes
cannot be guessed.
"""

from __future__ import annotations

import secrets

from sqlalchemy import Connection, select, update

from podium.service.tables import teams

LENGTH = 20


def code_of(connection: Connection, team: int, *, renew: bool = False) -> str:
    """The team's invitation code: the one it has, or a new one (``renew``, or when it has none)."""
    current = connection.execute(select(teams.c.invitation).where(teams.c.id == team)).scalar()
    if current and not renew:
        return str(current)
    code = secrets.token_urlsafe(15)[:LENGTH]
    connection.execute(update(teams).where(teams.c.id == team).values(invitation=code))
    return code


def team_of_code(connection: Connection, code: str, contest: str) -> tuple[int, str] | None:
    """The team (id, name) of ``contest`` that ``code`` invites to, or ``None``."""
    if not code or len(code) > 64:
        return None
    found = select(teams.c.id, teams.c.name).where(teams.c.invitation == code, teams.c.contest == contest)
    row = connection.execute(found).first()
    return None if row is None else (int(row.id), str(row.name))
