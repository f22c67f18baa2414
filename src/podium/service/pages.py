"""The web pages of ``podium serve``: server-rendered (Jinja2), htmx for live parts, no build step, no CDN.

Pages: the contest (``/``), the leaderboard (``/leaderboard``, sortable, with
bootstrap intervals), log in and out, a team's submissions with live status
and an upload form (``/submissions``), each submission's report, and the
organizers' page (teams, every submission, rescore, reveal).

Every address in a page, and every redirect, is under the site's root path
(``--public-url``'s prefix, :mod:`podium.service.urls`).

Security: a session is a token in an HttpOnly, SameSite=Strict cookie (``Secure``
when the public URL or the browser's connection is https, directly or through a
trusted proxy; ``Path=`` the root path) that expires :data:`~podium.service.accounts.SESSION` after its login; every form
and htmx request that changes something carries the session's CSRF token
(a hidden field, or the ``X-CSRF-Token`` header), checked before anything
else. The log-in form itself is refused from another origin (``Origin``) and
carries a token of its own, kept in a cookie beside it, so no other site can
log a browser in. Log-ins share the database limiter of :mod:`podium.service.logins`
with the API. A team sees its own submissions only; another's is answered 404.
"""

from __future__ import annotations

import functools
import hmac
import secrets
from datetime import datetime
from importlib import resources
from typing import Annotated, Any
from urllib.parse import parse_qs, quote

import jinja2
from fastapi import APIRouter, HTTPException, Query, Request
from fastapi.concurrency import run_in_threadpool
from fastapi.responses import HTMLResponse, RedirectResponse, Response

from podium._version import __version__
from podium.challenges import get
from podium.contest import Contest
from podium.publish.display import headline, score_text
from podium.publish.platforms.columns import DEFAULT_DECIMALS
from podium.publish.report import environment as report_environment
from podium.publish.report import report_context
from podium.service import accounts, announcements, choices, home, logins, state, upload_form
from podium.service.board_cache import board_page_values
from podium.service.board_direct import drawn_page, kept_page, page_key
from podium.service.database import reading, writing
from podium.service.deps import (
    ContestDep,
    PhaseQuery,
    Service,
    ServiceDep,
    TrackQuery,
    board_of,
    contest_of,
    contest_or_site,
    kept_board,
)
from podium.service.filenames import content_disposition
from podium.service.intake import Refused, open_phase
from podium.service.measured import measured
from podium.service.per_item import per_item
from podium.service.quota import usage
from podium.service.quota_text import rules as quota_rules
from podium.service.quota_text import sentence as quota_sentence
from podium.service.rescore import rescore
from podium.service.statuses import FINAL
from podium.service.titles import title
from podium.service.uploads import method_given, receive_upload
from podium.service.urls import (
    named_contest,
    prefixed,
    root_url,
    route_path,
    same_origin,
    secure,
    site_url,
    template_contest_url,
    template_url,
    unprefixed_path,
)
from podium.service.views import visible_submissions

router = APIRouter(include_in_schema=False)
COOKIE = "podium_session"
LOGIN_COOKIE = "podium_login"  # the log-in form's token, before there is a session
STATIC = resources.files("podium.service") / "static"
STATIC_FILES = {  # name -> (package folder, media type)
    "htmx.min.js": (STATIC, "text/javascript"),
    "pages.js": (STATIC, "text/javascript"),
    "pages.css": (STATIC, "text/css"),
    "docs.css": (STATIC, "text/css"),
    "vega.min.js": (resources.files("podium.publish.report") / "vendor", "text/javascript"),
    "vega-lite.min.js": (resources.files("podium.publish.report") / "vendor", "text/javascript"),
    "vega-interpreter.js": (resources.files("podium.publish.report") / "vendor", "text/javascript"),
    "render.js": (resources.files("podium.publish.report") / "templates", "text/javascript"),
}


async def _form(request: Request) -> dict[str, str]:
    """A URL-encoded form's fields (the body is at most 64 KiB: :class:`~podium.service.bodies.Bodies`)."""
    return {k: v[0] for k, v in parse_qs((await request.body()).decode("utf-8", "replace")).items()}


def _local(target: str) -> str:
    """``target`` if it is a path on this site, else ``/``: a log-in never sends the browser elsewhere."""
    return target if target.startswith("/") and not target.startswith("//") else "/"


