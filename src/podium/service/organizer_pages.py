"""The organizers' dashboard page (``/organizer``) and its forms: bans and approvals, a re-run, announcements, the archives.

The page works without JavaScript: every figure is a table (the chart of
submissions per day, drawn by the vendored Vega-Lite, repeats its table), and
every action is a form posted with the session's CSRF token, answered by a
redirect back to the page with what was done (or a 4xx page saying why).
The reveal and the rescore keep their forms (:func:`podium.service.pages.organizer_action`).
"""

from __future__ import annotations

from typing import Any
from urllib.parse import quote

from fastapi import APIRouter, HTTPException, Request
from fastapi.responses import HTMLResponse, RedirectResponse, Response, StreamingResponse

from podium.core.errors import UsageError
from podium.service import announcements, dashboard, exports, standing, state
from podium.service.database import reading, writing
from podium.service.deps import ContestDep, Service, ServiceDep
from podium.service.intake import Refused
from podium.service.pages import _form, checked_form, render_page, signed_organizer
from podium.service.rescore import rerun
from podium.service.routes.organizer import archive_response, author_of
from podium.service.urls import site_url

router = APIRouter(include_in_schema=False)


def per_day_chart(days: list[dict[str, Any]]) -> dict[str, Any]:
    """The Vega-Lite bar chart of submissions per day."""
    return {
        "data": {"values": days},
        "mark": {"type": "bar", "tooltip": True},
        "encoding": {
            "x": {"field": "day", "type": "ordinal", "title": "day (UTC)", "axis": {"labelAngle": -60}},
            "y": {"field": "submissions", "type": "quantitative", "title": "submissions"},
        },
        "width": "container",
        "height": 160,
    }


@router.get("/organizer", response_class=HTMLResponse)
def organizer_page(service: ServiceDep, served: ContestDep, request: Request, done: str | None = None) -> HTMLResponse:
    signed_organizer(service, request)
    contest, tracks, now = served.id, served.track_ids(), service.clock()
    with reading(service.engine) as connection:
        figures = dashboard.figures(connection, contest, tracks, now)
        teams = dashboard.team_rows(connection, contest, tracks)
        rows = dashboard.recent(connection, contest, tracks)
        news = announcements.newest(connection, contest)
        round_, revealed = state.current_round(connection, contest), state.revealed_at(connection, contest)
    return render_page(
        service,
        request,
        "organizer.html",
        figures=figures,
        chart=per_day_chart(figures["per_day"]),
        teams=teams,
        rows=rows,
        announcements=news,
        round=round_,
        revealed=revealed,
        done=done[:300] if done else None,
    )


async def _organizer_form(service: Service, request: Request) -> tuple[dict[str, str], Any]:
    """The posted form's fields, once the CSRF token is right and the caller is an organizer."""
    _, who = await checked_form(service, request)
    if not who.organizer:
        raise HTTPException(403, "for organizers only")
    return await _form(request), who


def _back(request: Request, done: str) -> Response:
    return RedirectResponse(site_url(request, "/organizer?done=" + quote(done)), status_code=303)


TEAM_ACTIONS = {  # the team form's button -> (the change, what the page says after it)
    "ban": ({"banned": True}, "team {} is banned"),
    "unban": ({"banned": False}, "team {} is no longer banned"),
    "approve": ({"approved": True}, "team {} is approved"),
}


@router.post("/organizer/team")
async def team_action(service: ServiceDep, contest: ContestDep, request: Request) -> Response:
    form, _ = await _organizer_form(service, request)
    if form.get("change") not in TEAM_ACTIONS:
        raise HTTPException(422, "choose ban, unban or approve")
    change, said = TEAM_ACTIONS[form["change"]]
    try:
        with writing(service.engine) as connection:
            team = standing.set_team(connection, form.get("team", ""), contest=contest.id, **change)
    except UsageError as exc:
        raise HTTPException(404, str(exc)) from None
    return _back(request, said.format(team["team"]))


@router.post("/organizer/user")
async def user_action(service: ServiceDep, request: Request) -> Response:
    form, who = await _organizer_form(service, request)
    if form.get("change") not in ("ban", "unban"):
        raise HTTPException(422, "choose ban or unban")
    banned = form["change"] == "ban"
    try:
        with writing(service.engine) as connection:
            user = standing.set_user(connection, form.get("user", ""), banned=banned, by=who)
    except UsageError as exc:
        raise HTTPException(404, str(exc)) from None
    return _back(request, f"user {user['user']} is {'banned' if banned else 'no longer banned'}")


@router.post("/organizer/rerun")
async def rerun_action(service: ServiceDep, contest: ContestDep, request: Request) -> Response:
    form, _ = await _organizer_form(service, request)
    text = form.get("submission", "").strip().lstrip("#")
    if not text.isdigit():
        raise HTTPException(422, "give the submission's number")
    try:
        with writing(service.engine) as connection:
            round_ = rerun(connection, int(text), service.clock(), contest.id)
    except Refused as refused:
        raise HTTPException(refused.status, str(refused)) from None
    return _back(request, f"submission {int(text)} is queued to be scored again, in round {round_}")


@router.post("/organizer/announcements")
async def announce_action(service: ServiceDep, contest: ContestDep, request: Request) -> Response:
    form, who = await _organizer_form(service, request)
    try:
        with writing(service.engine) as connection:
            author = author_of(connection, who)
            announcements.post(connection, contest.id, form.get("text", ""), author, service.clock())
    except UsageError as exc:
        raise HTTPException(422, str(exc)) from None
    return _back(request, "the announcement is on the contest page")


@router.post("/organizer/announcements/remove")
async def unannounce_action(service: ServiceDep, contest: ContestDep, request: Request) -> Response:
    form, _ = await _organizer_form(service, request)
    text = form.get("id", "")
    with writing(service.engine) as connection:
        if not text.isdigit() or not announcements.remove(connection, contest.id, int(text[:10])):
            raise HTTPException(404, "no such announcement")
    return _back(request, f"announcement {int(text)} is removed")


@router.get("/organizer/archive")
def archive_download(
    service: ServiceDep, contest: ContestDep, request: Request, what: str = "submissions"
) -> StreamingResponse:
    signed_organizer(service, request)
    if what not in exports.WHAT:
        raise HTTPException(422, "the archive holds submissions or results")
    return archive_response(service, contest, what, service.clock())
