"""A contest's teams as its organizers manage them: the roster, a rename, a removal, members added and removed, who may have a password reset.

Every function takes the contest's id: team names repeat across contests.
The organizer's page, the API and ``podium team`` call these same functions,
so that the three say the same thing in the same words.

What a removal does: only a team that has sent nothing is removed (a mistaken
or duplicate registration), with its tokens and memberships; its members'
accounts stay. A team that has sent submissions stays on the record: removing
it would delete results that may stand on a published final board. It is
banned instead (:mod:`podium.service.standing`): off the board, its members
refused, its submissions kept, and the ban can be lifted. This is what
Codabench and Kaggle do with a participant taken out of a competition: their
results leave the board, they are not erased.

Whose account an organizer reaches (a password reset, a user's ban): a member
of one of the contest's teams who organizes nothing and is not the site's
administrator. An organizer of one contest who could reset or ban any account
could take over, or lock out, the administrator or another contest's
organizer; the site's administrator reaches anyone.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from sqlalchemy import Connection, func, select

from podium.core.errors import UsageError
from podium.service import accounts, resets, standing
from podium.service.accounts import Caller
from podium.service.tables import memberships, organizers, submissions, teams, users


class NotYours(UsageError):
    """An action on an account that the caller's role does not reach (403)."""


class Missing(UsageError):
    """No such team in the contest, or no such user (404)."""


class Conflict(UsageError):
    """An action the team's state refuses: it has submissions, the user has a team in the contest, or is none of its members (409)."""


def roster(connection: Connection, contest: str, name: str | None = None) -> list[dict[str, Any]]:
    """The teams of ``contest`` by name (``name``: that one only): members, submissions, the last one's time, standing, creation."""
    sent = select(func.count()).where(submissions.c.team_id == teams.c.id).scalar_subquery()
    last = select(func.max(submissions.c.created)).where(submissions.c.team_id == teams.c.id).scalar_subquery()
    query = select(
        teams.c.id,
        teams.c.name,
        teams.c.banned,
        teams.c.approved,
        teams.c.created,
        sent.label("submissions"),
        last.label("last"),
    ).where(teams.c.contest == contest)
    names = select(memberships.c.team_id, users.c.name).select_from(
        memberships.join(users, users.c.id == memberships.c.user_id).join(teams, teams.c.id == memberships.c.team_id)
    )
    names = names.where(teams.c.contest == contest)
    if name is not None:
        query, names = query.where(teams.c.name == name[:64]), names.where(teams.c.name == name[:64])
    rows = connection.execute(query.order_by(teams.c.name)).all()
    members: dict[int, list[str]] = {}
    for team, user in connection.execute(names.order_by(users.c.name)):
        members.setdefault(team, []).append(user)
    return [
        {
            "team": row.name,
            "members": members.get(row.id, []),
            "submissions": int(row.submissions),
            "last": row.last,
            "banned": bool(row.banned),
            "approved": row.approved is not False,
            "created": row.created,
        }
        for row in rows
    ]


def team(connection: Connection, contest: str, name: str) -> dict[str, Any]:
    """The roster's row of the team ``name`` of ``contest``; :class:`Missing` naming the contest if there is none."""
    found = roster(connection, contest, name)
    if not found:
        team_key(connection, contest, name)  # raises, in the commands' words
    return found[0]


def team_key(connection: Connection, contest: str, name: str) -> int:
    """The id of the team ``name`` of ``contest``; :class:`Missing` if there is none."""
    try:
        return accounts.team_id(connection, name[:64], contest)
    except UsageError as exc:
        raise Missing(str(exc)[:200]) from None


def rename(connection: Connection, contest: str, name: str, new: str) -> dict[str, Any]:
    """Rename the team ``name`` of ``contest`` (unique in it, whatever the case); its row after it."""
    accounts.rename_team(connection, team_key(connection, contest, name), new)
    return team(connection, contest, new)


