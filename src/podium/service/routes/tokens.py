"""Log-ins, registration and tokens: ``/api/register``, ``/api/tokens``."""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter, HTTPException, Request
from pydantic import BaseModel, Field

from podium.service import accounts, logins
from podium.service.accounts import Caller
from podium.service.database import writing
from podium.service.deps import CallerDep, ContestDep, ReadingDep, ServiceDep, known_id
from podium.service.models import NewTeam, NewToken, Revoked, TokenRow

router = APIRouter()


class Credentials(BaseModel):
    user: str
    password: str
    days: int = Field(
        logins.API_TOKEN_DAYS, ge=1, le=logins.MAX_TOKEN_DAYS, description="How many days the token lasts"
    )


class Registration(BaseModel):
    team: str | None = Field(None, description="The new team's name (or give `invitation`)")
    invitation: str | None = Field(
        None, description="A team's invitation code, to join it (its members see it: GET /api/team/invitation)"
    )
    user: str
    password: str
    email: str | None = Field(None, description="Where notifications go (optional)")


@router.post(
    "/register",
    status_code=201,
    response_model=NewTeam,
    summary="Register a new team and its first member (if the contest allows it)",
    responses={
        403: {"description": "the contest takes no sign-ups, its registration has closed, or the team is banned"},
        404: {"description": "no team has this invitation code"},
        410: {"description": "the invitation code has expired or was revoked"},
        409: {"description": "the team or user name is taken (the same answer for either), or the team is full"},
        429: {"description": "too many registrations from this address"},
    },
)
async def register(service: ServiceDep, contest: ContestDep, request: Request, body: Registration) -> dict[str, Any]:
    if not contest.service.self_registration:
        raise HTTPException(403, "this contest does not take self-registration; ask the organizers for a team token")
    team, token = await logins.register(
        service, request, body.team, body.user, body.password, invitation=body.invitation, email=body.email
    )
    return {"team": team, "token": token}


@router.post(
    "/tokens",
    status_code=201,
    response_model=NewToken,
    summary="Log in: a new API token for a member or organizer (it lasts `days` days)",
    responses={401: {"description": "wrong user name or password"}, 429: {"description": "too many log-in attempts"}},
)
async def log_in(service: ServiceDep, request: Request, body: Credentials) -> dict[str, Any]:
    return {"token": await logins.log_in(service, request, body.user, body.password, session=False, days=body.days)}


@router.get(
    "/tokens",
    response_model=list[TokenRow],
    summary="Your team's tokens that have not expired (organizers: every token); never the tokens themselves",
)
def list_tokens(service: ServiceDep, who: CallerDep, connection: ReadingDep) -> list[dict[str, Any]]:
    return accounts.token_rows(connection, _whose(who), service.clock(), who.contest)


def _whose(who: Caller) -> int | None:
    """The team whose tokens the caller manages (``None``: every token, for an organizer); 403 for a user in no team of the contest."""
    if who.organizer:
        return None
    if who.team_id is None:
        raise HTTPException(403, "you are in no team of this contest: there are no tokens of yours to manage here")
    return who.team_id


@router.delete(
    "/tokens/{token_id}", response_model=Revoked, summary="Revoke a token of your team's (organizers: any token)"
)
def revoke_token(service: ServiceDep, token_id: int, who: CallerDep) -> dict[str, Any]:
    with writing(service.engine) as connection:
        if not known_id(token_id) or not accounts.revoke_token(connection, token_id, _whose(who), who.contest):
            raise HTTPException(404, f"no token {token_id} of yours")
    return {"id": token_id, "revoked": True}
