"""What organizers do through the API (an organizer's token): the dashboard's figures, bans and approvals, invitation codes revoked, a re-run, the archives, announcements.

Announcements are read by anyone (``GET /api/announcements``); everything
else here answers a team's token 403.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from fastapi import APIRouter, Depends, HTTPException, Query
from fastapi.responses import Response, StreamingResponse
from pydantic import BaseModel, Field
from sqlalchemy import Connection, select

from podium.contest import Contest
from podium.core.errors import UsageError
from podium.service import accounts, announcements, dashboard, exports, invitations, rosters, standing
from podium.service.accounts import Caller
from podium.service.database import writing
from podium.service.deps import ContestDep, ReadingDep, Service, ServiceDep, known_id, organizer
from podium.service.filenames import content_disposition
from podium.service.intake import Refused
from podium.service.rescore import rerun
from podium.service.tables import users

router = APIRouter()
OrganizerDep = Annotated[Caller, Depends(organizer)]


class Day(BaseModel):
    day: str = Field(description="A UTC day, YYYY-MM-DD")
    submissions: int


class ActiveTeams(BaseModel):
    day: int = Field(description="Teams that sent a submission in the last 24 hours")
    week: int = Field(description="... in the last 7 days")


class QueueFigures(BaseModel):
    queued: int
    running: int
    oldest_wait_s: float | None = Field(description="How long the oldest queued job has waited")
    ended_last_hour: int
    median_wait_s: float | None = Field(description="Of the submissions that ended in the last hour: queued to started")
    median_run_s: float | None = Field(description="... started to ended")


class WorkerHealth(BaseModel):
    worker: str
    host: str
    last_beat: str
    age_s: float
    alive: bool
    job: int | None
    submission: int | None


class Failures(BaseModel):
    status: str = Field(description="rejected, failed or error")
    cause: str = Field(description="; ".join(f"{k}: {v}" for k, v in dashboard.CAUSES.items()))
    label: str
    count: int


class Dashboard(BaseModel):
    """The contest at a glance: its submissions, teams, queue, workers and failures."""

    now: str
    per_day: list[Day] = Field(description=f"The last {dashboard.DAYS} UTC days, today last")
    active_teams: ActiveTeams
    queue: QueueFigures
    workers: list[WorkerHealth]
    failures: list[Failures]


class TeamStanding(BaseModel):
    team: str
    banned: bool
    approved: bool


class UserStanding(BaseModel):
    user: str
    banned: bool


class Rerun(BaseModel):
    id: int
    round: int = Field(description="The round its new result is kept under; earlier results stay in theirs")


class Announcement(BaseModel):
    id: int
    text: str = Field(description="Markdown")
    html: str = Field(description="The text as HTML, raw HTML escaped")
    author: str | None
    created: str


class NewAnnouncement(BaseModel):
    text: str = Field(
        description=f"Markdown (raw HTML is shown as text), at most {announcements.MAX_TEXT:,} characters"
    )


class InvitationRevoked(BaseModel):
    team: str
    revoked: bool = Field(description="Whether the team had a working code, which no longer works")


class Removed(BaseModel):
    id: int
    removed: bool


@router.get("/dashboard", response_model=Dashboard, summary="Organizers: the contest's figures at a glance")
def dashboard_figures(
    service: ServiceDep, contest: ContestDep, who: OrganizerDep, connection: ReadingDep
) -> dict[str, Any]:
    return dashboard.figures(connection, contest.id, contest.track_ids(), service.clock())


def _changed(service: Service, change: Any, *args: Any, **kwargs: Any) -> dict[str, Any]:
    try:
        with writing(service.engine) as connection:
            answer: dict[str, Any] = change(connection, *args, **kwargs)
            return answer
    except UsageError as exc:
        raise HTTPException(404, str(exc)) from None


@router.post("/teams/{name}/ban", response_model=TeamStanding, summary="Organizers: ban a team (kept, off the board)")
def ban_team(service: ServiceDep, contest: ContestDep, who: OrganizerDep, name: str) -> dict[str, Any]:
    return _changed(service, standing.set_team, contest.id, name, banned=True)


@router.post("/teams/{name}/unban", response_model=TeamStanding, summary="Organizers: lift a team's ban")
def unban_team(service: ServiceDep, contest: ContestDep, who: OrganizerDep, name: str) -> dict[str, Any]:
    return _changed(service, standing.set_team, contest.id, name, banned=False)


@router.post(
    "/teams/{name}/approve", response_model=TeamStanding, summary="Organizers: approve a team waiting to submit"
)
def approve_team(service: ServiceDep, contest: ContestDep, who: OrganizerDep, name: str) -> dict[str, Any]:
    return _changed(service, standing.set_team, contest.id, name, approved=True)


@router.delete(
    "/teams/{name}/invitation",
    response_model=InvitationRevoked,
    summary="Organizers: revoke a team's invitation code (its members' next look makes a new one)",
)
def revoke_invitation(service: ServiceDep, contest: ContestDep, who: OrganizerDep, name: str) -> dict[str, Any]:
    def revoke(connection: Connection) -> dict[str, Any]:
        team = accounts.team_id(connection, name[:64], contest.id)
        return {"team": name, "revoked": invitations.revoke(connection, team)}

    return _changed(service, revoke)


@router.post("/users/{name}/ban", response_model=UserStanding, summary="Organizers: ban a user (refused at log-in)")
def ban_user(service: ServiceDep, contest: ContestDep, who: OrganizerDep, name: str) -> dict[str, Any]:
    return _user_standing(service, contest, who, name, banned=True)


@router.post("/users/{name}/unban", response_model=UserStanding, summary="Organizers: lift a user's ban")
def unban_user(service: ServiceDep, contest: ContestDep, who: OrganizerDep, name: str) -> dict[str, Any]:
    return _user_standing(service, contest, who, name, banned=False)


def _user_standing(service: Service, contest: Contest, who: Caller, name: str, banned: bool) -> dict[str, Any]:
    """A user's ban set by the organizer ``who`` (:func:`podium.service.rosters.set_user`): 403 for an account out of their reach."""
    try:
        with writing(service.engine) as connection:
            return rosters.set_user(connection, who, contest.id, name, banned=banned)
    except rosters.NotYours as exc:
        raise HTTPException(403, str(exc)) from None
    except UsageError as exc:
        raise HTTPException(404, str(exc)) from None


