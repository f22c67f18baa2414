"""The web API (FastAPI): JSON over HTTP, described at ``/openapi.json`` and ``/docs`` (served offline).

Every team endpoint takes ``Authorization: Bearer TOKEN``. Every request but
an upload carries at most 64 KiB, and every body must arrive in time
(:mod:`podium.service.bodies`). A team sees its own
submissions only; another team's submission is answered 404, as if it did not
exist. Results are the public view until the reveal. Uploads are the raw
request body (``POST /api/submissions?filename=NAME``), streamed to disk and
cut off at the contest's ``upload_mb``; an upload counts at the time it is
complete, so one completed after the last phase closed is refused (409).
Selections freeze when the last phase closes.
"""

from __future__ import annotations

import errno
import hashlib
import tempfile
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Annotated, Any

from fastapi import Depends, FastAPI, Header, HTTPException, Query, Request
from fastapi.concurrency import run_in_threadpool
from fastapi.responses import HTMLResponse, JSONResponse, Response
from pydantic import BaseModel, Field
from sqlalchemy import Engine, func, select, update

from podium import __version__
from podium.challenges import get
from podium.service import accounts, error_pages, logins, logs, metrics, pages, state
from podium.service.board_cache import BoardCache
from podium.service.bodies import UPLOADS, Bodies, BodyTimes, UploadSlots
from podium.service.database import reading, writing
from podium.service.docs_page import render
from podium.service.hashing import HashPool
from podium.service.headers import SecurityHeaders
from podium.service.intake import Refused, Runner, Upload, check_quota, inline, open_phase, take
from podium.service.leaderboard import is_revealed
from podium.service.proxies import Proxies, client_address
from podium.service.quota import usage
from podium.service.statuses import CANCELLED, JOB_CANCELLED, JOB_QUEUED, QUEUED, SCORED, Clock, utc_now
from podium.service.tables import jobs, submissions
from podium.service.views import newest_results, submission_rows, submission_view

MAX_ID = 2**31 - 1  # the largest id the databases' integer columns hold: a larger one names no submission (404)


class Credentials(BaseModel):
    user: str
    password: str
    days: int = Field(logins.API_TOKEN_DAYS, ge=1, le=logins.MAX_TOKEN_DAYS, description="How many days the token lasts")


class Registration(BaseModel):
    team: str
    user: str
    password: str


class Service:
    """What the app serves: the database, the data folder, the clock; the proxies trusted, the limits on bodies and uploads."""

    def __init__(self, engine: Engine, data: Path, clock: Clock = utc_now, allow_images: bool = False, proxies: Proxies = (),
                 body_times: BodyTimes | None = None, slots: UploadSlots | None = None, checks: Runner = inline) -> None:  # fmt: skip
        self.engine = engine
        self.data = data
        self.clock = clock
        self.allow_images = allow_images
        self.proxies = proxies
        self.body_times = body_times or BodyTimes()
        self.slots = slots or UploadSlots()
        self.hashes = HashPool()
        self.contests = state.ContestCache(engine)
        self.checks = checks  # where the upload checks run (podium serve: a CheckPool)
        self.boards = BoardCache(engine)  # the leaderboard, computed again when the database's version stamp changes
        self.confidence_cache: dict[Any, Any] = {}  # the leaderboard page's bootstraps (podium.service.confidence)


def caller(request: Request, authorization: Annotated[str | None, Header()] = None) -> accounts.Caller:
    """The caller named by the request's bearer token (401 without a known one)."""
    if not authorization or not authorization.startswith("Bearer "):
        raise HTTPException(401, "send Authorization: Bearer TOKEN (podium team add prints a team's token)", {"WWW-Authenticate": "Bearer"})
    with reading(request.app.state.service.engine) as connection:
        found = accounts.caller_of(connection, authorization[7:].strip(), request.app.state.service.clock())
    if found is None:
        raise HTTPException(401, "unknown or expired token", {"WWW-Authenticate": "Bearer"})
    return found


