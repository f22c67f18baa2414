"""The web API (FastAPI): JSON over HTTP, described at ``/openapi.json`` and ``/docs`` (served offline).

Every team endpoint takes ``Authorization: Bearer TOKEN``. FastAPI reads a
JSON body whole and caps none, so every request but an upload carries at most
``SMALL_BODY`` bytes (:class:`SmallBodies`), or is answered 413. A team sees its own
submissions only; another team's submission is answered 404, as if it did not
exist. Results are the public view until the reveal. Uploads are the raw
request body (``POST /api/submissions?filename=NAME``), streamed to disk and
cut off at the contest's ``upload_mb``.
"""

from __future__ import annotations

import hashlib
import tempfile
from pathlib import Path
from typing import Annotated, Any

from fastapi import Depends, FastAPI, Header, HTTPException, Query, Request
from fastapi.concurrency import run_in_threadpool
from fastapi.responses import HTMLResponse, JSONResponse
from pydantic import BaseModel
from sqlalchemy import Engine, func, select, update
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from podium import __version__
from podium.errors import UsageError
from podium.service import accounts, logs, metrics, pages, state
from podium.service.database import reading, writing
from podium.service.docs_page import render
from podium.service.intake import Refused, Upload, check_quota, open_phase, take
from podium.service.leaderboard import is_revealed, leaderboard
from podium.service.quota import usage
from podium.service.statuses import CANCELLED, JOB_CANCELLED, JOB_QUEUED, QUEUED, SCORED, Clock, utc_now
from podium.service.tables import jobs, submissions
from podium.service.views import newest_results, submission_rows, submission_view

SMALL_BODY = 64 << 10
UPLOADS = ("/api/submissions", "/submissions/upload")  # the paths that take large bodies, capped by the contest's upload_mb


class SmallBodies:
    """ASGI middleware: a request body, other than an upload's, of more than ``SMALL_BODY`` bytes is answered 413.

    A declared Content-Length is refused before anything is read; a chunked
    body is counted as it arrives.
    """

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or scope["path"] in UPLOADS:
            await self.app(scope, receive, send)
            return
        declared = dict(scope["headers"]).get(b"content-length", b"0")
        if not declared.isdigit() or int(declared) > SMALL_BODY:
            await JSONResponse({"detail": f"this request's body may be at most {SMALL_BODY:,} bytes"}, status_code=413)(scope, receive, send)
            return
        received = 0

        async def counted() -> Message:
            nonlocal received
            message = await receive()
            received += len(message.get("body", b""))
            if received > SMALL_BODY:
                raise HTTPException(413, f"this request's body may be at most {SMALL_BODY:,} bytes")
            return message

        await self.app(scope, counted, send)


class Credentials(BaseModel):
    user: str
    password: str


class Registration(BaseModel):
    team: str
    user: str
    password: str


class Service:
    """What the app serves: the database, the data folder, the clock."""

    def __init__(self, engine: Engine, data: Path, clock: Clock = utc_now, allow_images: bool = False) -> None:
        self.engine = engine
        self.data = data
        self.clock = clock
        self.allow_images = allow_images
        self.contests = state.ContestCache(engine)
        self.confidence_cache: dict[Any, Any] = {}  # the leaderboard page's bootstraps (podium.service.confidence)


def caller(request: Request, authorization: Annotated[str | None, Header()] = None) -> accounts.Caller:
    """The caller named by the request's bearer token (401 without a known one)."""
    if not authorization or not authorization.startswith("Bearer "):
        raise HTTPException(401, "send Authorization: Bearer TOKEN (podium team add prints a team's token)", {"WWW-Authenticate": "Bearer"})
    with reading(request.app.state.service.engine) as connection:
        found = accounts.caller_of(connection, authorization[7:].strip())
    if found is None:
        raise HTTPException(401, "unknown token", {"WWW-Authenticate": "Bearer"})
    return found


def team_of(who: accounts.Caller) -> int:
    if who.team_id is None:
        raise HTTPException(403, "organizers do not submit; use a team's token")
    return who.team_id