@functools.cache
def _environment() -> jinja2.Environment:
    templates = report_environment(jinja2.PackageLoader("podium.service", "templates"))
    templates.globals.update(
        utc=_utc,
        version=__version__,
        title=title,
        score_text=score_text,
        url=template_url,
        contest_url=template_contest_url,
        left=_left,
        row_scores=_row_scores,
        quota_rules=quota_rules,
    )
    return templates


def session_from(service: Service, request: Request) -> tuple[str | None, accounts.Caller | None]:
    """The session's token and its caller (``None`` when the cookie is missing, unknown or expired)."""
    token = request.cookies.get(COOKIE)
    if not token:
        return None, None
    contest = contest_or_site(service, request)
    with reading(service.engine) as connection:
        who = accounts.session_caller(connection, token, service.clock(), None if contest is None else contest.id)
    return token, None if who is None or who.refused else who  # banned: the log-in page says so


def render_page(service: Service, request: Request, name: str, code: int = 200, **values: Any) -> HTMLResponse:
    """The template ``name`` rendered for the request's caller, with the site's navigation."""
    token, who = session_from(service, request)
    html = _draw(
        request,
        name,
        contest_or_site(service, request),
        who,
        accounts.csrf_token(token) if token and who else "",
        values,
    )
    return HTMLResponse(html, status_code=code)


def render_site_page(request: Request, name: str, status_code: int, **values: Any) -> HTMLResponse:
    """The template ``name`` on the site's own level, for an anonymous visitor: for a request naming a contest the
    server does not serve, whose own page cannot be drawn."""
    return HTMLResponse(_draw(request, name, None, None, "", values), status_code=status_code)


def _draw(
    request: Request,
    name: str,
    contest: Contest | None,
    who: accounts.Caller | None,
    csrf: str,
    values: dict[str, Any],
) -> str:
    """The template ``name`` drawn for ``who`` (``None``: an anonymous visitor) on ``contest``'s site (``None``: on the
    site's own pages while several contests are served); ``url()`` keeps every link in the request's contest."""
    return (
        _environment()
        .get_template(name)
        .render(
            who=who,
            csrf=csrf,
            contest=contest,
            contest_id=named_contest(request),
            home=prefixed(request.scope.get("root_path", ""), "/"),
            path=unprefixed_path(request.scope),
            root_path=request.scope.get("root_path", ""),
            **values,
        )
    )


def _utc(value: datetime | None) -> str:
    return "" if value is None else value.strftime("%Y-%m-%d %H:%M UTC")


def _row_scores(contest: Contest, submission: dict[str, Any]) -> tuple[list[tuple[str, str]], str | None]:
    """The scores a list of submissions shows of one (``scored_on``: :func:`~podium.service.views.visible_submissions`),
    as texts: its track's ranked scores first, rounded to the track's decimals (a platform's :data:`~podium.publish.platforms.columns.DEFAULT_DECIMALS` where it sets none), and their split."""
    scores, split = submission["scored_on"]
    if not scores:
        return [], None
    track = next((t for t in contest.tracks or (contest,) if t.track_id == submission["track"]), contest)
    decimals = track.ranking.decimals if track.ranking.decimals is not None else DEFAULT_DECIMALS
    shown = headline(get(track.challenge), track.ranking.by, scores)
    return [(title(name), score_text(value, decimals)) for name, value in shown], split


def _left(seconds: float) -> str:
    days, rest = divmod(int(seconds), 86400)
    return f"{days} d {rest // 3600} h" if days else f"{rest // 3600} h {rest % 3600 // 60} min"


def signed_in(service: Service, request: Request) -> tuple[str, accounts.Caller]:
    """The session's token and caller; a 303 to the log-in page without one.

    Called by the handlers rather than declared as a dependency: a page whose
    address does not parse is answered 404 before anyone is asked to log in.
    """
    token, who = session_from(service, request)
    if token is None or who is None:
        raise HTTPException(
            303, headers={"Location": site_url(request, "/login?next=" + quote(route_path(request.scope)))}
        )
    return token, who


def signed_organizer(service: Service, request: Request) -> accounts.Caller:
    """The signed-in organizer (403 for a team's member)."""
    _, who = signed_in(service, request)
    if not who.organizer:
        raise HTTPException(403, "for organizers only")
    return who


