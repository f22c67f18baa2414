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

from sqlalchemy import Connection, delete, func, insert, or_, select, update

from podium.core.errors import UsageError
from podium.service.tables import teams, tokens, users

NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9 ._-]{0,62}[A-Za-z0-9._-]$|^[A-Za-z0-9]$")
SCRYPT = {"n": 2**14, "r": 8, "p": 1}
MIN_PASSWORD = 10
SESSION = timedelta(hours=12)  # a web session's life from its log-in


class NameTaken(UsageError):
    """A team or user name that is already taken."""


@dataclass(frozen=True)
class Caller:
    """Who a request comes from: a team's member or token, or an organizer."""

    team_id: int | None
    team: str | None
    organizer: bool
    user_id: int | None = None  # the user whose log-in made the token (None: a team's token made by a command)
    refused: str | None = (
        None  # why every request is refused (403): the team or the user is banned (podium.service.standing)
    )
    approved: bool = True  # False: the team waits for an organizer's approval and may not upload yet


def check_name(name: str, what: str) -> str:
    if not NAME.match(name):
        raise UsageError(
            f"{what} {name[:80]!r}: 1 to 64 letters, digits, spaces, '.', '_' or '-', not starting or ending with a space"
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


def add_team(connection: Connection, name: str, now: datetime, *, approved: bool = True) -> int:
    """Add a team; ``approved=False``: it waits for an organizer before it may submit (``[service] approval``)."""
    check_name(name, "team name")
    if connection.execute(
        select(teams.c.name).where(func.lower(teams.c.name) == name.lower())
    ).first():  # "Alpha" would pose as "alpha"
        raise NameTaken(f"there is already a team {name!r} (names differing only in case are one name)")
    added = connection.execute(insert(teams).values(name=name, created=now, approved=approved))
    return int(added.inserted_primary_key[0])  # type: ignore[index]


def team_id(connection: Connection, name: str) -> int:
    found = connection.execute(select(teams.c.id).where(teams.c.name == name)).scalar()
    if found is None:
        raise UsageError(f"no team {name!r}")
    return int(found)


def lock_team(connection: Connection, team: int) -> None:
    """Hold the team's row until the transaction ends, so that a team's quota or selection is checked and changed by one request at a time.

    ``FOR UPDATE`` on PostgreSQL; on SQLite the write transaction (``BEGIN IMMEDIATE``) already holds the database.
    """
    connection.execute(select(teams.c.id).where(teams.c.id == team).with_for_update())


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
) -> int:
    """Add a user; ``hashed``: the password's hash, computed already (:func:`hash_password`) outside the transaction."""
    check_name(name, "user name")
    check_password(password, name)
    if connection.execute(select(users.c.id).where(func.lower(users.c.name) == name.lower())).first():
        raise NameTaken(f"there is already a user {name!r} (names differing only in case are one name)")
    values = {
        "name": name,
        "password_hash": hashed or hash_password(password),
        "team_id": team,
        "organizer": organizer,
        "created": now,
    }
    return int(connection.execute(insert(users).values(**values)).inserted_primary_key[0])  # type: ignore[index]


def user_row(connection: Connection, name: str) -> Any:
    """The user named ``name`` (``None`` when there is none)."""
    return connection.execute(select(users).where(users.c.name == name[:64])).first()


def login_refusal(connection: Connection, row: Any) -> str | None:
    """Why the user of ``row`` (:func:`user_row`) may not log in: they or their team are banned; ``None`` otherwise."""
    team = (
        None
        if row.team_id is None
        else connection.execute(select(teams.c.name).where(teams.c.id == row.team_id, teams.c.banned)).scalar()
    )
    return refusal(team, row.name if row.banned else None)


def remove_user(connection: Connection, name: str) -> None:
    """Remove a user and every token their log-ins made."""
    row = user_row(connection, name)
    if row is None:
        raise UsageError(f"no user {name!r}")
    connection.execute(delete(tokens).where(tokens.c.user_id == row.id))
    connection.execute(delete(users).where(users.c.id == row.id))


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
) -> str:
    """A new API token (or, ``session``, a web session's) for a team or an organizer; returned once, stored hashed."""
    token = "pdm_" + secrets.token_urlsafe(32)
    values = {
        "digest": token_digest(token),
        "team_id": team,
        "organizer": organizer,
        "label": label[:128],
        "created": now,
        "expires": expires,
        "user_id": user_id,
        "session": session,
    }
    connection.execute(insert(tokens).values(**values))
    return token


def _caller(connection: Connection, token: str, now: datetime, session: bool) -> Caller | None:
    row = connection.execute(
        select(
            tokens.c.team_id,
            tokens.c.organizer,
            tokens.c.user_id,
            teams.c.name,
            teams.c.banned,
            teams.c.approved,
            users.c.name.label("user"),
            users.c.banned.label("user_banned"),
        )
        .select_from(tokens.outerjoin(teams).outerjoin(users, users.c.id == tokens.c.user_id))
        .where(
            tokens.c.digest == token_digest(token),
            tokens.c.session == session,
            or_(tokens.c.expires.is_(None), tokens.c.expires > now),
        )
    ).first()
    if row is None:
        return None
    refused = refusal(row.name if row.banned else None, row.user if row.user_banned else None)
    approved = row.approved is not False  # an organizer's token has no team
    return Caller(row.team_id, row.name, bool(row.organizer), row.user_id, refused, approved)


def refusal(banned_team: str | None, banned_user: str | None) -> str | None:
    """What a banned team's or user's requests are answered (403), or ``None`` for one not banned."""
    if banned_team is not None:
        return f"team {banned_team} is banned from this contest; its submissions are kept. Ask the organizers."
    if banned_user is not None:
        return f"user {banned_user} is banned from this contest. Ask the organizers."
    return None


def caller_of(connection: Connection, token: str, now: datetime) -> Caller | None:
    """The caller of an API token that has not expired; a web session's token is none."""
    return _caller(connection, token, now, session=False)


def session_caller(connection: Connection, token: str, now: datetime) -> Caller | None:
    """The caller of a web session's token that has not expired; an API token is none."""
    return _caller(connection, token, now, session=True)


def end_session(connection: Connection, token: str) -> None:
    connection.execute(delete(tokens).where(tokens.c.digest == token_digest(token), tokens.c.session))


def token_rows(connection: Connection, team: int | None, now: datetime) -> list[dict[str, Any]]:
    """The tokens that have not expired: a team's (``team``), or every one (``None``); never the token itself."""
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
    if team is not None:
        query = query.where(tokens.c.team_id == team)
    stamp = lambda t: None if t is None else t.isoformat()
    return [
        {
            "id": r.id,
            "team": r.team,
            "organizer": bool(r.organizer),
            "label": r.label,
            "session": bool(r.session),
            "created": stamp(r.created),
            "expires": stamp(r.expires),
        }
        for r in connection.execute(query)
    ]


def revoke_token(connection: Connection, token_id: int, team: int | None) -> bool:
    """Delete a token: one of ``team``'s, or any (``None``); whether there was one."""
    where = [tokens.c.id == token_id] + ([tokens.c.team_id == team] if team is not None else [])
    return connection.execute(delete(tokens).where(*where)).rowcount > 0


def csrf_token(session: str) -> str:
    """The form token of a session: derived from it, so a page of another site cannot know it."""
    return hashlib.sha256(b"csrf:" + session.encode()).hexdigest()[:32]


@cache
def dummy_hash() -> str:
    """A hash to check an unknown user's password against, so that it costs one scrypt too."""
    return hash_password(secrets.token_hex(16))