async def receive_upload(service: Service, request: Request, who: accounts.Caller, filename: str, entry: str | None) -> JSONResponse:
    """Take the request body as a submission: the phase and quota first, then streamed to disk under the contest's cap."""
    team_of(who)
    contest = service.contests.get()
    now = service.clock()
    try:
        open_phase(contest, now)
        await run_in_threadpool(check_quota, service.engine, contest, who, now)
    except Refused as refused:
        raise HTTPException(refused.status, str(refused)) from None
    cap = int(contest.service.upload_mb * 2**20)
    declared = request.headers.get("content-length")
    if declared is not None and declared.isdigit() and int(declared) > cap:
        raise HTTPException(413, f"the upload is {int(declared):,} bytes; this contest takes at most {contest.service.upload_mb:g} MB")
    (service.data / "incoming").mkdir(parents=True, exist_ok=True)
    with tempfile.NamedTemporaryFile(dir=service.data / "incoming", prefix="upload-") as spool:
        digest, size = hashlib.sha256(), 0
        async for chunk in request.stream():
            size += len(chunk)
            if size > cap:
                raise HTTPException(413, f"the upload is over {contest.service.upload_mb:g} MB, the most this contest takes")
            digest.update(chunk)
            spool.write(chunk)
        spool.flush()
        if size == 0:
            raise HTTPException(422, "the upload is empty")
        received = Upload(Path(spool.name), filename, size, digest.hexdigest(), entry)
        try:
            taken = await run_in_threadpool(take, service.engine, contest, service.data, who, received, now, service.allow_images)
        except Refused as refused:
            raise HTTPException(refused.status, str(refused)) from None
    return JSONResponse(taken, status_code=201 if taken["status"] == QUEUED else 422)


def visible_submissions(service: Service, who: accounts.Caller, submission_id: int | None = None) -> list[dict[str, Any]]:
    """The submissions ``who`` may see (a team its own, organizers every team's), as :func:`submission_view` shows them."""
    contest = service.contests.get()
    with reading(service.engine) as connection:
        rows = submission_rows(connection, None if who.organizer else who.team_id, submission_id)
        found = newest_results(connection, [r.id for r in rows])
        full = who.organizer or is_revealed(connection, contest, service.clock())
    return [submission_view(row, found.get(row.id), full) for row in rows]


Who = Annotated[accounts.Caller, Depends(caller)]


