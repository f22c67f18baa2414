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
from fastapi.responses import HTMLResponse, RedirectResponse, Response

from podium.core.errors import UsageError
from podium.service import announcements, dashboard, exports, rosters, standing, state
from podium.service.database import reading, writing
from podium.service.deps import ContestDep, Service, ServiceDep, contest_of
from podium.service.intake import Refused
from podium.service.pages import _form, checked_form, render_page, session_from, signed_organizer
from podium.service.rescore import rerun
from podium.service.routes.organizer import archive, author_of
from podium.service.routes.teams import status_of
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
        teams, rows = rosters.roster(connection, contest), dashboard.recent(connection, contest, tracks)
        news = announcements.newest(connection, contest)
        round_, revealed = state.current_round(connection, contest), state.revealed_at(connection, contest)
    return render_page(
        service,
        request,
        "organizer.html",
        now=now,
        figures=figures,
        chart=per_day_chart(figures["per_day"]),
        teams=teams,
        rows=rows,
        announcements=news,
        round=round_,
        revealed=revealed,
        done=done[:300] if done else None,
    )


@router.get("/organizer/figures", response_class=HTMLResponse)
def figures_part(service: ServiceDep, request: Request) -> HTMLResponse:
    """The dashboard's queue, workers and failures, drawn again for htmx's poll (403, which htmx does not swap in, without an organizer's session)."""
    _, who = session_from(service, request)
    if who is None or not who.organizer:
        raise HTTPException(403, "for organizers only: log in again")
    served, now = contest_of(service, request), service.clock()
    with reading(service.engine) as connection:
        figures = dashboard.live_figures(connection, served.track_ids(), now)
    return render_page(service, request, "organizer_figures.html", now=now, figures=figures)


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
            team = standing.set_team(connection, contest.id, form.get("team", ""), **change)
    except UsageError as exc:
        raise HTTPException(404, str(exc)) from None
    if form.get("back") == "team":  # sent from the team's page: back to it
        return RedirectResponse(site_url(request, team_url(team["team"], said.format(team["team"]))), 303)
    return _back(request, said.format(team["team"]))


def team_url(name: str, done: str | None = None) -> str:
    """The path of a team's page on the dashboard (``done``: what the page says first)."""
    return f"/organizer/teams/{quote(name, safe='')}" + (f"?done={quote(done)}" if done else "")


@router.get("/organizer/teams/{name}", response_class=HTMLResponse)
def team_page(service: ServiceDep, request: Request, name: str, done: str | None = None) -> HTMLResponse:
    """One team of the contest: its members (each can be taken out, or given a password-reset link), a member added, a rename, a removal."""
    signed_organizer(service, request)
    try:
        with reading(service.engine) as connection:
            row = rosters.team(connection, contest_of(service, request).id, name)
    except UsageError as exc:
        raise HTTPException(404, str(exc)) from None
    return render_page(service, request, "organizer_team.html", team=row, done=done[:300] if done else None)


async def _roster_change(service: Service, request: Request, change: Any, *fields: str) -> tuple[str, Any]:
    """Run ``rosters.change(connection, contest, team, *form[fields])`` for the posted form; the team's name and the answer.

    A refusal is answered with its status (:func:`podium.service.routes.teams.status_of`) and its words.
    """
    form, _ = await _organizer_form(service, request)
    name = form.get("team", "")[:64]
    contest = contest_of(service, request).id
    try:
        with writing(service.engine) as connection:
            return name, change(connection, contest, name, *(form.get(field, "").strip()[:64] for field in fields))
    except UsageError as exc:
        raise HTTPException(status_of(exc), str(exc)) from None


@router.post("/organizer/teams/rename")
async def rename_team(service: ServiceDep, request: Request) -> Response:
    name, row = await _roster_change(service, request, rosters.rename, "new")
    return RedirectResponse(site_url(request, team_url(row["team"], f"team {name} is now {row['team']}")), 303)


@router.post("/organizer/teams/remove")
async def remove_team(service: ServiceDep, request: Request) -> Response:
    name, _ = await _roster_change(service, request, rosters.remove)
    return _back(request, f"team {name} is removed")


@router.post("/organizer/teams/members")
async def member_action(service: ServiceDep, request: Request) -> Response:
    form, _ = await _organizer_form(service, request)
    if form.get("change") not in ("add", "remove"):
        raise HTTPException(422, "choose add or remove")
    adding = form["change"] == "add"
    name, _ = await _roster_change(service, request, rosters.add_member if adding else rosters.remove_member, "user")
    said = f"{form.get('user', '').strip()[:64]} is {'a member of' if adding else 'no longer a member of'} team {name}"
    return RedirectResponse(site_url(request, team_url(name, said)), 303)


@router.post("/organizer/user")
async def user_action(service: ServiceDep, served: ContestDep, request: Request) -> Response:
    form, who = await _organizer_form(service, request)
    if form.get("change") not in ("ban", "unban"):
        raise HTTPException(422, "choose ban or unban")
    banned = form["change"] == "ban"
    contest = served.id
    try:
        with writing(service.engine) as connection:
            user = rosters.set_user(connection, who, contest, form.get("user", ""), banned=banned)
    except UsageError as exc:
        raise HTTPException(status_of(exc), str(exc)) from None
    return _back(request, f"user {user['user']} is {'banned' if banned else 'no longer banned'}")


@router.post("/organizer/rerun")
async def rerun_action(service: ServiceDep, contest: ContestDep, request: Request) -> Response:
    form, _ = await _organizer_form(service, request)
    text = form.get("submission", "").strip().lstrip("#")
    if not text.isdigit():
        raise HTTPException(422, "give the submission's number")
    try:
        with writing(service.engine) as connection:
            round_ = rerun(connection, contest.id, int(text), service.clock())
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
def archive_download(service: ServiceDep, contest: ContestDep, request: Request, what: str = "submissions") -> Response:
    who = signed_organizer(service, request)
    if what not in exports.WHAT:
        raise HTTPException(422, "the archive holds submissions or results")
    return archive(service, contest, who, what)  # type: ignore[arg-type]
