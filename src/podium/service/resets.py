"""One-time password-reset links: issued by an organizer (``podium user reset``, the organizers' page) or mailed on request.

A link carries 32 random bytes; the database keeps only their SHA-256 (as an
API token's), so a copy of the database resets nobody. A link works once and
for :data:`LIFE`; issuing a new one for a user cancels the one before. Using
it sets the password and ends every session and token of that user.
"""

from __future__ import annotations

import secrets
from datetime import datetime, timedelta
from typing import Any

from sqlalchemy import Connection, delete, insert, or_, select, update

from podium.core.errors import UsageError
from podium.service.accounts import token_digest, user_row
from podium.service.tables import resets, tokens, users

LIFE = timedelta(hours=1)
PATH = "/reset/"  # the page of a link: PATH + its token


def issue(connection: Connection, name: str, now: datetime) -> tuple[int, str]:
    """A new link's token for the user ``name`` (:class:`UsageError` when there is none), and the user's id."""
    row = user_row(connection, name)
    if row is None:
        raise UsageError(f"no user {name!r}")
    token = secrets.token_urlsafe(32)
    connection.execute(
        delete(resets).where(or_(resets.c.user_id == row.id, resets.c.expires <= now))
    )  # the user's earlier link, and every expired one
    connection.execute(
        insert(resets).values(digest=token_digest(token), user_id=row.id, created=now, expires=now + LIFE)
    )
    return row.id, token


def holder(connection: Connection, token: str, now: datetime) -> Any:
    """The user a link that has not expired nor been used resets (``None`` otherwise)."""
    query = (
        select(users)
        .join(resets, resets.c.user_id == users.c.id)
        .where(resets.c.digest == token_digest(token[:128]), resets.c.expires > now)
    )
    return connection.execute(query).first()


def redeem(connection: Connection, token: str, hashed: str, now: datetime) -> str:
    """Set the password (its hash, computed already) of the link's user and spend the link; the user's name.

    :class:`UsageError` when the link is unknown, used or expired; checked and spent in one transaction, so two uses race for one success.
    """
    row = holder(connection, token, now)
    if (
        row is None
        or connection.execute(delete(resets).where(resets.c.digest == token_digest(token[:128]))).rowcount != 1
    ):
        raise UsageError(
            "this reset link is unknown, used already or expired (a link works once, for an hour): ask for a new one"
        )
    connection.execute(update(users).where(users.c.id == row.id).values(password_hash=hashed))
    connection.execute(delete(tokens).where(tokens.c.user_id == row.id))
    return str(row.name)
