"""Teams, members, organizers and API tokens.

Passwords are hashed with scrypt (memory-hard: N=2**14, r=8, p=1 uses 16 MiB
per hash; RFC 7914), salted, and compared in constant time. An API token is 32
random bytes shown once; the database keeps only its SHA-256 (a token has full
entropy, so a fast hash is enough and lookups stay one indexed query).
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

from sqlalchemy import Connection, delete, insert, select

from podium.errors import UsageError
from podium.service.tables import teams, tokens, users

NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9 ._-]{0,62}[A-Za-z0-9._-]$|^[A-Za-z0-9]$")
SCRYPT = {"n": 2**14, "r": 8, "p": 1}
MIN_PASSWORD = 10


class NameTaken(UsageError):
    """A team or user name that is already taken."""


@dataclass(frozen=True)
class Caller:
    """Who a request comes from: a team's member or token, or an organizer."""

    team_id: int | None
    team: str | None
    organizer: bool


def check_name(name: str, what: str) -> str:
    if not NAME.match(name):
        raise UsageError(f"{what} {name[:80]!r}: 1 to 64 letters, digits, spaces, '.', '_' or '-', not starting or ending with a space")
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
        computed = hashlib.scrypt(password.encode(), salt=base64.b64decode(salt), n=int(n), r=int(r), p=int(p), maxmem=64 << 20, dklen=32)
    except ValueError:
        return False
    return hmac.compare_digest(computed, base64.b64decode(digest))


def token_digest(token: str) -> str:
    return hashlib.sha256(token.encode()).hexdigest()


def add_team(connection: Connection, name: str, now: datetime) -> int:
    check_name(name, "team name")
    if connection.execute(select(teams.c.id).where(teams.c.name == name)).first():
        raise NameTaken(f"there is already a team {name!r}")
    return int(connection.execute(insert(teams).values(name=name, created=now)).inserted_primary_key[0])  # type: ignore[index]


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


def add_user(connection: Connection, name: str, password: str, team: int | None, organizer: bool, now: datetime) -> int:
    check_name(name, "user name")
    if len(password) < MIN_PASSWORD:
        raise UsageError(f"a password needs at least {MIN_PASSWORD} characters")
    if connection.execute(select(users.c.id).where(users.c.name == name)).first():
        raise NameTaken(f"there is already a user {name!r}")
    values = {"name": name, "password_hash": hash_password(password), "team_id": team, "organizer": organizer, "created": now}
    return int(connection.execute(insert(users).values(**values)).inserted_primary_key[0])  # type: ignore[index]


def new_token(connection: Connection, team: int | None, organizer: bool, label: str, now: datetime) -> str:
    """A new API token for a team (or an organizer); returned once, stored hashed."""
    token = "pdm_" + secrets.token_urlsafe(32)
    connection.execute(insert(tokens).values(digest=token_digest(token), team_id=team, organizer=organizer, label=label[:128], created=now))
    return token


def caller_of(connection: Connection, token: str) -> Caller | None:
    row = connection.execute(
        select(tokens.c.team_id, tokens.c.organizer, teams.c.name).select_from(tokens.outerjoin(teams)).where(tokens.c.digest == token_digest(token))
    ).first()
    return None if row is None else Caller(row.team_id, row.name, bool(row.organizer))


def log_in(connection: Connection, name: str, password: str, now: datetime, kind: str = "login") -> str | None:
    """A new token (``kind`` "session": a web page session) for a user whose password matches; ``None`` otherwise (the same time either way)."""
    row = connection.execute(select(users).where(users.c.name == name)).first()
    stored = row.password_hash if row is not None else _dummy_hash()
    if not verify_password(password, stored) or row is None:
        return None
    return new_token(connection, row.team_id, bool(row.organizer), f"{kind} of {name}", now)


SESSION = timedelta(hours=12)  # a web session's life from its login


def session_caller(connection: Connection, token: str, now: datetime) -> Caller | None:
    """The caller of a web session token less than :data:`SESSION` old; API tokens are no sessions."""
    row = connection.execute(
        select(tokens.c.team_id, tokens.c.organizer, teams.c.name)
        .select_from(tokens.outerjoin(teams))
        .where(tokens.c.digest == token_digest(token), tokens.c.label.startswith("session of "), tokens.c.created > now - SESSION)
    ).first()
    return None if row is None else Caller(row.team_id, row.name, bool(row.organizer))


def end_session(connection: Connection, token: str) -> None:
    connection.execute(delete(tokens).where(tokens.c.digest == token_digest(token), tokens.c.label.startswith("session of ")))


def csrf_token(session: str) -> str:
    """The form token of a session: derived from it, so a page of another site cannot know it."""
    return hashlib.sha256(b"csrf:" + session.encode()).hexdigest()[:32]


@cache
def _dummy_hash() -> str:
    """A hash to check an unknown user's password against, so that it costs one scrypt too."""
    return hash_password(secrets.token_hex(16))