async def checked_form(service: Service, request: Request) -> tuple[str, accounts.Caller]:
    """The signed-in session and caller, once the form's CSRF token (field or header) is right (403 otherwise)."""
    token, who = signed_in(service, request)
    sent = (await _form(request)).get("csrf") or request.headers.get("x-csrf-token", "")
    if sent != accounts.csrf_token(token):
        raise HTTPException(403, "the form's CSRF token is missing or wrong: reload the page")
    return token, who


def _views(
    service: Service, request: Request, who: accounts.Caller, submission_id: int | None = None
) -> list[dict[str, Any]]:
    with reading(service.engine) as connection:
        contest, now = contest_of(service, request), service.clock()
        return visible_submissions(connection, contest, who, now, submission_id, scores_only=submission_id is None)


@router.get("/static/{name}")
def static(name: str) -> Response:
    if name not in STATIC_FILES:
        raise HTTPException(404, "no such file")
    folder, media = STATIC_FILES[name]
    return Response((folder / name).read_bytes(), media_type=media, headers={"Cache-Control": "public, max-age=3600"})


@router.get("/", response_class=HTMLResponse)
def contest_page(service: ServiceDep, request: Request) -> HTMLResponse:
    """The contest's page; at the root while several contests are served, the home page listing them."""
    contest, now = contest_or_site(service, request), service.clock()
    if contest is None:
        joined = home.joined(service, session_from(service, request)[1])
        return render_page(service, request, "home.html", groups=home.groups(service, now), joined=joined)
    try:
        phase = open_phase(contest, now)
        status = f"{phase.name} is open: {_left((phase.end - now).total_seconds())} left"
    except Refused as closed:
        status = str(closed)
    with reading(service.engine) as connection:
        revealed = state.is_revealed(connection, contest, now)
        news = announcements.newest(connection, contest.id)
    challenge = get(contest.challenge)
    return render_page(
        service,
        request,
        "contest.html",
        summary=contest.summary(),
        challenge=challenge,
        phases=contest.phases,
        status=status,
        revealed=revealed,
        phase_boards=_phase_boards(service, contest, now),
        announcements=news,
    )


def _phase_boards(service: Service, contest: Contest, now: datetime) -> list[dict[str, Any]]:
    """When phases name data of their own: each track's boards the contest page shows, the latest started first, each with its rows."""
    if not contest.phased():
        return []
    shown = []
    for track in contest.track_ids():
        for board in contest.of_track(track).shown_boards(now):
            kept = service.boards.current(board, now).board
            query = {"phase": board.board_id(), **({"track": board.track} if board.track else {})}
            shown.append({"board": kept, "closed": now >= board.closes(), "query": query})
    return shown


@router.get("/leaderboard", response_class=HTMLResponse)
async def board_page(
    service: ServiceDep, request: Request, sort: str | None = None, track: TrackQuery = None, phase: PhaseQuery = None
) -> Response:
    return await _board_response(service, request, "leaderboard.html", sort, track, phase)


@router.get("/leaderboard/table", response_class=HTMLResponse)
async def board_table(
    service: ServiceDep, request: Request, sort: str | None = None, track: TrackQuery = None, phase: PhaseQuery = None
) -> Response:
    return await _board_response(service, request, "leaderboard_table.html", sort, track, phase)


async def _board_response(
    service: Service, request: Request, name: str, sort: str | None, track: str | None, phase: str | None
) -> Response:
    """The leaderboard page or its table (``name``) as ``sort`` orders it, of the board ``track`` and ``phase`` name.

    An anonymous visitor's page is the same for all: drawn once per board and
    order and kept with the board (answered from memory, with an ``ETag``, while
    the board is fresh: :func:`~podium.service.deps.kept_board`); while a changed
    board's page is drawn, the previous one is answered (:mod:`~podium.service.board_pages`). A session's
    page names its team, and a page in an order the board does not know
    repeats it: those are drawn for the request.
    """
    served, contest, kept = await kept_board(service, request, track, phase, _shown_track)
    now = service.clock()
    # the page is kept by board and order, and by the phases shown and closed, which the clock changes, not the board
    key = page_key(served, contest, name, sort, request.scope, now)
    phase_boards = key[-1]

    def values() -> dict[str, Any]:
        shown = board_page_values(service.boards, kept, service.confidence_cache, contest, sort)
        return {
            **shown,
            "tracks": _tracks(served),
            "track": contest.track,
            "phase": contest.board_id(),
            "phase_boards": phase_boards,
        }

    if COOKIE in request.cookies or (sort or "") not in kept.sorts():
        return await run_in_threadpool(lambda: render_page(service, request, name, **values()))
    found = kept_page(request, kept, key)
    if found is not None:
        return found

    def draw() -> bytes:
        return _draw(request, name, served, None, "", values()).encode()

    page = service.pages.previous(kept, key, draw)
    if page is None:
        page = await run_in_threadpool(service.pages.draw, kept, key, draw)
    return drawn_page(request, page)


