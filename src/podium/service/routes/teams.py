"""The contest's teams through the API, for its organizers (and the site's administrator): list, rename, remove, members added and removed.

Bans and approvals are in :mod:`podium.service.routes.organizer`; a member's
password-reset link is ``POST /api/users/{name}/reset``. What a removal may
do, and whose password an organizer may reset: :mod:`podium.service.rosters`.
"""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, HTTPException
from pydantic import BaseModel, Field

from podium.contest import Contest
from podium.core.errors import UsageError
from podium.service import rosters
from podium.service.accounts import NameTaken
from podium.service.database import reading, writing
from podium.service.deps import ContestDep, Service, ServiceDep
from podium.service.routes.organizer import OrganizerDep

router = APIRouter(prefix="/teams")

NAME = Annotated[str, Field(min_length=1, max_length=64)]


class TeamRow(BaseModel):
    """A team of the contest as its organizers see it."""

    team: str
    members: list[str] = Field(description="Its members' user names")
    submissions: int = Field(description="Every submission it sent, whatever became of it")
    last: str | None = Field(description="When it sent its last submission (ISO 8601)")
    banned: bool
    approved: bool = Field(description="False: it waits for an organizer's approval before it may submit")
    created: str


class NewName(BaseModel):
    name: NAME = Field(description="The team's new name, unique in the contest whatever the case")


class NewMember(BaseModel):
    user: NAME = Field(description="A user of the server, in no other team of this contest")


class TeamRemoved(BaseModel):
    team: str
    removed: bool


def _row(row: dict[str, Any]) -> dict[str, Any]:
    return {**row, "last": rosters.stamp(row["last"]), "created": rosters.stamp(row["created"])}


def _changed(service: Service, contest: Contest, change: Any, *args: Any) -> Any:
    """``change(connection, contest.id, *args)`` in a write transaction, its refusals answered by :func:`status_of`."""
    try:
        with writing(service.engine) as connection:
            return change(connection, contest.id, *args)
    except UsageError as exc:
        raise HTTPException(status_of(exc), str(exc)) from None


def status_of(refusal: UsageError) -> int:
    """The HTTP status of a roster's refusal: 404 a missing team or user, 403 an account out of reach, 409 a conflict, 422 a bad name."""
    if isinstance(refusal, rosters.Missing):
        return 404
    if isinstance(refusal, rosters.NotYours):
        return 403
    return 409 if isinstance(refusal, rosters.Conflict | NameTaken) else 422


@router.get("", response_model=list[TeamRow], summary="Organizers: the contest's teams, their members and submissions")
def list_teams(service: ServiceDep, contest: ContestDep, who: OrganizerDep) -> list[dict[str, Any]]:
    with reading(service.engine) as connection:
        return [_row(row) for row in rosters.roster(connection, contest.id)]


@router.get(
    "/{name}", response_model=TeamRow, summary="Organizers: one team", responses={404: {"description": "no such team"}}
)
def get_team(service: ServiceDep, contest: ContestDep, who: OrganizerDep, name: str) -> dict[str, Any]:
    return _row(_changed(service, contest, rosters.team, name))


@router.patch(
    "/{name}",
    response_model=TeamRow,
    summary="Organizers: rename a team (its members, tokens and submissions stay its own)",
    responses={404: {"description": "no such team"}, 409: {"description": "the name is taken"}},
)
def rename_team(
    service: ServiceDep, contest: ContestDep, who: OrganizerDep, name: str, body: NewName
) -> dict[str, Any]:
    return _row(_changed(service, contest, rosters.rename, name, body.name))


@router.delete(
    "/{name}",
    response_model=TeamRemoved,
    summary="Organizers: remove a team that has sent nothing (one that has is banned instead: its results stay on the record)",
    responses={404: {"description": "no such team"}, 409: {"description": "the team has submissions: ban it"}},
)
def remove_team(service: ServiceDep, contest: ContestDep, who: OrganizerDep, name: str) -> dict[str, Any]:
    _changed(service, contest, rosters.remove, name)
    return {"team": name, "removed": True}


@router.post(
    "/{name}/members",
    status_code=201,
    response_model=TeamRow,
    summary="Organizers: add a user to a team (at most one team per contest)",
    responses={404: {"description": "no such team or user"}, 409: {"description": "in a team of this contest already"}},
)
def add_member(
    service: ServiceDep, contest: ContestDep, who: OrganizerDep, name: str, body: NewMember
) -> dict[str, Any]:
    return _row(_changed(service, contest, rosters.add_member, name, body.user))


@router.delete(
    "/{name}/members/{user}",
    response_model=TeamRow,
    summary="Organizers: take a user out of a team (their account stays)",
    responses={404: {"description": "no such team or user"}, 409: {"description": "not a member of the team"}},
)
def remove_member(service: ServiceDep, contest: ContestDep, who: OrganizerDep, name: str, user: str) -> dict[str, Any]:
    return _row(_changed(service, contest, rosters.remove_member, name, user))