def team_of(who: accounts.Caller) -> int:
    if who.team_id is None:
        raise HTTPException(403, "organizers do not submit; use a team's token")
    return who.team_id


async def receive_upload(
    service: Service, request: Request, who: accounts.Caller, filename: str, entry: str | None, chunks: AsyncIterator[bytes] | None = None
) -> JSONResponse:
    """Take the request body (or ``chunks``: a form's file) as a submission: the phase and quota first, then streamed to disk under the contest's cap.

    The submission counts at the moment its body is complete: the phase is checked again then.
    """
    team = team_of(who)
    contest = service.contests.get()
    try:
        open_phase(contest, service.clock())
        await run_in_threadpool(check_quota, service.engine, contest, who, service.clock())
    except Refused as refused:
        raise HTTPException(refused.status, str(refused)) from None
    cap = int(contest.service.upload_mb * 2**20)
    declared = request.headers.get("content-length")
    if chunks is None and declared is not None and declared.isdigit() and int(declared) > cap:
        raise HTTPException(413, f"the upload is {int(declared):,} bytes; this contest takes at most {contest.service.upload_mb:g} MB")
    with service.slots.held(team, client_address(request, service.proxies)):
        try:
            return await _spooled(service, request.stream() if chunks is None else chunks, who, filename, entry, cap)
        except OSError as exc:
            if exc.errno not in (errno.ENOSPC, errno.EDQUOT):
                raise
            raise HTTPException(507, "the server's disk is full: the upload was not kept and used no quota; tell the organizers") from None


async def _spooled(service: Service, chunks: AsyncIterator[bytes], who: accounts.Caller, filename: str, entry: str | None, cap: int) -> JSONResponse:
    contest = service.contests.get()
    (service.data / "incoming").mkdir(parents=True, exist_ok=True)
    with tempfile.NamedTemporaryFile(dir=service.data / "incoming", prefix="upload-") as spool:
        digest, size = hashlib.sha256(), 0
        async for chunk in chunks:
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
            taken = await run_in_threadpool(take, service.engine, contest, service.data, who, received, service.clock(), service.allow_images, service.checks)
        except Refused as refused:
            raise HTTPException(refused.status, str(refused)) from None
    return JSONResponse(taken, status_code=201 if taken["status"] == QUEUED else 422)