@router.get("/leaderboard.csv")
async def board_csv_file(
    service: ServiceDep, request: Request, track: TrackQuery = None, phase: PhaseQuery = None
) -> Response:
    _served, _contest, kept = await kept_board(service, request, track, phase, _shown_track)
    return _board_file(kept.csv(), "text/csv; charset=utf-8", kept.board, "csv")


@router.get("/leaderboard.json")
async def board_json_file(
    service: ServiceDep, request: Request, track: TrackQuery = None, phase: PhaseQuery = None
) -> Response:
    _served, _contest, kept = await kept_board(service, request, track, phase, _shown_track)
    return _board_file(kept.json(), "application/json", kept.board, "json")


def _board_file(body: bytes, media_type: str, board: dict[str, Any], suffix: str) -> Response:
    """The board as a download named for the contest, its track and its split: ``ID[-TRACK]-public.csv``."""
    name = "-".join(filter(None, (board["contest"], board.get("track"), board["split"])))
    return Response(
        body, media_type=media_type, headers={"Content-Disposition": content_disposition(f"{name}.{suffix}")}
    )


def _shown_track(service: Service, track: str | None, phase: str | None, served: Contest) -> Contest:
    """The board a page shows of ``served``: of the track asked for, else the contest's first (the pages list the
    others), and of ``phase`` (else the latest started phase's)."""
    return board_of(service, track if track is not None else served.track_ids()[0], phase, served)


def _tracks(contest: Contest) -> list[tuple[str, str]]:
    """Each track's id and title, for the pages' choices (none for a contest without [[track]] tables)."""
    return [(t.track, t.track_title) for t in contest.tracks]


def keep_cookie(
    response: Response,
    service: Service,
    request: Request,
    name: str,
    value: str,
    path: str = "/",
    session: bool = False,
) -> None:
    """Set a cookie of the site's pages: HTTP-only, same-site strict, under the site's ``path``, ``Secure`` behind https;
    ``session``: the log-in session's, kept :data:`~podium.service.accounts.SESSION` long."""
    response.set_cookie(
        name,
        value,
        max_age=int(accounts.SESSION.total_seconds()) if session else None,
        httponly=True,
        samesite="strict",
        path=root_url(request, path),
        secure=secure(request, service),
    )


def _login_form(
    service: Service, request: Request, target: str, code: int = 200, error: str | None = None
) -> HTMLResponse:
    """The log-in page, with the form's token (kept in its cookie, or a new one)."""
    token = request.cookies.get(LOGIN_COOKIE) or secrets.token_urlsafe(24)
    response = render_page(service, request, "login.html", code=code, next=target, error=error, login_csrf=token)
    keep_cookie(response, service, request, LOGIN_COOKIE, token, "/login")
    return response


@router.get("/login", response_class=HTMLResponse)
def login_page(service: ServiceDep, request: Request, next: str = "/submissions") -> HTMLResponse:
    return _login_form(service, request, _local(next))


@router.post("/login")
async def login(service: ServiceDep, request: Request) -> Response:
    origin = request.headers.get("origin")
    if origin is not None and not same_origin(request, origin, service.public_url):
        raise HTTPException(403, "a log-in from another site's page is refused")
    form = await _form(request)
    name, password, target = form.get("user", ""), form.get("password", ""), _local(form.get("next", "/submissions"))
    expected = request.cookies.get(LOGIN_COOKIE, "")
    if not expected or not hmac.compare_digest(form.get("login_csrf", ""), expected):
        return _login_form(service, request, target, 403, "the log-in form had expired: log in again")
    try:
        token = await logins.log_in(service, request, name, password, session=True)
    except HTTPException as refused:
        return _login_form(service, request, target, refused.status_code, str(refused.detail))
    response = RedirectResponse(site_url(request, target), status_code=303)
    keep_cookie(response, service, request, COOKIE, token, session=True)
    response.delete_cookie(LOGIN_COOKIE, path=root_url(request, "/login"))
    return response


