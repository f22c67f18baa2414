"""What every route of the app depends on, reached through FastAPI's ``Depends``: the service, a reading connection, the caller.

The app keeps one :class:`Service` on ``app.state.service`` (:func:`podium.service.app.create_app`);
handlers name what they need by type (``service: ServiceDep``, ``connection: ReadingDep``,
``who: CallerDep``), as full-stack-fastapi-template's ``deps.py`` does.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Annotated, Any

from fastapi import Depends, Header, HTTPException, Query, Request
from fastapi import Path as PathParameter
from fastapi.concurrency import run_in_threadpool
from sqlalchemy import Connection, Engine
from starlette.requests import HTTPConnection

from podium.contest import Contest, ContestError
from podium.core.errors import UsageError
from podium.service import accounts, state
from podium.service.board_cache import Asked, Board, BoardCache
from podium.service.board_pages import BoardPages
from podium.service.board_share import FOLDER, SharedDraws
from podium.service.bodies import BodyTimes, UploadSlots
from podium.service.database import reading
from podium.service.download_slots import DownloadSlots
from podium.service.hashing import HashPool
from podium.service.intake import Runner, inline
from podium.service.proxies import Proxies
from podium.service.statuses import Clock, utc_now
from podium.service.tables import MAX_ID
from podium.service.urls import SITE_PATHS, PublicUrl, named_contest, route_path, site_url


class Service:
    """What the app serves: the database, the data folder, the clock; the proxies trusted, the public URL, the limits on bodies and uploads.

    ``board_fresh_s``: how long the board's version stamp, once read, is trusted (:mod:`podium.service.board_cache`);
    ``board_pages_behind``: a changed board's page is drawn by a thread of its own, the previous one answered meanwhile
    (:mod:`podium.service.board_pages`); ``board_warm``: the boards are drawn at start-up (:mod:`podium.service.board_warm`);
    ``board_share``: the boards and pages are shared with the other web processes (:mod:`podium.service.board_share`).
    """

    def __init__(
        self,
        engine: Engine,
        data: Path,
        clock: Clock = utc_now,
        allow_images: bool = False,
        proxies: Proxies = (),
        body_times: BodyTimes | None = None,
        slots: UploadSlots | None = None,
        downloads: DownloadSlots | None = None,
        public_url: PublicUrl | None = None,
        checks: Runner = inline,
        board_fresh_s: float = 0.0,
        board_pages_behind: bool = False,
        board_warm: bool = False,
        board_share: bool = False,
    ) -> None:
        self.engine = engine
        self.data = data
        self.clock = clock
        self.allow_images = allow_images
        self.proxies = proxies
        self.public_url = public_url
        self.body_times = body_times or BodyTimes()
        self.slots = slots or UploadSlots()
        self.downloads = downloads or DownloadSlots()  # downloads being sent at once, per caller and in all
        self.hashes = HashPool()
        self.contests = state.ContestCache(engine)
        self.checks = checks  # where the upload checks run (podium serve: a CheckPool)
        shared = SharedDraws(data / FOLDER) if board_share else None
        self.boards = BoardCache(
            engine, board_fresh_s, shared
        )  # the leaderboard, computed again when the database's version stamp changes
        self.pages = BoardPages(board_pages_behind, shared)  # the anonymous leaderboard pages, by board
        self.board_warm = board_warm
        self.confidence_cache: dict[Any, Any] = {}  # the leaderboard page's bootstraps (podium.service.confidence)


async def service_of(request: Request) -> Service:
    """The service of the app that answers ``request`` (async: FastAPI calls it in the event loop, not on a worker thread)."""
    service: Service = request.app.state.service
    return service


ServiceDep = Annotated[Service, Depends(service_of)]


def contest_of(service: Service, request: HTTPConnection, connection: Connection | None = None) -> Contest:
    """The contest of ``request``: the one its path names (``/c/ID/...``, ``/api/contests/ID/...``), else the only one served.

    404 for an id the server does not serve (unknown, or withdrawn). Without an id while several contests are served,
    a page is sent to the home page that lists them (303), an API call answered 404 naming the contests' paths: a
    default contest would let a team submit to a contest it did not mean. Read once per request (``request.state``), in
    ``connection``'s transaction if given.
    """
    known: Contest | None = getattr(request.state, "contest", None)
    if known is not None:
        return known
    wanted = named_contest(request)
    try:
        contest = service.contests.get(wanted, connection)
    except UsageError:
        if wanted is not None:
            raise HTTPException(404, f"this server serves no contest {wanted!r}") from None
        if route_path(request.scope).startswith("/api/"):
            raise HTTPException(
                404,
                "this server serves several contests: name one, /api/contests/ID/... (GET /api/contests lists them)",
            ) from None
        raise HTTPException(303, headers={"Location": site_url(request, "/")}) from None
    request.state.contest = contest
    return contest


def contest_or_site(service: Service, request: HTTPConnection) -> Contest | None:
    """The request's contest (:func:`contest_of`); ``None`` on the site's own pages (the home page, log-in, account:
    :data:`~podium.service.urls.SITE_PATHS`) at the root while several contests are served."""
    path = route_path(request.scope)
    if named_contest(request) is None and (path == "/" or path.startswith(SITE_PATHS)):
        known: Contest | None = getattr(request.state, "contest", None) or service.contests.only()
        request.state.contest = known
        return known
    return contest_of(service, request)


def served_contest(service: ServiceDep, request: Request) -> Contest:
    """The request's contest, as a dependency (:func:`contest_of`)."""
    return contest_of(service, request)