def visible_submissions(service: Service, who: accounts.Caller, submission_id: int | None = None) -> list[dict[str, Any]]:
    """The submissions ``who`` may see (a team its own, organizers every team's), as :func:`submission_view` shows them."""
    if submission_id is not None and not 0 < submission_id <= MAX_ID:
        return []
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
    app.add_middleware(Bodies, times=service.body_times)
    app.add_middleware(SecurityHeaders)
    found, uploads_refused, logins_refused = metrics.registry(service.engine, lambda: service.contests.get().challenge, service.clock)
    app.add_middleware(metrics.Watch, uploads=uploads_refused, logins=logins_refused)
    app.include_router(pages.router(service))
    app.include_router(metrics.router(service.engine, found, service.clock))
    error_pages.install(app, service)
    app.add_middleware(logs.RequestIds)  # the outermost: every record of a request carries its id

    @app.get("/healthz", summary="Liveness: the database, the jobs queued and running, the data folder's free disk (ok: false under 1 GiB), the workers alive (503: no database)")
    def health() -> JSONResponse:
        answers, details = metrics.health(service.engine, service.data, service.clock)
        ok = answers and not details["disk"]["low"]
        return JSONResponse({"ok": ok, "version": __version__, **details}, status_code=200 if answers else 503)

    @app.get("/api/contest", summary="The contest: challenge, phases, quota, ranking rule, split sizes")
    def contest_summary() -> dict[str, Any]:
        contest = service.contests.get()
        summary = contest.summary()
        for private_path in ("truth", "images"):  # the server's folders are nobody's business
            summary.pop(private_path, None)
        data = {p.name for p in get(contest.challenge).parameters if p.role == "data"}  # files of the truth (boxes, meta): their names only
        summary["parameters"] = {k: Path(v).name if k in data else v for k, v in summary["parameters"].items()}
        now = service.clock()
        with reading(service.engine) as connection:
            summary["revealed"] = is_revealed(connection, contest, now)
        try:
            summary["open_phase"] = open_phase(contest, now).name
        except Refused as closed:
            summary["open_phase"], summary["closed"] = None, str(closed)
        return summary

    @app.post("/api/register", status_code=201, summary="Register a new team and its first member (if the contest allows it)",
              responses={409: {"description": "the team or user name is taken (the same answer for either)"}, 429: {"description": "too many registrations from this address"}})  # fmt: skip
    async def register(request: Request, body: Registration) -> dict[str, Any]:
        if not service.contests.get().service.self_registration:
            raise HTTPException(403, "this contest does not take self-registration; ask the organizers for a team token")
        return {"team": body.team, "token": await logins.register(service, request, body.team, body.user, body.password)}

    @app.post("/api/tokens", status_code=201, summary="Log in: a new API token for a member or organizer (it lasts `days` days)",
              responses={401: {"description": "wrong user name or password"}, 429: {"description": "too many log-in attempts"}})  # fmt: skip
    async def log_in(request: Request, body: Credentials) -> dict[str, Any]:
        return {"token": await logins.log_in(service, request, body.user, body.password, session=False, days=body.days)}

    @app.get("/api/tokens", summary="Your team's tokens that have not expired (organizers: every token); never the tokens themselves")
    def list_tokens(who: Who) -> list[dict[str, Any]]:
        with reading(service.engine) as connection:
            return accounts.token_rows(connection, None if who.organizer else who.team_id, service.clock())

    @app.delete("/api/tokens/{token_id}", summary="Revoke a token of your team's (organizers: any token)")
    def revoke_token(token_id: int, who: Who) -> dict[str, Any]:
        with writing(service.engine) as connection:
            if not 0 < token_id <= MAX_ID or not accounts.revoke_token(connection, token_id, None if who.organizer else who.team_id):
                raise HTTPException(404, f"no token {token_id} of yours")
        return {"id": token_id, "revoked": True}

    @app.post(UPLOADS[0], status_code=201, summary="Upload a submission: the request body is the file, zip or tar.gz",
              responses={413: {"description": "larger than the contest's upload_mb"}, 409: {"description": "no phase is open"},
                         422: {"description": "rejected: every problem, with file and line (no quota used)"}, 429: {"description": "quota used"}})  # fmt: skip
    async def upload(
        request: Request, who: Who,
        filename: Annotated[str, Query(max_length=255, description="The file's name (an archive's kind is read from its bytes)")] = "submission",
        entry: Annotated[str | None, Query(max_length=255, description="Programs: the entry point in the archive [run.sh, else its only .py or .sh file at the top], or docker: when the file is an image saved by docker save")] = None,
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
        if not 0 < submission_id <= MAX_ID:
            raise HTTPException(404, f"no submission {submission_id} of yours")
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
        contest = service.contests.get()
        ranking = contest.ranking
        if ranking.final != "selected":
            raise HTTPException(409, f"this contest ranks each team's {ranking.final} submission; there is nothing to select")
        if service.clock() >= contest.phases[-1].end:
            raise HTTPException(409, f"selections froze when the last phase closed at {contest.phases[-1].end.isoformat()}; the final ranking uses them")
        if not 0 < submission_id <= MAX_ID:
            raise HTTPException(404, f"no submission {submission_id} of yours")
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
    def board() -> Response:
        return Response(service.boards.current(service.contests.get(), service.clock()).json(), media_type="application/json")

    @app.get("/docs", response_class=HTMLResponse, include_in_schema=False)
    def docs() -> str:
        return render(app.openapi())

    return app

