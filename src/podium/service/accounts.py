"""Teams, members, organizers and API tokens.

Passwords are hashed with scrypt (memory-hard: N=2**14, r=8, p=1 uses 16 MiB
per hash; RFC 7914), salted, and compared in constant time. An API token is 32
random bytes shown once; the database keeps only its SHA-256 (a token has full
entropy, so a fast hash is enough and lookups stay one indexed query).

A token may expire (``expires``); a web session's token is marked ``session``,
ends :data:`SESSION` after its log-in for every use, and is never taken as an
API token. Tokens can be listed and revoked; removing a user or changing a
password ends every token that user's log-ins made. Passwords must have
:data:`MIN_PASSWORD` characters and be none of the commonest passwords
(``common_passwords.txt``, shipped in the package) nor the user's own name.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import re
import secrets
from dataclasses import dataclass
from datetime import datetime, timedelta
from functools import cache
from importlib import resources
from typing import Any

from sqlalchemy import Connection, CursorResult, Executable, bindparam, delete, func, insert, or_, select, update
from sqlalchemy.exc import IntegrityError

from podium.core.errors import UsageError
from podium.service import state
from podium.service.tables import memberships, organizers, submissions, teams, tokens, users

NAME = re.compile(r"(?=.{1,64}\Z)[A-Za-z0-9][A-Za-z0-9._-]*(?: [A-Za-z0-9._-]+)*")  # words one space apart: a page
# folds "Top  Team" into "Top Team", which it would pose as
SCRYPT = {"n": 2**14, "r": 8, "p": 1}
MIN_PASSWORD = 10
SESSION = timedelta(hours=12)  # a web session's life from its log-in


class NameTaken(UsageError):
    """A team or user name that is already taken."""


@dataclass(frozen=True)
class Caller:
    """Who a request comes from, in a contest: a team's member or token, or an organizer of the contest (or of the site)."""

    team_id: int | None
    team: str | None
    organizer: bool
    user_id: int | None = None  # the user whose log-in made the token (None: a team's token made by a command)
    contest: str | None = None  # the contest the caller is one of (None: the site, for an administrator)
    refused: str | None = (
        None  # why every request is refused (403): the team or the user is banned (podium.service.standing)
    )
    approved: bool = True  # False: the team waits for an organizer's approval and may not upload yet
    admin: bool = (
        False  # the site's administrator (or a token a command made for the site's organizers): every contest is theirs
    )


def check_name(name: str, what: str) -> str:
    if not NAME.fullmatch(name):  # match would take a final line feed: "alpha\n" posing as alpha
        raise UsageError(
            f"{what} {name[:80]!r}: 1 to 64 letters, digits, '.', '_' or '-', and single spaces between words"
        )
    return name


def hash_password(password: str) -> str:
    """``scrypt$n$r$p$salt$hash`` (base64)."""
    salt = secrets.token_bytes(16)
    digest = hashlib.scrypt(password.encode(), salt=salt, **SCRYPT, maxmem=64 << 20, dklen=32)
    encode = lambda b: base64.b64encode(b).decode()
    return f"scrypt${SCRYPT['n']}${SCRYPT['r']}${SCRYPT['p']}${encode(salt)}${encode(digest)}"


def verify_password(password: str, stored: str) -> bool:
    try:
        kind, n, r, p, salt, digest = stored.split("$")
        if kind != "scrypt":
            return False
        computed = hashlib.scrypt(
            password.encode(), salt=base64.b64decode(salt), n=int(n), r=int(r), p=int(p), maxmem=64 << 20, dklen=32
        )
    except ValueError:
        return False
    return hmac.compare_digest(computed, base64.b64decode(digest))


def token_digest(token: str) -> str:
    return hashlib.sha256(token.encode()).hexdigest()


