"""Logging in and registering, the same way from the page and the API: limited, hashed off the transactions.

:func:`log_in` reserves a try with the database limiter (:mod:`podium.service.limiter`)
in one short transaction, reads the user's hash in another, checks the password
on the hashing pool (:mod:`podium.service.hashing`) outside any transaction,
and writes the new token in a third. An unknown user costs one scrypt too.
"""

from __future__ import annotations

from datetime import timedelta
from typing import Any

from fastapi import HTTPException, Request
from fastapi.concurrency import run_in_threadpool

from podium.core.errors import UsageError
from podium.service import accounts, limiter
from podium.service.database import reading, writing
from podium.service.proxies import client_address

API_TOKEN_DAYS = 30  # an API token from a log-in lasts this long unless asked for less or more (at most MAX_TOKEN_DAYS)
MAX_TOKEN_DAYS = 365


async def _reserve(service: Any, kind: str, address: str, user: str) -> int:
    def reserve() -> int | None:
        with writing(service.engine) as connection:
            return limiter.reserve(connection, kind, address, user, service.clock())

    attempt = await run_in_threadpool(reserve)
    if attempt is None:
        raise HTTPException(429, f"too many {'log-in' if kind == limiter.LOGIN else 'registration'} attempts from your address; {limiter.BUDGETS[kind].wait()}")
    return attempt


async def log_in(service: Any, request: Request, name: str, password: str, *, session: bool, days: int = API_TOKEN_DAYS) -> str:
    """A new token (``session``: a web page session's) for the user, or 401, 429 or 503 (:class:`HTTPException`)."""
    attempt = await _reserve(service, limiter.LOGIN, client_address(request, service.proxies), name)

    def user() -> Any:
        with reading(service.engine) as connection:
            return accounts.user_row(connection, name)

    row = await run_in_threadpool(user)
    matches = await service.hashes.run(accounts.verify_password, password, row.password_hash if row is not None else accounts.dummy_hash())
    if row is None or not matches:
        raise HTTPException(401, "wrong user name or password")
    life = accounts.SESSION if session else timedelta(days=days)

    def issue() -> str:
        now = service.clock()
        with writing(service.engine) as connection:
            limiter.forget(connection, attempt)
            label = f"{'session' if session else 'login'} of {name}"
            return accounts.new_token(connection, row.team_id, bool(row.organizer), label, now, expires=now + life, user_id=row.id, session=session)

    return await run_in_threadpool(issue)


async def register(service: Any, request: Request, team: str, user: str, password: str) -> str:
    """Register a team and its first member; a token for the team. 409 for a taken name (the same answer for a team or a user), 422, 429."""
    try:
        accounts.check_name(team, "team name")
        accounts.check_name(user, "user name")
        accounts.check_password(password, user, team)
    except UsageError as exc:
        raise HTTPException(422, str(exc)) from None
    await _reserve(service, limiter.REGISTER, client_address(request, service.proxies), user)
    hashed = await service.hashes.run(accounts.hash_password, password)

    def add() -> str:
        now = service.clock()
        with writing(service.engine) as connection:
            team_id = accounts.add_team(connection, team, now)
            user_id = accounts.add_user(connection, user, password, team_id, False, now, hashed=hashed)
            return accounts.new_token(connection, team_id, False, f"registration of {user}", now, user_id=user_id)

    try:
        return await run_in_threadpool(add)
    except accounts.NameTaken:
        raise HTTPException(409, "this team name or user name is taken; choose others") from None
