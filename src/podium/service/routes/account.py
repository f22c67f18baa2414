"""One's account through the API: address and notifications, password, the team's invitation code, a team created or
joined in the contest (:mod:`podium.service.joining`); password-reset links."""

from __future__ import annotations

import dataclasses
from datetime import timedelta
from typing import Annotated, Any

from fastapi import APIRouter, Depends, HTTPException, Request
from pydantic import BaseModel, Field

from podium.core.errors import UsageError
from podium.service import account_pages, invitations, joining, mail, resets, rosters
from podium.service.accounts import Caller
from podium.service.database import writing
from podium.service.deps import CallerDep, ContestDep, ReadingDep, Service, ServiceDep, organizer
from podium.service.models import NewToken
from podium.service.tables import users

router = APIRouter()


class Account(BaseModel):
    user: str
    team: str | None
    email: str | None = Field(description="Where notifications go (null: no mail)")
    email_confirmed: bool = Field(
        description="Whether the address is confirmed: only a confirmed one gets mail (a link was mailed to it)"
    )
    notifications: dict[str, bool] = Field(
        description="Each kind of notification, on or off: " + "; ".join(f"{k}: {v}" for k, v in mail.KINDS.items())
    )


class AccountChange(BaseModel):
    email: str | None = Field(None, description="A new address; empty or null: no mail")
    notifications: dict[str, bool] | None = Field(
        None, description="Kinds to turn on (true) or off (false); the others stay"
    )


class PasswordChange(BaseModel):
    current: str
    password: str


class Invitation(BaseModel):
    team: str
    invitation: str = Field(description="The code a teammate signs up with (POST /api/register with `invitation`)")
    expires: str = Field(
        description="When the code stops working (ISO 8601, UTC); the next look after it makes a new one"
    )


class NewTeamIn(BaseModel):
    name: str = Field(
        min_length=1, max_length=64, description="The team's name, unique in the contest whatever the case"
    )
    accept_terms: bool = Field(False, description="You accept the contest's terms (needed when it has a terms page)")


class JoiningTeam(BaseModel):
    invitation: str = Field(
        min_length=1,
        max_length=64,
        description="The team's invitation code (its members see it: GET /api/team/invitation)",
    )
    accept_terms: bool = Field(False, description="You accept the contest's terms (needed when it has a terms page)")


class TeamJoined(BaseModel):
    contest: str
    team: str
    created: bool = Field(description="True: a new team, you its first member; false: you joined it by its code")
    approved: bool = Field(description="False: the team waits for the organizers' approval before it may submit")
    members: int = Field(description="How many members the team has now")


class TeamLeft(BaseModel):
    contest: str
    team: str = Field(description="The team you left")
    members: int = Field(description="How many members the team has now")
    removed: bool = Field(description="True: you were its last member and it had sent nothing, so it is gone")


class ResetLink(BaseModel):
    user: str
    link: str = Field(description="Sets the user's password once, within the hour")
    expires_in_s: int


class Confirmation(BaseModel):
    token: str = Field(description="The last part of the confirmation link mailed to the address")


class Confirmed(BaseModel):
    user: str = Field(description="Whose address is confirmed")


class ResetRequest(BaseModel):
    user: str


class ResetAsked(BaseModel):
    detail: str


class ResetDone(BaseModel):
    user: str = Field(description="Whose password is set")


class ResetUse(BaseModel):
    token: str = Field(description="The last part of the reset link")
    password: str


def _user_id(who: Any) -> int:
    if who.user_id is None:
        raise HTTPException(403, "this is a team's token, not a user's: log in (POST /api/tokens) to reach an account")
    return int(who.user_id)


def _account(connection: Any, user_id: int, team: str | None) -> dict[str, Any]:
    row = connection.execute(users.select().where(users.c.id == user_id)).one()
    off = mail.kinds_off(row)
    return {
        "user": row.name,
        "team": team,
        "email": row.email,
        "email_confirmed": bool(row.email_confirmed),
        "notifications": {kind: kind not in off for kind in mail.KINDS},
    }


@router.get("/account", response_model=Account, summary="Your account: your address and which notifications you get")
def account(who: CallerDep, connection: ReadingDep) -> dict[str, Any]:
    return _account(connection, _user_id(who), who.team)


@router.put(
    "/account",
    response_model=Account,
    summary="Change your address or which notifications you get",
    responses={422: {"description": "not an address, or an unknown kind"}},
)
def change_account(service: ServiceDep, who: CallerDep, body: AccountChange) -> dict[str, Any]:
    user_id = _user_id(who)
    with writing(service.engine) as connection:
        current = _account(connection, user_id, who.team)
        email = current["email"] if "email" not in body.model_fields_set else body.email
        wanted = current["notifications"] | (body.notifications or {})
        try:
            mail.set_mail(
                connection, user_id, email or None, {kind for kind, on in wanted.items() if not on}, now=service.clock()
            )
        except UsageError as exc:
            raise HTTPException(422, str(exc)) from None
        return _account(connection, user_id, who.team)


@router.post(
    "/account/password",
    response_model=NewToken,
    summary="Change your password: every token of yours ends; a new API token",
    responses={401: {"description": "wrong current password"}, 422: {"description": "a weak new password"}},
)
async def change_password(
    service: ServiceDep, request: Request, who: CallerDep, body: PasswordChange
) -> dict[str, Any]:
    return {
        "token": await account_pages.change_password(
            service, request, who, body.current, body.password, body.password, session=False
        )
    }