def add_team(
    connection: Connection, name: str, now: datetime, contest: str | None = None, *, approved: bool = True
) -> int:
    """Add a team to ``contest`` (``None``: the one contest the database serves, or ``''`` before it serves any);
    ``approved=False``: it waits for an organizer before it may submit (``[service] approval``)."""
    check_name(name, "team name")
    contest = contest_key(connection, contest)
    if connection.execute(
        select(teams.c.name).where(teams.c.contest == contest, func.lower(teams.c.name) == name.lower())
    ).first():  # "Alpha" would pose as "alpha"
        raise NameTaken(f"there is already a team {name!r} (names differing only in case are one name)")
    inserted = _naming(
        connection, insert(teams).values(name=name, created=now, contest=contest, approved=approved), name
    )
    return int(inserted.inserted_primary_key[0])  # type: ignore[index]


def _naming(connection: Connection, statement: Executable, name: str) -> CursorResult[Any]:
    """Run an insert or rename of ``name``: a name another request took meanwhile, in any case, is :class:`NameTaken`.

    The check before it gives the message; the database's unique indexes on the lower-cased names (migration 0009)
    settle two requests that passed it at once.
    """
    try:
        return connection.execute(statement)
    except IntegrityError:
        raise NameTaken(f"the name {name!r} is taken (names differing only in case are one name)") from None


def contest_key(connection: Connection, contest: str | None) -> str:
    """``contest``, checked; ``None``: the one contest served, or ``''`` when the database serves none yet (or ``''`` given)."""
    if (contest is None and not state.served_ids(connection)) or contest == "":
        return ""
    return state.only_contest(connection, contest)


def team_id(connection: Connection, name: str, contest: str | None = None) -> int:
    """The team ``name`` of ``contest`` (``None``: of the one contest served); :class:`UsageError` if there is none."""
    contest = contest_key(connection, contest)
    found = connection.execute(select(teams.c.id).where(teams.c.contest == contest, teams.c.name == name)).scalar()
    if found is None:
        raise UsageError(f"no team {name!r}" + (f" in the contest {contest}" if contest else ""))
    return int(found)


TEAM_GONE = "this team no longer exists: its last member left it, or the organizers removed it"
NOT_MEMBER = "you are no longer a member of team"


def lock_team(connection: Connection, team: int, user: int | None = None) -> str | None:
    """Hold the team's row until the transaction ends, so that a team's quota or selection is checked and changed by one request at a time;
    what refuses the request, as read under the lock: the team gone (:data:`TEAM_GONE`), the :func:`refusal` of the
    team's ban or of the site-wide ban of ``user`` (the caller, when a user), or ``user`` no longer its member
    (:data:`NOT_MEMBER`). An upload whose body arrived after any of these is refused by it.

    One statement: the user's row and membership come by outer joins (none without ``user``), and only the team's row
    is locked (``FOR UPDATE OF teams`` on PostgreSQL; on SQLite the write transaction, ``BEGIN IMMEDIATE``, already
    holds the database).
    """
    row = connection.execute(LOCK_TEAM, {"team": team, "user": user}).first()
    if row is None:
        return TEAM_GONE
    banned = refusal(row.name if row.banned else None, row.user if row.user_banned else None)
    if banned is None and user is not None and row.member is None:
        return f"{NOT_MEMBER} {row.name}: you left it, or the organizers moved you"
    return banned


LOCK_TEAM = (
    select(
        teams.c.name,
        teams.c.banned,
        users.c.name.label("user"),
        users.c.banned.label("user_banned"),
        memberships.c.user_id.label("member"),
    )
    .select_from(
        teams.outerjoin(users, users.c.id == bindparam("user")).outerjoin(
            memberships, (memberships.c.team_id == teams.c.id) & (memberships.c.user_id == bindparam("user"))
        )
    )
    .where(teams.c.id == bindparam("team"))
    .with_for_update(of=teams)
)


@cache
def common_passwords() -> frozenset[str]:
    """The commonest passwords of :data:`MIN_PASSWORD` characters or more, lower-cased (a list shipped in the package)."""
    text = (resources.files("podium.service") / "common_passwords.txt").read_text()
    return frozenset(line.strip().lower() for line in text.splitlines() if line.strip() and not line.startswith("#"))