@router.post("/logout")
async def logout(service: ServiceDep, request: Request) -> Response:
    token, _ = await checked_form(service, request)
    with writing(service.engine) as connection:
        accounts.end_session(connection, token)
    response = RedirectResponse(site_url(request, "/"), status_code=303)
    response.delete_cookie(COOKIE, path=root_url(request, "/"))
    return response


@router.get("/submissions", response_class=HTMLResponse)
def submissions_page(
    service: ServiceDep,
    served: ContestDep,
    request: Request,
    sent: int | None = None,
    done: Annotated[str | None, Query(max_length=200)] = None,
    track: TrackQuery = None,
) -> HTMLResponse:
    _, who = signed_in(service, request)
    contest, now = _shown_track(service, track, None, served), service.clock()
    with reading(service.engine) as connection:
        quota = (
            None
            if who.team_id is None
            else usage(connection, who.team_id, contest.quota, contest.timezone, now, contest.track_id).to_dict(
                contest.quota
            )
        )
        rows = visible_submissions(connection, contest, who, now, scores_only=True)
    just_sent = next(
        (row for row in rows if row["id"] == sent), None
    )  # the form's answer, when posted without JavaScript
    programs = any(phase.submissions == "programs" for phase in contest.phases)
    quota_said = None if quota is None else quota_sentence(quota, contest.timezone, now)
    return render_page(
        service,
        request,
        "submissions.html",
        rows=rows,
        quota=quota_said,
        final=FINAL,
        sent=just_sent,
        programs=programs,
        tracks=_tracks(served),
        track=contest.track_id,
        done=done,
        selecting=choices.selecting(served, now),
    )


@router.get("/submissions/rows", response_class=HTMLResponse)
def submission_rows_part(service: ServiceDep, contest: ContestDep, request: Request) -> HTMLResponse:
    _, who = signed_in(service, request)
    selecting = choices.selecting(contest, service.clock())
    return render_page(
        service, request, "submission_rows.html", rows=_views(service, request, who), final=FINAL, selecting=selecting
    )


@router.post("/submissions/upload")
async def upload(
    service: ServiceDep,
    request: Request,
    filename: str = "submission",
    entry: str | None = None,
    track: TrackQuery = None,
) -> Response:
    token, who = signed_in(service, request)
    if upload_form.is_form(request):  # posted by the browser without JavaScript
        return await upload_form.posted(service, request, token, who)
    if request.headers.get("x-csrf-token", "") != accounts.csrf_token(token):
        raise HTTPException(403, "the form's CSRF token is missing or wrong: reload the page")
    method = method_given(request.query_params)
    return await receive_upload(
        service, request, who, filename[:255], entry[:255] if entry else None, track=track, method=method
    )


@router.get("/submissions/{submission_id}", response_class=HTMLResponse)
def report_page(
    service: ServiceDep,
    contest: ContestDep,
    request: Request,
    submission_id: int,
    sort: str | None = None,
    done: Annotated[str | None, Query(max_length=200)] = None,
) -> HTMLResponse:
    _, who = signed_in(service, request)
    found = _views(service, request, who, submission_id)
    if not found:
        raise HTTPException(404, f"no submission {submission_id} of yours")
    view = found[0]
    report = report_context(view["result"]) if view["result"] else None
    public_only = bool(view["result"]) and view["result"].get("view") == "public" and "splits" in view["result"]
    ran = measured(view["result"], "public" if public_only else None)
    phase_end = next((p.end for p in contest.phases if p.name == view["phase"]), None)
    editable = not who.organizer and phase_end is not None and service.clock() < phase_end
    return render_page(
        service,
        request,
        "report_page.html",
        view=view,
        report=report,
        ran=ran,
        items=per_item(view["result"], sort),
        done=done,
        editable=editable,
    )


@router.post("/organizer/{action}")
async def organizer_action(service: ServiceDep, served: ContestDep, request: Request, action: str) -> Response:
    _, who = await checked_form(service, request)
    if not who.organizer:
        raise HTTPException(403, "for organizers only")
    contest = served.id
    if action == "reveal":
        with writing(service.engine) as connection:
            state.put(connection, state.REVEALED, service.clock().isoformat(), contest)
        done = "the private split is revealed"
    elif action == "rescore":
        round_, count = rescore(service.engine, contest)
        done = f"round {round_}: {count} submissions queued again"
    else:
        raise HTTPException(404, "no such action")
    return RedirectResponse(site_url(request, "/organizer?done=" + quote(done)), status_code=303)