def create_app(service: Service) -> FastAPI:
    app = FastAPI(title="podium", version=__version__, docs_url=None, redoc_url=None, summary="A contest served by podium.")
    app.state.service = service
    app.add_middleware(SmallBodies)
    found, uploads_refused, logins_refused = metrics.registry(service.engine, lambda: service.contests.get().challenge, service.clock)
    app.add_middleware(metrics.Watch, uploads=uploads_refused, logins=logins_refused)
    app.include_router(pages.router(service))
    app.include_router(metrics.router(service.engine, found))
    app.add_middleware(logs.RequestIds)  # the outermost: every record of a request carries its id

    @app.get("/healthz", summary="Liveness: the database, the jobs queued and running, the data folder's free disk, the workers alive (503: no database)")
    def health() -> JSONResponse:
        ok, details = metrics.health(service.engine, service.data, service.clock)
        return JSONResponse({"ok": ok, "version": __version__, **details}, status_code=200 if ok else 503)

    @app.get("/api/contest", summary="The contest: challenge, phases, quota, ranking rule, split sizes")
    def contest_summary() -> dict[str, Any]:
        contest = service.contests.get()
        summary = contest.summary()
        for private_path in ("truth", "images"):  # the server's folders are nobody's business
            summary.pop(private_path, None)
        now = service.clock()
        with reading(service.engine) as connection:
            summary["revealed"] = is_revealed(connection, contest, now)
        try:
            summary["open_phase"] = open_phase(contest, now).name
        except Refused as closed:
            summary["open_phase"], summary["closed"] = None, str(closed)
        return summary

    @app.post("/api/register", status_code=201, summary="Register a new team and its first member (if the contest allows it)")
    def register(body: Registration) -> dict[str, Any]:
        if not service.contests.get().service.self_registration:
            raise HTTPException(403, "this contest does not take self-registration; ask the organizers for a team token")
        now = service.clock()
        try:
            with writing(service.engine) as connection:
                team_id = accounts.add_team(connection, body.team, now)
                accounts.add_user(connection, body.user, body.password, team_id, False, now)
                token = accounts.new_token(connection, team_id, False, f"registration of {body.user}", now)
        except accounts.NameTaken as exc:
            raise HTTPException(409, str(exc)) from None
        except UsageError as exc:
            raise HTTPException(422, str(exc)) from None
        return {"team": body.team, "token": token}

    @app.post("/api/tokens", status_code=201, summary="Log in: a new API token for a member or organizer")
    def log_in(body: Credentials) -> dict[str, Any]:
        with writing(service.engine) as connection:
            token = accounts.log_in(connection, body.user, body.password, service.clock())
        if token is None:
            raise HTTPException(401, "wrong user name or password")
        return {"token": token}

    @app.post(UPLOADS[0], status_code=201, summary="Upload a submission: the request body is the file, zip or tar.gz",
              responses={413: {"description": "larger than the contest's upload_mb"}, 409: {"description": "no phase is open"},
                         422: {"description": "rejected: every problem, with file and line (no quota used)"}, 429: {"description": "quota used"}})  # fmt: skip
    async def upload(
        request: Request, who: Who,
        filename: Annotated[str, Query(max_length=255, description="The file's name (an archive's kind is read from its bytes)")] = "submission",
        entry: Annotated[str | None, Query(max_length=255, description="Programs: the entry point in the archive [run.sh], or docker: when the file is an image saved by docker save")] = None,
    ) -> JSONResponse:  # fmt: skip
        return await receive_upload(service, request, who, filename, entry)

    @app.get("/api/submissions", summary="Your team's submissions, newest first (organizers: every team's)")
    def list_submissions(who: Who) -> list[dict[str, Any]]:
        return visible_submissions(service, who)

    @app.get("/api/submissions/{submission_id}", summary="One submission: status, problems, stderr tail, result")
    def show_submission(submission_id: int, who: Who) -> dict[str, Any]:
        found = visible_submissions(service, who, submission_id)
        if not found:
            raise HTTPException(404, f"no submission {submission_id} of yours")
        return found[0]

    @app.post("/api/submissions/{submission_id}/cancel", summary="Cancel a queued submission (it uses no quota)")
    def cancel(submission_id: int, who: Who) -> dict[str, Any]:
        team_id = team_of(who)
        with writing(service.engine) as connection:
            row = connection.execute(select(submissions).where(submissions.c.id == submission_id, submissions.c.team_id == team_id).with_for_update()).first()
            if row is None:
                raise HTTPException(404, f"no submission {submission_id} of yours")
            if row.status != QUEUED:
                raise HTTPException(409, f"submission {submission_id} is {row.status}; only a queued one can be cancelled")
            connection.execute(update(jobs).where(jobs.c.submission_id == submission_id, jobs.c.state == JOB_QUEUED).values(state=JOB_CANCELLED))
            connection.execute(update(submissions).where(submissions.c.id == submission_id).values(status=CANCELLED, finished=service.clock()))
        return {"id": submission_id, "status": CANCELLED}

    @app.put("/api/submissions/{submission_id}/selected", summary="Select (true) or unselect (false) a submission for the final ranking")
    def select_submission(submission_id: int, selected: bool, who: Who) -> dict[str, Any]:
        team_id = team_of(who)
        ranking = service.contests.get().ranking
        if ranking.final != "selected":
            raise HTTPException(409, f"this contest ranks each team's {ranking.final} submission; there is nothing to select")
        with writing(service.engine) as connection:
            accounts.lock_team(connection, team_id)  # two selections at once cannot both pass max_selected
            row = connection.execute(select(submissions).where(submissions.c.id == submission_id, submissions.c.team_id == team_id)).first()
            if row is None:
                raise HTTPException(404, f"no submission {submission_id} of yours")
            if selected and row.status != SCORED:
                raise HTTPException(409, f"submission {submission_id} is {row.status}; only a scored one can be selected")
            count = connection.execute(select(func.count()).select_from(submissions).where(submissions.c.team_id == team_id, submissions.c.selected, submissions.c.id != submission_id)).scalar_one()
            if selected and ranking.max_selected is not None and count >= ranking.max_selected:
                raise HTTPException(409, f"{count} submissions are selected, the most this contest allows; unselect one first")
            connection.execute(update(submissions).where(submissions.c.id == submission_id).values(selected=selected))
        return {"id": submission_id, "selected": selected}

    @app.get("/api/quota", summary="Your team's quota: used today (in the contest's time zone), in all, at once")
    def quota(who: Who) -> dict[str, Any]:
        team_id = team_of(who)
        contest = service.contests.get()
        with reading(service.engine) as connection:
            used = usage(connection, team_id, contest.quota, contest.timezone, service.clock())
        return used.to_dict(contest.quota)

    @app.get("/api/leaderboard", summary="The leaderboard: public scores until the reveal, then the final ranking on the private split")
    def board() -> dict[str, Any]:
        contest = service.contests.get()
        with reading(service.engine) as connection:
            return leaderboard(connection, contest, service.clock())

    @app.get("/docs", response_class=HTMLResponse, include_in_schema=False)
    def docs() -> str:
        return render(app.openapi())

    return app