def check_password(password: str, *names: str) -> None:
    """Refuse a password that is short, common, one character repeated, or the user's or team's name (:class:`UsageError`)."""
    if len(password) < MIN_PASSWORD:
        raise UsageError(f"a password needs at least {MIN_PASSWORD} characters")
    folded = password.lower()
    if folded in common_passwords() or len(set(folded)) == 1 or folded in (name.lower() for name in names):
        raise UsageError("this password is too easy to guess (a common one, or your own name): choose another")


def add_user(
    connection: Connection,
    name: str,
    password: str,
    team: int | None,
    organizer: bool,
    now: datetime,
    *,
    hashed: str | None = None,
    contest: str | None = None,
    admin: bool = False,
) -> int:
    """Add a user: a member of ``team``, an organizer of ``contest`` (``None``: of the one contest served, or of the site
    before the database serves any), a site administrator (``admin``), or (none of them) an account that joins teams later.

    ``hashed``: the password's hash, computed already (:func:`hash_password`) outside the transaction.
    """
    check_name(name, "user name")
    check_password(password, name)
    if connection.execute(select(users.c.id).where(func.lower(users.c.name) == name.lower())).first():
        raise NameTaken(f"there is already a user {name!r} (names differing only in case are one name)")
    organizes = contest_key(connection, contest) if organizer else None
    values = {
        "name": name,
        "password_hash": hashed or hash_password(password),
        "admin": admin or organizes == "",
        "created": now,
    }
    user = int(_naming(connection, insert(users).values(**values), name).inserted_primary_key[0])  # type: ignore[index]
    if team is not None:
        join(connection, user, team)
    if organizes:
        add_organizer(connection, user, organizes)
    return user


def join(connection: Connection, user: int, team: int) -> None:
    """Make ``user`` a member of ``team``: :class:`UsageError` if they have a team in its contest already."""
    contest = connection.execute(select(teams.c.contest).where(teams.c.id == team)).scalar()
    if contest is None:
        raise UsageError(f"no team {team}")
    if connection.execute(
        select(memberships.c.id).where(memberships.c.user_id == user, memberships.c.contest == contest)
    ).first():
        raise UsageError("this user has a team in this contest already (one team per contest)")
    connection.execute(insert(memberships).values(user_id=user, team_id=team, contest=contest))


def leave(connection: Connection, user: int, team: int) -> bool:
    """Take ``user`` out of ``team`` (their account stays); whether they were a member."""
    where = (memberships.c.user_id == user, memberships.c.team_id == team)
    return connection.execute(delete(memberships).where(*where)).rowcount > 0


def add_organizer(connection: Connection, user: int, contest: str) -> None:
    """Make ``user`` an organizer of ``contest`` (nothing if they are one)."""
    where = (organizers.c.user_id == user, organizers.c.contest == contest)
    if connection.execute(select(organizers.c.user_id).where(*where)).first() is None:
        connection.execute(insert(organizers).values(user_id=user, contest=contest))


def remove_organizer(connection: Connection, user: int, contest: str) -> bool:
    """Make ``user`` no longer an organizer of ``contest``; whether they were one."""
    where = (organizers.c.user_id == user, organizers.c.contest == contest)
    return connection.execute(delete(organizers).where(*where)).rowcount > 0


def role(connection: Connection, user: int, contest: str) -> tuple[int | None, str | None, bool]:
    """The user's team in ``contest`` (id and name, or ``None``) and whether they organize it (its organizer, or the site's administrator)."""
    team = connection.execute(
        select(teams.c.id, teams.c.name)
        .select_from(memberships.join(teams))
        .where(memberships.c.user_id == user, memberships.c.contest == contest)
    ).first()
    organizes = (
        connection.execute(select(users.c.admin).where(users.c.id == user)).scalar()
        or connection.execute(
            select(organizers.c.user_id).where(organizers.c.user_id == user, organizers.c.contest == contest)
        ).first()
        is not None
    )
    return (None, None, bool(organizes)) if team is None else (int(team.id), str(team.name), bool(organizes))


def teams_of_user(connection: Connection, user: int) -> list[Any]:
    """The user's teams, one per contest they are in, by the contest's id: (contest, team) rows."""
    query = (
        select(memberships.c.contest, teams.c.name.label("team"))
        .select_from(memberships.join(teams))
        .where(memberships.c.user_id == user)
        .order_by(memberships.c.contest)
    )
    return list(connection.execute(query))