def remove(connection: Connection, contest: str, name: str) -> None:
    """Remove the team ``name`` of ``contest`` if it has sent nothing (:func:`podium.service.accounts.remove_team`); :class:`Conflict` if it has."""
    found = team_key(connection, contest, name)
    try:
        accounts.remove_team(connection, found)
    except UsageError as exc:
        raise Conflict(f"team {name[:80]}: {exc}") from None


def add_member(connection: Connection, contest: str, name: str, user: str) -> dict[str, Any]:
    """Make the user ``user`` a member of the team ``name`` of ``contest`` (at most one team per contest); the team's row."""
    team_id, user_id = team_and_user(connection, contest, name, user)
    try:
        accounts.join(connection, user_id, team_id)
    except UsageError as exc:
        raise Conflict(f"{user[:80]}: {exc}") from None
    return team(connection, contest, name)


def remove_member(connection: Connection, contest: str, name: str, user: str) -> dict[str, Any]:
    """Take the user ``user`` out of the team ``name`` of ``contest`` (their account stays); the team's row.

    Their log-ins' tokens stay theirs: a user's role is read in each request, so from the next one they have no team here.
    """
    team_id, user_id = team_and_user(connection, contest, name, user)
    if not accounts.leave(connection, user_id, team_id):
        raise Conflict(f"{user[:80]} is no member of team {name[:80]}")
    return team(connection, contest, name)


def team_and_user(connection: Connection, contest: str, name: str, user: str) -> tuple[int, int]:
    """The ids of the team ``name`` of ``contest`` and of the user ``user``; :class:`Missing` naming what is not there."""
    found = team_key(connection, contest, name)
    row = accounts.user_row(connection, user)
    if row is None:
        raise Missing(f"no user {user[:80]!r}: they sign up, or podium user add {user[:80]} makes the account")
    return found, int(row.id)


def check_reachable(connection: Connection, who: Caller, contest: str, user: str, does: str) -> None:
    """Refuse (:class:`NotYours`) an organizer's action on the account ``user`` (``does``: what it does, in words) unless the user
    is a member of ``contest``'s teams, of no other contest's, who organizes nothing (an account is the site's: a ban or a new
    password reaches every contest it is in; the site's administrator reaches anyone); :class:`Missing` when there is no such
    user."""
    row = accounts.user_row(connection, user)
    if row is None:
        raise Missing(f"no user {user[:80]!r}")
    if who.admin:
        return
    contests = {c for (c,) in connection.execute(select(memberships.c.contest).where(memberships.c.user_id == row.id))}
    organizes = connection.execute(select(organizers.c.user_id).where(organizers.c.user_id == row.id)).first()
    if contests != {contest} or organizes is not None or row.admin:
        raise NotYours(
            f"an organizer of {contest} {does} the members of its teams only, of no other contest's: not {user[:80]!r};"
            " ask the site's administrator"
        )


def set_user(connection: Connection, who: Caller, contest: str, user: str, *, banned: bool) -> dict[str, Any]:
    """Ban the user ``user``, or lift the ban, as the organizer ``who`` of ``contest`` (:func:`check_reachable`); their standing.

    A user's ban holds on the whole site: an organizer of one contest bans its teams' members only.
    """
    check_reachable(connection, who, contest, user, "bans")
    return standing.set_user(connection, user, banned=banned)


def reset_token(connection: Connection, who: Caller, contest: str, user: str, now: datetime) -> str:
    """A new one-time reset link's token for ``user``, issued by the organizer ``who`` of ``contest`` (:func:`check_reachable`)."""
    check_reachable(connection, who, contest, user, "resets the passwords of")
    return resets.issue(connection, user, now)[1]


def stamp(value: datetime | None) -> str | None:
    """A time as ISO 8601 (``None`` stays ``None``), as the API answers it."""
    return None if value is None else value.isoformat()
