"""A signed-in user's team in a contest: a new one created, or one joined by its invitation code, while registration is open.

An account is the site's and a team a contest's (:mod:`podium.service.accounts`): a user who signed up in
one contest creates or joins a team in another without a new account, as on Kaggle and Codabench. The
page (``/c/ID/join``), the API (``POST /api/contests/ID/team``, ``.../team/join``) and ``podium team
create|join`` call :func:`create` and :func:`join`, which refuse (:class:`Refused`, with its HTTP status):

- a contest that takes no sign-ups (``[service] self_registration``), 403;
- a closed registration, 403: open until ``[service] registration_end``, else until the last phase ends,
  the end itself closed, as a phase's; the server's clock is read once per request, and that one reading
  decides both the check and the membership's row;
- the contest's own organizers (and the site's administrator, who organizes every contest), 403: they judge it;
- a user in a team of the contest already, 409 naming it (one team per user and contest; the database's
  unique index settles two requests at once);
- a team name taken in the contest, whatever the case, 409;
- a code unknown in this contest (another contest's too), 404; expired or revoked, 410, never naming the team;
- a full team (``[service] max_team_size``), 409, and a banned team, 403.

A site-wide ban refuses the user before any of this (the caller's ``refused``). A team banned in one contest
bars its members from that contest only: they create and join teams in the others. A team created here waits
for the organizers' approval when the contest asks for it (``[service] approval``), as a team that signs up.

A member leaves their team (:func:`leave`: the account page's form, ``POST /api/contests/ID/team/leave``,
``podium team leave``) while teams may change, as Kaggle lets a member leave before its team-merger deadline:

- only until the team sends its first submission: from then on its members are final, 409, as on Kaggle (else
  a member would compete again in another team, with a fresh quota, while what they sent still counted here;
  the organizers may still move members: ``podium team member remove``);
- the last member of a team that has sent nothing leaves it removed (a name free again);
- refused, 403: a contest that takes no sign-ups (its teams are the organizers'), teams once final (the
  registration's end, or the last phase's end if earlier: the final ranking's teams and their choices are
  final), and a banned team (leaving it would lift the ban from its members); 409: a user in no team of the
  contest;
- the team's invitation code is revoked: the member who left knew it, and comes back only if invited again.

Afterwards the user creates or joins another team as anyone does (registration open, ``max_team_size``).
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime

from sqlalchemy import Connection, func, insert, select
from sqlalchemy.exc import IntegrityError

from podium.contest import Contest
from podium.service import accounts, invitations
from podium.service.tables import memberships, organizers, submissions, teams, users


class Refused(invitations.Refused):
    """Why a user may not create or join a team in a contest, and the HTTP status that says it (a refused code is one)."""


@dataclass(frozen=True)
class Joined:
    """The team a user is now a member of."""

    contest: str
    team: str
    created: bool  # a new team, of which the user is the first member (else joined by its code)
    approved: bool  # False: the team waits for the organizers' approval before it may submit
    members: int


@dataclass(frozen=True)
class Left:
    """The team a user left, and what became of it."""

    contest: str
    team: str
    members: int  # the members it has now
    removed: bool  # the last member left a team that had sent nothing: the team is gone


def closes(contest: Contest) -> datetime | None:
    """When the contest's registration closes: ``[service] registration_end``, else its last phase's end (``None``: no phase)."""
    if contest.service.registration_end is not None:
        return contest.service.registration_end
    return max((phase.end for phase in contest.phases), default=None)


def teams_final(contest: Contest) -> datetime | None:
    """When the contest's teams become final: its registration's end, or its last phase's end if that comes first
    (the final ranking's teams, and their choices, are final then); ``None`` without either."""
    ends = [end for end in (closes(contest), max((phase.end for phase in contest.phases), default=None)) if end]
    return min(ends, default=None)


def submissions_sent(connection: Connection, team: int) -> int:
    """How many submissions ``team`` has sent (any outcome): from the first, its members are final."""
    return int(connection.execute(select(func.count()).where(submissions.c.team_id == team)).scalar_one())


def may_leave(contest: Contest, now: datetime) -> bool:
    """Whether a member may leave their team in ``contest`` at ``now`` (it takes sign-ups, and its teams are not final)."""
    final = teams_final(contest)
    return contest.service.self_registration and (final is None or now < final)


def is_open(contest: Contest, now: datetime) -> bool:
    """Whether teams may be created and joined in ``contest`` at ``now`` (it takes sign-ups, and its registration has not closed)."""
    end = closes(contest)
    return contest.service.self_registration and (end is None or now < end)


def check_open(contest: Contest, now: datetime) -> None:
    """:class:`Refused` (403) unless teams may be created and joined in ``contest`` at ``now``."""
    if not contest.service.self_registration:
        raise Refused(f"contest {contest.id} takes no sign-ups: ask its organizers for a team", 403)
    end = closes(contest)
    if end is not None and now >= end:
        raise Refused(
            f"the registration of contest {contest.id} closed at {end.astimezone(UTC):%Y-%m-%d %H:%M:%S} "
            "UTC: no team is created or joined after it",
            403,
        )


def check_room(connection: Connection, contest: Contest, team: int) -> None:
    """:class:`Refused` if the team may take no new member: banned (403), or full (409; ``[service] max_team_size``).

    Holds the team's row first (:func:`~podium.service.accounts.lock_team`), so two users racing for its last place are
    counted one after the other.
    """
    refused = accounts.lock_team(connection, team)
    if refused == accounts.TEAM_GONE:  # its last member left it after the code was read
        raise Refused(refused, 409)
    if refused is not None:
        raise Refused("this team is banned from the contest: it takes no new member", 403)
    most = contest.service.max_team_size
    if most is not None:
        count = connection.execute(select(func.count()).where(memberships.c.team_id == team)).scalar_one()
        if count >= most:
            raise Refused(f"this team is full: it has {count} members, the most contest {contest.id} allows", 409)


def _check_user(connection: Connection, contest: Contest, user: int) -> None:
    """:class:`Refused` for an organizer of the contest (403) or a user in one of its teams already (409, naming it)."""
    team, name, organizes = accounts.role(connection, user, contest.id)
    if organizes:
        raise Refused(
            f"you organize contest {contest.id} (or the whole site): organizers are in none of its teams", 403
        )
    if team is not None:
        raise Refused(f"you are in team {name} in contest {contest.id} already: one team per user and contest", 409)


def _member(connection: Connection, contest: Contest, user: int, team: int) -> int:
    """Make ``user`` a member of ``team``; its number of members. A membership another request made meanwhile is 409."""
    try:
        connection.execute(insert(memberships).values(user_id=user, team_id=team, contest=contest.id))
    except IntegrityError:
        raise Refused(
            f"you are in a team in contest {contest.id} already: one team per user and contest", 409
        ) from None
    return int(connection.execute(select(func.count()).where(memberships.c.team_id == team)).scalar_one())


def create(connection: Connection, contest: Contest, user: int, name: str, now: datetime) -> Joined:
    """Create the team ``name`` in ``contest`` with ``user`` as its first member, at ``now`` (the one reading of the clock)."""
    check_open(contest, now)
    accounts.check_name(name, "team name")
    _check_user(connection, contest, user)
    approved = not contest.service.approval
    try:
        team = accounts.add_team(connection, name, now, contest.id, approved=approved)
    except accounts.NameTaken:
        raise Refused(
            f"there is already a team {name!r} in contest {contest.id} (names differing only in case are one name)", 409
        ) from None
    return Joined(contest.id, name, True, approved, _member(connection, contest, user, team))


def join(connection: Connection, contest: Contest, user: int, code: str, now: datetime) -> Joined:
    """Make ``user`` a member of the team of ``contest`` that the invitation ``code`` names, at ``now``."""
    check_open(contest, now)
    _check_user(connection, contest, user)
    team, name = invitations.team_of_code(connection, code.strip(), contest.id, now)
    check_room(connection, contest, team)
    approved = connection.execute(select(teams.c.approved).where(teams.c.id == team)).scalar() is not False
    return Joined(contest.id, name, False, approved, _member(connection, contest, user, team))


def leave(connection: Connection, contest: Contest, user: int, now: datetime) -> Left:
    """Take ``user`` out of their team in ``contest`` at ``now`` (the one reading of the clock); the refusals are the
    module's. The team's row is held first, so that its last two members leaving at once are counted one after the other."""
    if not contest.service.self_registration:
        raise Refused(f"contest {contest.id} takes no sign-ups: its teams are its organizers' to change; ask them", 403)
    final = teams_final(contest)
    if final is not None and now >= final:
        raise Refused(
            f"the teams of contest {contest.id} are final since {final.astimezone(UTC):%Y-%m-%d %H:%M:%S} UTC: "
            "no member leaves after it",
            403,
        )
    team, name, _ = accounts.role(connection, user, contest.id)
    if team is None or name is None:
        raise Refused(f"you are in no team of contest {contest.id}", 409)
    refused = accounts.lock_team(connection, team, user)
    if refused is not None and (refused == accounts.TEAM_GONE or refused.startswith(accounts.NOT_MEMBER)):
        raise Refused(refused, 409)  # left by another request of theirs at once
    if refused is not None:
        raise Refused(
            f"team {name} is banned from contest {contest.id}: its members stay in it; ask the organizers", 403
        )
    sent = submissions_sent(connection, team)
    if sent:
        raise Refused(
            f"team {name} has sent {sent} submission{'s' * (sent != 1)}: its members are final, as on Kaggle (a member "
            "who left would compete again in another team, with a fresh quota, while what they sent here still "
            "counts); ask the organizers",
            409,
        )
    count = int(connection.execute(select(func.count()).where(memberships.c.team_id == team)).scalar_one())
    if count > 1:
        accounts.leave(connection, user, team)
        invitations.revoke(connection, team)
        return Left(contest.id, name, count - 1, False)
    accounts.remove_team(connection, team)
    return Left(contest.id, name, 0, True)


def teams_by_contest(connection: Connection, user: int) -> dict[str, str]:
    """The user's team in each contest they are in: contest id -> team name."""
    return {str(row.contest): str(row.team) for row in accounts.teams_of_user(connection, user)}


def open_to(connection: Connection, user: int, contests: list[Contest], now: datetime) -> list[Contest]:
    """The ``contests`` in which ``user`` may create or join a team at ``now``: open to registration, the user in none
    of their teams and organizing none of them (the site's administrator organizes them all)."""
    if connection.execute(select(users.c.admin).where(users.c.id == user)).scalar():
        return []
    mine = teams_by_contest(connection, user)
    organized = set(connection.execute(select(organizers.c.contest).where(organizers.c.user_id == user)).scalars())
    return [c for c in contests if c.id not in mine and c.id not in organized and is_open(c, now)]