def user_row(connection: Connection, name: str) -> Any:
    """The user named ``name`` (``None`` when there is none)."""
    return connection.execute(select(users).where(users.c.name == name[:64])).first()


def login_refusal(connection: Connection, row: Any, contest: str | None) -> str | None:
    """Why the user of ``row`` (:func:`user_row`) may not log in to ``contest``: they are banned, or their team in it is;
    ``None`` otherwise. ``contest=None`` (a log-in to the whole site) refuses a banned user only: a banned team's member
    logs in and acts in their other contests, and every request of theirs in the banned team's contest is refused (:func:`caller_of`).
    """
    team = (
        None
        if contest is None
        else connection.execute(
            select(teams.c.name)
            .select_from(memberships.join(teams))
            .where(memberships.c.user_id == row.id, memberships.c.contest == contest, teams.c.banned)
        ).scalar()
    )
    return refusal(team, row.name if row.banned else None)


def remove_user(connection: Connection, name: str) -> None:
    """Remove a user and every token their log-ins made."""
    row = user_row(connection, name)
    if row is None:
        raise UsageError(f"no user {name!r}")
    connection.execute(delete(tokens).where(tokens.c.user_id == row.id))
    connection.execute(delete(memberships).where(memberships.c.user_id == row.id))
    connection.execute(delete(organizers).where(organizers.c.user_id == row.id))
    connection.execute(delete(users).where(users.c.id == row.id))


def rename_user(connection: Connection, name: str, new: str) -> None:
    """Rename a user (their log-ins, teams and roles stay theirs)."""
    row = user_row(connection, name)
    if row is None:
        raise UsageError(f"no user {name!r}")
    check_name(new, "user name")
    taken = select(users.c.id).where(func.lower(users.c.name) == new.lower(), users.c.id != row.id)
    if connection.execute(taken).first():
        raise NameTaken(f"there is already a user {new!r} (names differing only in case are one name)")
    _naming(connection, update(users).where(users.c.id == row.id).values(name=new), new)


def user_rows(connection: Connection) -> list[dict[str, Any]]:
    """Every user by name: site administrator or not, their teams (``contest/team``) and the contests they organize."""
    teams_of: dict[int, list[str]] = {}
    for user, contest, team in connection.execute(
        select(memberships.c.user_id, memberships.c.contest, teams.c.name)
        .select_from(memberships.join(teams))
        .order_by(memberships.c.contest)
    ):
        teams_of.setdefault(user, []).append(f"{contest}/{team}" if contest else team)
    organizes: dict[int, list[str]] = {}
    for user, contest in connection.execute(
        select(organizers.c.user_id, organizers.c.contest).order_by(organizers.c.contest)
    ):
        organizes.setdefault(user, []).append(contest)
    return [
        {
            "name": row.name,
            "admin": bool(row.admin),
            "teams": teams_of.get(row.id, []),
            "organizes": organizes.get(row.id, []),
            "email": row.email,
        }
        for row in connection.execute(select(users).order_by(users.c.name))
    ]


def rename_team(connection: Connection, team: int, new: str) -> None:
    """Rename a team (unique within its contest, whatever the case)."""
    check_name(new, "team name")
    contest = connection.execute(select(teams.c.contest).where(teams.c.id == team)).scalar()
    taken = select(teams.c.id).where(
        teams.c.contest == contest, func.lower(teams.c.name) == new.lower(), teams.c.id != team
    )
    if connection.execute(taken).first():
        raise NameTaken(f"there is already a team {new!r} (names differing only in case are one name)")
    _naming(connection, update(teams).where(teams.c.id == team).values(name=new), new)


def remove_team(connection: Connection, team: int) -> None:
    """Remove a team that has sent nothing, with its tokens and memberships (its members' accounts stay).

    A team that has submissions is refused: its results are part of the contest's record.
    """
    if connection.execute(select(submissions.c.id).where(submissions.c.team_id == team).limit(1)).first():
        raise UsageError(
            "this team has submissions, which stay on the record: it cannot be removed; "
            "ban it instead (off the board, its members refused, its submissions kept)"
        )
    connection.execute(delete(tokens).where(tokens.c.team_id == team))
    connection.execute(delete(memberships).where(memberships.c.team_id == team))
    connection.execute(delete(teams).where(teams.c.id == team))


