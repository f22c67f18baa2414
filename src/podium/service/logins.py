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
from podium.service import accounts, invitations, joining, limiter, mail, state
from podium.service.database import reading, writing
from podium.service.deps import contest_of
from podium.service.proxies import client_address

API_TOKEN_DAYS = 30  # an API token from a log-in lasts this long unless asked for less or more (at most MAX_TOKEN_DAYS)
MAX_TOKEN_DAYS = 365


async def reserve(service: Any, kind: str, address: str, user: str) -> int:
    """Count a try of ``kind`` (a log-in, registration or reset request) from ``address``: its row id, or 429 beyond the budget."""

    def reserve() -> int | None:
        with writing(service.engine) as connection:
            return limiter.reserve(connection, kind, address, user, service.clock())

    attempt = await run_in_threadpool(reserve)
    if attempt is None:
        raise HTTPException(
            429, f"too many {limiter.WORDS[kind]} attempts from your address; {limiter.BUDGETS[kind].wait()}"
        )
    return attempt


async def log_in(
    service: Any, request: Request, name: str, password: str, *, session: bool, days: int = API_TOKEN_DAYS
) -> str:
    """A new token (``session``: a web page session's) for the user, or 401, 429 or 503 (:class:`HTTPException`)."""
    attempt = await reserve(service, limiter.LOGIN, client_address(request, service.proxies), name)

    def user() -> tuple[Any, str | None]:
        with reading(service.engine) as connection:
            row = accounts.user_row(connection, name)
            served = state.served_ids(connection)  # a log-in to the one contest served, else to the whole site
            contest = served[0] if len(served) == 1 else None
            return row, None if row is None else accounts.login_refusal(connection, row, contest)

    row, refused = await run_in_threadpool(user)
    matches = await service.hashes.run(
        accounts.verify_password, password, row.password_hash if row is not None else accounts.dummy_hash()
    )
    if row is None or not matches:
        raise HTTPException(401, "wrong user name or password")
    if refused is not None:  # told only to who knows the password
        raise HTTPException(403, refused)
    life = accounts.SESSION if session else timedelta(days=days)

    def issue() -> str:
        now = service.clock()
        with writing(service.engine) as connection:
            limiter.forget(connection, attempt)
            label = f"{'session' if session else 'login'} of {name}"
            return accounts.new_token(
                connection,
                None,  # a user\'s: their role is read in the contest of each request
                False,
                label,
                now,
                expires=now + life,
                user_id=row.id,
                session=session,
            )

    return await run_in_threadpool(issue)


async def register(
    service: Any,
    request: Request,
    team: str | None,
    user: str,
    password: str,
    *,
    invitation: str | None = None,
    email: str | None = None,
    session: bool = False,
) -> tuple[str, str]:
    """Register a user with a new team (``team``) or joining one (``invitation``, a code its members see); the team's name and a token.

    The token is the team's API token, or (``session``) a web session's. 409 for a taken name (the same answer for a team or a user)
    or a full team, 404 for an unknown invitation code, 410 for one expired or revoked, 403 once registration has closed
    (:mod:`podium.service.joining`) or for a banned team, 422 for a bad name, password or address, 429.
    """
    try:
        if (team is None) == (invitation is None):
            raise UsageError("give a team to create or an invitation code to join one, not both")
        if team is not None:
            accounts.check_name(team, "team name")
        accounts.check_name(user, "user name")
        accounts.check_password(password, user, team or "")
        if email:
            mail.check_address(email)
    except UsageError as exc:
        raise HTTPException(422, str(exc)) from None
    await reserve(service, limiter.REGISTER, client_address(request, service.proxies), user)
    hashed = await service.hashes.run(accounts.hash_password, password)
    served = contest_of(service, request)
    approval = served.service.approval

    def add() -> tuple[str, str]:
        now = service.clock()  # read once: it decides whether registration is open and dates the rows
        with writing(service.engine) as connection:
            try:
                joining.check_open(served, now)
                if invitation is None:
                    name, team_id = (
                        str(team),
                        accounts.add_team(connection, str(team), now, served.id, approved=not approval),
                    )
                else:
                    team_id, name = invitations.team_of_code(connection, invitation.strip(), served.id, now)
                    joining.check_room(connection, served, team_id)
            except invitations.Refused as refused:  # joining's refusals too
                raise HTTPException(refused.status, str(refused)) from None
            user_id = accounts.add_user(connection, user, password, team_id, False, now, hashed=hashed)
            if email:
                mail.set_mail(connection, user_id, email, now=now)
            label, expires = (
                (f"session of {user}", now + accounts.SESSION) if session else (f"registration of {user}", None)
            )
            return name, accounts.new_token(
                connection, team_id, False, label, now, expires=expires, user_id=user_id, session=session
            )

    try:
        return await run_in_threadpool(add)
    except accounts.NameTaken:
        raise HTTPException(409, "this team name or user name is taken; choose others") from None