ContestDep = Annotated[Contest, Depends(served_contest)]


async def contest_path(
    contest_id: Annotated[str, PathParameter(max_length=64, description="The contest's id (its contest file's `id`)")],
) -> None:
    """Declares ``{contest_id}`` of the prefixed routes (``/c/{contest_id}``, ``/api/contests/{contest_id}``) for the schema."""


def reading_connection(service: ServiceDep) -> Iterator[Connection]:
    """A connection in a read transaction, for the request (:func:`podium.service.database.reading`)."""
    with reading(service.engine) as connection:
        yield connection


ReadingDep = Annotated[Connection, Depends(reading_connection)]


def caller(
    service: ServiceDep, request: Request, authorization: Annotated[str | None, Header()] = None
) -> accounts.Caller:
    """The caller named by the request's bearer token, in the request's contest (401 without a known one).

    The contest and the caller are read in one transaction of their own: an upload does not hold a connection while
    its body arrives.
    """
    with reading(service.engine) as connection:
        return bearer_caller(service, connection, contest_of(service, request, connection), authorization)


def bearer_caller(
    service: Service, connection: Connection, contest: Contest, authorization: str | None
) -> accounts.Caller:
    """The caller that ``authorization`` (the header) names in ``contest``: 401 without a known bearer token, 403 for a
    banned caller's or another contest's."""
    if not authorization or not authorization.startswith("Bearer "):
        raise HTTPException(
            401,
            "send Authorization: Bearer TOKEN (podium team add prints a team's token)",
            {"WWW-Authenticate": "Bearer"},
        )
    found = _known(service, connection, authorization[7:].strip(), contest.id)
    if found is None:
        raise HTTPException(401, "unknown or expired token", {"WWW-Authenticate": "Bearer"})
    if found.refused is not None:
        raise HTTPException(403, found.refused)
    return found


def _known(service: Service, connection: Connection, token: str, contest: str | None) -> accounts.Caller | None:
    """The caller of ``token`` in ``contest`` (``None``: the site); 403 for a team's or an organizer's token made for another contest."""
    now = service.clock()
    found = accounts.caller_of(connection, token, now, contest)
    other = accounts.token_contest(connection, token, now) if found is None and token else None
    if other:
        raise HTTPException(403, f"this token is for the contest {other}, not this one")
    return found


CallerDep = Annotated[accounts.Caller, Depends(caller)]


def organizer(
    service: ServiceDep, contest: ContestDep, authorization: Annotated[str | None, Header()] = None
) -> accounts.Caller:
    """An organizer of the request's contest named by the bearer token: 401 without a known token, 403 for a team's."""
    return _organizer(service, authorization, contest.id)


