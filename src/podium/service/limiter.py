"""The log-in limiter: every way of logging in (the page, ``POST /api/tokens``) and registering shares it, in the database.

Each try is a row of ``attempts`` (kind, client address, user name, time),
written in a short transaction *before* the password is hashed, so processes
and restarts share it and racing tries are all counted. A try is refused (429)
when its address has :attr:`Budget.per_user` tries for that user name, or
:attr:`Budget.per_address` tries in all, within the window. A successful
log-in deletes its own row: only failures and tries in flight count. Keyed by
(address, user), strangers elsewhere cannot lock a real user out; the
per-address budget stops one address from trying many names. Rows older than
the window are deleted at every try, and a name is cut to 64 characters, so
the table holds at most ``per_address`` rows per address of the last window.
On PostgreSQL a transaction-scoped advisory lock per address makes the count
and the insert one step (SQLite's ``BEGIN IMMEDIATE`` already does).
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from datetime import datetime, timedelta

from sqlalchemy import Connection, delete, func, insert, select, text

from podium.service.tables import attempts

LOGIN, REGISTER, RESET = "login", "register", "reset"
WORDS = {LOGIN: "log-in", REGISTER: "registration", RESET: "password-reset"}


@dataclass(frozen=True)
class Budget:
    per_user: int  # tries of one address for one user name
    per_address: int  # tries of one address in all
    window: timedelta

    def wait(self) -> str:
        return f"wait {self.window.total_seconds() / 60:g} minutes"


BUDGETS = {
    LOGIN: Budget(per_user=10, per_address=50, window=timedelta(minutes=5)),
    REGISTER: Budget(per_user=5, per_address=5, window=timedelta(hours=1)),
    RESET: Budget(per_user=3, per_address=10, window=timedelta(hours=1)),  # each request may send a message: few
}


def reserve(connection: Connection, kind: str, address: str, user: str, now: datetime) -> int | None:
    """Record a try (call in a write transaction); its row id, or ``None`` when the address has used its budget."""
    budget = BUDGETS[kind]
    address, user = address[:64], user[:64]
    if connection.dialect.name == "postgresql":
        key = int.from_bytes(hashlib.sha256(f"{kind}:{address}".encode()).digest()[:8], "big", signed=True)
        connection.execute(text("SELECT pg_advisory_xact_lock(:key)"), {"key": key})
    connection.execute(delete(attempts).where(attempts.c.kind == kind, attempts.c.at <= now - budget.window))
    mine = (attempts.c.kind == kind, attempts.c.address == address)
    count = lambda *where: int(
        connection.execute(select(func.count()).select_from(attempts).where(*mine, *where)).scalar_one()
    )
    if count() >= budget.per_address or count(attempts.c.user == user) >= budget.per_user:
        return None
    row = connection.execute(insert(attempts).values(kind=kind, address=address, user=user, at=now))
    return int(row.inserted_primary_key[0])  # type: ignore[index]


def forget(connection: Connection, attempt: int) -> None:
    """A try that succeeded no longer counts."""
    connection.execute(delete(attempts).where(attempts.c.id == attempt))