def set_password(connection: Connection, name: str, password: str) -> None:
    """Change a user's password; every token their log-ins made ends."""
    row = user_row(connection, name)
    if row is None:
        raise UsageError(f"no user {name!r}")
    check_password(password, name)
    connection.execute(update(users).where(users.c.id == row.id).values(password_hash=hash_password(password)))
    connection.execute(delete(tokens).where(tokens.c.user_id == row.id))


def new_token(
    connection: Connection,
    team: int | None,
    organizer: bool,
    label: str,
    now: datetime,
    *,
    expires: datetime | None = None,
    user_id: int | None = None,
    session: bool = False,
    contest: str | None = None,
) -> str:
    """A new API token (or, ``session``, a web session's) for a team, an organizer of ``contest`` (``None``: of the site), or
    (``user_id``) a user, whose role is theirs in the contest of each request; returned once, stored hashed."""
    token = "pdm_" + secrets.token_urlsafe(32)
    if team is not None:
        contest = connection.execute(select(teams.c.contest).where(teams.c.id == team)).scalar()
    values = {
        "digest": token_digest(token),
        "team_id": team,
        "organizer": organizer,
        "label": label[:128],
        "created": now,
        "expires": expires,
        "user_id": user_id,
        "session": session,
        "contest": contest,
    }
    connection.execute(insert(tokens).values(**values))
    return token


def _caller(connection: Connection, token: str, now: datetime, session: bool, contest: str | None) -> Caller | None:
    if contest is None:
        served = state.served_ids(connection)
        contest = served[0] if len(served) == 1 else None
    row = connection.execute(
        select(tokens.c.team_id, tokens.c.organizer, tokens.c.user_id, tokens.c.contest, teams.c.name)
        .select_from(tokens.outerjoin(teams))
        .where(
            tokens.c.digest == token_digest(token),
            tokens.c.session == session,
            or_(tokens.c.expires.is_(None), tokens.c.expires > now),
        )
    ).first()
    if row is None:
        return None
    if contest is None:  # the site, not a contest (several served): a user, or an organizer's token of the site
        return _site_caller(connection, row)
    if row.user_id is not None:  # a user's log-in: their role in this contest
        team, name, organizes = role(connection, row.user_id, contest)
    elif row.contest is not None and row.contest != contest:  # a team's or an organizer's token of another contest
        return None
    else:
        team, name, organizes = row.team_id, row.name, bool(row.organizer)
    banned_team, approved = False, True
    if team is not None:
        banned_team, approved = connection.execute(
            select(teams.c.banned, teams.c.approved).where(teams.c.id == team)
        ).one()
    user = (
        None
        if row.user_id is None
        else connection.execute(
            select(users.c.name, users.c.banned, users.c.admin).where(users.c.id == row.user_id)
        ).first()
    )
    refused = refusal(name if banned_team else None, user.name if user is not None and user.banned else None)
    admin = bool(user.admin) if user is not None else bool(row.organizer) and row.contest is None
    return Caller(team, name, organizes, row.user_id, contest, refused, approved is not False, admin)


def token_contest(connection: Connection, token: str, now: datetime) -> str | None:
    """The contest an API token that has not expired was made for (``None``: an unknown token, or one of the site or of a user)."""
    return connection.execute(
        select(tokens.c.contest).where(
            tokens.c.digest == token_digest(token),
            ~tokens.c.session,
            or_(tokens.c.expires.is_(None), tokens.c.expires > now),
        )
    ).scalar()