def site_organizer(service: ServiceDep, authorization: Annotated[str | None, Header()] = None) -> accounts.Caller:
    """An organizer of the site (``/metrics`` names the workers' hosts): of the only contest served, else the site's
    administrator; 401 without a known token, 403 for anyone else's."""
    return _organizer(service, authorization, None)


def _organizer(service: Service, authorization: str | None, contest: str | None) -> accounts.Caller:
    token = authorization[7:].strip() if authorization and authorization.startswith("Bearer ") else ""
    with reading(service.engine) as connection:
        who = _known(service, connection, token, contest) if token else None
    if who is not None and who.organizer and who.refused is not None:
        raise HTTPException(403, who.refused)
    if who is None or not who.organizer:
        raise HTTPException(
            401 if who is None else 403,
            "send an organizer's token: Authorization: Bearer TOKEN",
            {"WWW-Authenticate": "Bearer"},
        )
    return who


def team_of(who: accounts.Caller) -> int:
    """The caller's team (403 for an organizer, who does not submit).

    Called by the handlers rather than declared as a dependency: a request with
    a malformed path or query is then answered 422 before 403, as it always was.
    """
    if who.team_id is None:
        raise HTTPException(403, "organizers do not submit; use a team's token")
    if not who.approved:
        raise HTTPException(403, f"team {who.team} waits for the organizers' approval before it may submit")
    return who.team_id


def known_id(submission_id: int) -> bool:
    """Whether ``submission_id`` can name a row (a larger one is answered 404, never a database error)."""
    return 0 < submission_id <= MAX_ID


TrackQuery = Annotated[
    str | None, Query(max_length=64, description="The track (a [[track]]'s id) [default: the contest's only track]")
]


PhaseQuery = Annotated[
    str | None,
    Query(
        max_length=64,
        description="A phase: the board of the phases scored on its data [default: the latest phase that has started]",
    ),
]


def board_of(service: Service, track: str | None, phase: str | None, served: Contest) -> Contest:
    """The board of ``served``'s ``track`` (``None``: its only one) that ranks ``phase`` (``None``: the latest started); 422 naming the choices otherwise.

    A contest whose phases name no data of their own has one board per track, whatever the phase.
    """
    try:
        chosen = served.of_track(track)
        return chosen.shown_boards(service.clock())[0] if phase is None else served.on(track, phase)
    except ContestError as exc:
        raise HTTPException(422, str(exc)) from None


def track_of(service: Service, track: str | None, served: Contest) -> Contest:
    """``served`` as ``track`` scores it now (``None``: its only track; when phases name data, the latest started phase's); 422 naming the contest's tracks otherwise."""
    return board_of(service, track, None, served)


def board_asked(contest: str | None, track: str | None, phase: str | None, page: object) -> Asked:
    """The key a board's read is remembered under (:meth:`~podium.service.board_cache.BoardCache.fresh`): the contest,
    track and phase a request named, and whether it is a page's (``page`` true), whose board of no track named is the
    contest's first track's, where the API's is refused for a contest of tracks."""
    return contest, track, phase, bool(page)


async def kept_board(
    service: Service,
    request: Request,
    track: str | None,
    phase: str | None = None,
    on: Callable[[Service, str | None, str | None, Contest], Contest] = board_of,
) -> tuple[Contest, Contest, Board]:
    """The request's contest, on the board ``track`` and ``phase`` name (``on`` reads the names), and that board.

    From memory in the event loop while the board's stamp is fresh (the process's look keeps it read, or another
    request reads it again), else read in a worker thread (:meth:`~podium.service.board_cache.BoardCache.current`).
    """
    now = service.clock()
    key = board_asked(named_contest(request), track, phase, on is not board_of)
    found = service.boards.fresh(key, now)
    if found is not None:
        return found

    named = key[0]

    def resolve(connection: Connection) -> tuple[Contest, Contest]:  # the look's, as this request resolves them
        served = service.contests.get(named, connection)
        return served, on(service, track, phase, served)

    def read() -> tuple[Contest, Contest, Board]:
        served = contest_of(service, request)
        contest = on(service, track, phase, served)
        return served, contest, service.boards.current(contest, now, key, served, resolve)

    service.boards.reading(key)
    try:
        return await run_in_threadpool(read)
    finally:
        service.boards.read(key)