@router.post(
    "/submissions/{submission_id}/rerun",
    response_model=Rerun,
    summary="Organizers: score one submission again, in a round of its own (the team is told of its result)",
    responses={404: {"description": "no such submission"}, 409: {"description": "cancelled, or not ended yet"}},
)
def rerun_submission(service: ServiceDep, contest: ContestDep, who: OrganizerDep, submission_id: int) -> dict[str, Any]:
    try:
        with writing(service.engine) as connection:
            round_ = rerun(connection, contest.id, submission_id, service.clock())
            return {"id": submission_id, "round": round_}
    except Refused as refused:
        raise HTTPException(refused.status, str(refused)) from None


@router.get(
    "/archive",
    response_class=StreamingResponse,
    summary="Organizers: every submission's files, or every result document, as one zip (streamed)",
    responses={200: {"content": {"application/zip": {}}, "description": "a zip archive"}},
)
def archive(
    service: ServiceDep,
    contest: ContestDep,
    who: OrganizerDep,
    what: Annotated[Literal["submissions", "results"], Query(description="What the archive holds")] = "submissions",
) -> Response:
    now = service.clock()
    name = f"{contest.id}-{what}-{now:%Y%m%dT%H%M%SZ}.zip"
    return service.downloads.answer(  # the archive streams, holding a slot until it is sent
        who,
        lambda: StreamingResponse(
            exports.archive(service.engine, service.data, contest.id, contest.track_ids(), what, now),
            media_type="application/zip",
            headers={"Content-Disposition": content_disposition(name)},
        ),
    )


@router.get("/announcements", response_model=list[Announcement], summary="The organizers' announcements, newest first")
def list_announcements(contest: ContestDep, connection: ReadingDep) -> list[dict[str, Any]]:
    return announcements.newest(connection, contest.id)


@router.post(
    "/announcements",
    status_code=201,
    response_model=Announcement,
    summary="Organizers: post an announcement on the contest page (mailed to who keeps news on)",
    responses={422: {"description": "empty or too long"}},
)
def post_announcement(
    service: ServiceDep, contest: ContestDep, who: OrganizerDep, body: NewAnnouncement
) -> dict[str, Any]:
    try:
        with writing(service.engine) as connection:
            author = author_of(connection, who)
            return announcements.post(connection, contest.id, body.text, author, service.clock())
    except UsageError as exc:
        raise HTTPException(422, str(exc)) from None


@router.delete("/announcements/{announcement_id}", response_model=Removed, summary="Organizers: remove an announcement")
def remove_announcement(
    service: ServiceDep, contest: ContestDep, who: OrganizerDep, announcement_id: int
) -> dict[str, Any]:
    with writing(service.engine) as connection:
        if not known_id(announcement_id) or not announcements.remove(connection, contest.id, announcement_id):
            raise HTTPException(404, f"no announcement {announcement_id}")
    return {"id": announcement_id, "removed": True}


def author_of(connection: Connection, who: Caller) -> str | None:
    """The organizer's user name (``None`` for a token made by a command)."""
    if who.user_id is None:
        return None
    return connection.execute(select(users.c.name).where(users.c.id == who.user_id)).scalar()