def _site_caller(connection: Connection, row: Any) -> Caller | None:
    """The caller of a token on the site's own pages, in no contest: a user (an organizer if the site's administrator),
    or an organizer's token of the site; a team's token, or a contest's organizer's, is none."""
    if row.user_id is not None:
        user = connection.execute(select(users.c.name, users.c.banned, users.c.admin).where(users.c.id == row.user_id))
        found = user.first()
        if found is None:
            return None
        return Caller(
            None, None, bool(found.admin), row.user_id, None, refusal(None, found.name if found.banned else None)
        )
    if row.organizer and row.contest is None:
        return Caller(None, None, True)
    return None


def refusal(banned_team: str | None, banned_user: str | None) -> str | None:
    """What a banned team's or user's requests are answered (403), or ``None`` for one not banned."""
    if banned_team is not None:
        return f"team {banned_team} is banned from this contest; its submissions are kept. Ask the organizers."
    if banned_user is not None:
        return f"user {banned_user} is banned from this contest. Ask the organizers."
    return None


def caller_of(connection: Connection, token: str, now: datetime, contest: str | None = None) -> Caller | None:
    """The caller of an API token that has not expired, in ``contest`` (``None``: the one served); a web session's token is none."""
    return _caller(connection, token, now, False, contest)


def session_caller(connection: Connection, token: str, now: datetime, contest: str | None = None) -> Caller | None:
    """The caller of a web session's token that has not expired, in ``contest`` (``None``: the one served); an API token is none."""
    return _caller(connection, token, now, True, contest)


def end_session(connection: Connection, token: str) -> None:
    connection.execute(delete(tokens).where(tokens.c.digest == token_digest(token), tokens.c.session))


def token_rows(
    connection: Connection, team: int | None, now: datetime, contest: str | None = None
) -> list[dict[str, Any]]:
    """The tokens that have not expired: a team's (``team``), or every one (``None``) of ``contest`` (``None``: of the
    server); never the token itself."""
    query = (
        select(
            tokens.c.id,
            tokens.c.label,
            tokens.c.created,
            tokens.c.expires,
            tokens.c.session,
            tokens.c.organizer,
            teams.c.name.label("team"),
        )
        .select_from(tokens.outerjoin(teams))
        .where(or_(tokens.c.expires.is_(None), tokens.c.expires > now))
        .order_by(tokens.c.id)
    )
    named = None  # a member's log-in names the team it is listed for
    if team is not None:
        query = query.where(_of_team(team))
        named = connection.execute(select(teams.c.name).where(teams.c.id == team)).scalar()
    elif contest is not None:
        query = query.where(_of_contest(contest))
    stamp = lambda t: None if t is None else t.isoformat()
    return [
        {
            "id": r.id,
            "team": r.team or named,
            "organizer": bool(r.organizer),
            "label": r.label,
            "session": bool(r.session),
            "created": stamp(r.created),
            "expires": stamp(r.expires),
        }
        for r in connection.execute(query)
    ]


def revoke_token(connection: Connection, token_id: int, team: int | None, contest: str | None = None) -> bool:
    """Delete a token: one of ``team``'s, or any (``None``) of ``contest`` (``None``: of the server); whether there was one."""
    where = [tokens.c.id == token_id] + ([_of_team(team)] if team is not None else [])
    where += [_of_contest(contest)] if team is None and contest is not None else []
    return connection.execute(delete(tokens).where(*where)).rowcount > 0


def _of_contest(contest: str) -> Any:
    """Whether a token is of ``contest``: made for it (a team's, an organizer's), or by the log-in of a member of one of its teams."""
    members = select(memberships.c.user_id).where(memberships.c.contest == contest)
    return or_(tokens.c.contest == contest, tokens.c.user_id.in_(members))


def _of_team(team: int) -> Any:
    """Whether a token is ``team``'s: made for it, or by the log-in of one of its members."""
    members = select(memberships.c.user_id).where(memberships.c.team_id == team)
    return or_(tokens.c.team_id == team, tokens.c.user_id.in_(members))


def csrf_token(session: str) -> str:
    """The form token of a session: derived from it, so a page of another site cannot know it."""
    return hashlib.sha256(b"csrf:" + session.encode()).hexdigest()[:32]


@cache
def dummy_hash() -> str:
    """A hash to check an unknown user's password against, so that it costs one scrypt too."""
    return hash_password(secrets.token_hex(16))