@router.get("/team/invitation", response_model=Invitation, summary="Your team's invitation code")
def invitation(service: ServiceDep, who: CallerDep) -> dict[str, Any]:
    return _invitation(service, who, renew=False)


@router.post(
    "/team/invitation",
    response_model=Invitation,
    summary="A new invitation code for your team (the old one stops working)",
)
def renew_invitation(service: ServiceDep, who: CallerDep) -> dict[str, Any]:
    return _invitation(service, who, renew=True)


def _invitation(service: Service, who: Caller, renew: bool) -> dict[str, Any]:
    if who.team_id is None:
        raise HTTPException(403, "organizers have no team to invite to")
    with writing(service.engine) as connection:
        code = invitations.code_of(connection, who.team_id, service.clock(), renew=renew)
    return {"team": who.team, "invitation": code.code, "expires": code.expires.isoformat()}


JOINING: dict[int | str, dict[str, Any]] = {
    403: {"description": "registration is closed, the contest takes no sign-ups, you organize it, or you are banned"},
    404: {"description": "no team of this contest has this invitation code"},
    409: {"description": "you are in a team of this contest already (named), the name is taken, or the team is full"},
    410: {"description": "the invitation code has expired or was revoked"},
    422: {"description": "a bad team name, or the contest's terms not accepted"},
}


@router.post(
    "/team",
    status_code=201,
    response_model=TeamJoined,
    summary="Create a team in this contest, you its first member (a user's log-in, while registration is open)",
    responses=JOINING,
)
def create_team(service: ServiceDep, contest: ContestDep, who: CallerDep, body: NewTeamIn) -> dict[str, Any]:
    return dataclasses.asdict(account_pages.joined(service, contest, who, body.accept_terms, joining.create, body.name))


@router.post(
    "/team/join",
    status_code=201,
    response_model=TeamJoined,
    summary="Join a team of this contest by its invitation code (a user's log-in, while registration is open)",
    responses=JOINING,
)
def join_team(service: ServiceDep, contest: ContestDep, who: CallerDep, body: JoiningTeam) -> dict[str, Any]:
    return dataclasses.asdict(
        account_pages.joined(service, contest, who, body.accept_terms, joining.join, body.invitation)
    )


@router.post(
    "/team/leave",
    response_model=TeamLeft,
    summary="Leave your team in this contest, until it sends its first submission (a user's log-in, until teams are final)",
    responses={
        403: {"description": "a team's token, a contest without sign-ups, teams final, or the team banned"},
        409: {"description": "you are in no team here, or the team has sent a submission: its members are final"},
    },
)
def leave_team(service: ServiceDep, contest: ContestDep, who: CallerDep) -> dict[str, Any]:
    return dataclasses.asdict(account_pages.left(service, contest, who))


@router.post(
    "/users/{name}/reset",
    response_model=ResetLink,
    summary="Organizers: a one-time link that sets the password of a member of one of the contest's teams (valid for an hour)",
    responses={
        403: {"description": "the user organizes or administers: only the site's administrator resets them"},
        404: {"description": "no such user"},
    },
)
def reset_link(
    service: ServiceDep, served: ContestDep, request: Request, name: str, who: Annotated[Caller, Depends(organizer)]
) -> dict[str, Any]:
    contest = served.id
    try:
        with writing(service.engine) as connection:
            token = rosters.reset_token(connection, who, contest, name, service.clock())
    except UsageError as exc:
        raise HTTPException(403 if isinstance(exc, rosters.NotYours) else 404, str(exc)) from None
    link = account_pages.absolute_url(service, request, resets.PATH + token)
    return {"user": name, "link": link, "expires_in_s": int(resets.LIFE / timedelta(seconds=1))}


@router.post(
    "/reset/request",
    status_code=202,
    response_model=ResetAsked,
    summary="Mail yourself a password-reset link (the same answer whether the user exists or not)",
    responses={429: {"description": "too many requests from this address"}},
)
async def request_reset(service: ServiceDep, request: Request, body: ResetRequest) -> dict[str, Any]:
    await account_pages.request_reset(service, request, body.user[:64])
    return {"detail": "if this user has an e-mail address, a link is on its way"}


@router.post(
    "/reset",
    response_model=ResetDone,
    summary="Set a password with a reset link's token (once; every token of the user ends)",
    responses={404: {"description": "unknown, used or expired link"}, 422: {"description": "a weak password"}},
)
async def use_reset(service: ServiceDep, request: Request, body: ResetUse) -> dict[str, Any]:
    return {"user": await account_pages.use_reset(service, request, body.token, body.password)}


@router.post(
    "/account/confirm",
    response_model=Confirmed,
    summary="Confirm your address with the token of the link mailed to it",
    responses={404: {"description": "unknown or spent token"}},
)
def confirm_address(service: ServiceDep, body: Confirmation) -> dict[str, Any]:
    with writing(service.engine) as connection:
        name = mail.confirm(connection, body.token)
    if name is None:
        raise HTTPException(
            404, "this confirmation link is unknown or used already: save your address again for a new one"
        )
    return {"user": name}
