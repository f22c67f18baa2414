"""The web app (FastAPI): the API (JSON over HTTP, described at ``/openapi.json`` and ``/docs``, served offline) and the pages.

Every team endpoint takes ``Authorization: Bearer TOKEN``. Every request but
an upload carries at most 64 KiB, and every body must arrive in time
(:mod:`podium.service.bodies`). A team sees its own
submissions only; another team's submission is answered 404, as if it did not
exist. Results are the public view until the reveal. Uploads are the raw
request body (``POST /api/submissions?filename=NAME``), streamed to disk and
cut off at the contest's ``upload_mb``; an upload counts at the time it is
complete, so one completed after the last phase closed is refused (409).
Selections freeze when the last phase closes.

The routes are module-level routers, one per resource (:mod:`podium.service.routes`,
:mod:`podium.service.pages`); what they share reaches them through
:mod:`podium.service.deps` from ``app.state``.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

from fastapi import Depends, FastAPI

from podium._version import __version__
from podium.core.errors import UsageError
from podium.service import (
    account_pages,
    board_warm,
    content_pages,
    error_pages,
    logs,
    metrics,
    organizer_pages,
    pages,
    submission_pages,
)
from podium.service.board_direct import BoardDirect
from podium.service.board_warm import served, warm
from podium.service.bodies import Bodies
from podium.service.deps import Service, contest_path
from podium.service.headers import SecurityHeaders
from podium.service.routes import account, content, contest, contests, health, organizer, submissions, teams, tokens
from podium.service.urls import openapi_settings

__all__ = ["Service", "create_app"]

# A contest's routes, each router included twice: under the contest's prefix, and without it (one contest served).
# organizer_pages first: its /organizer/... forms before pages' /organizer/{action}
PAGES = tuple(m.router for m in (organizer_pages, pages, submission_pages, account_pages, content_pages))
API = tuple(m.router for m in (contest, content, tokens, submissions, account, organizer, teams))  # under /api
PAGES_PREFIX, API_PREFIX = "/c/{contest_id}", "/api/contests/{contest_id}"


def create_app(service: Service) -> FastAPI:
    """The app serving ``service``: its routers, its middleware (outermost last), its error pages."""

    @asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        """``service.board_warm``: the boards drawn while the first requests are answered, and again when a contest or
        the boards the clock shows change (:mod:`~podium.service.board_warm`); with a stamp trusted a while, the
        stamps looked at off the request path (:meth:`~podium.service.board_cache.BoardCache.watch`)."""
        prefix = service.public_url.prefix if service.public_url else ""
        task = (
            asyncio.create_task(
                warm(
                    app,
                    served(service.engine, service.contests, service.clock),
                    prefix,
                    board_warm.WATCH_S,
                    service.boards.fresh_s,
                )
            )
            if service.board_warm
            else None
        )
        looking = service.boards.watch(service.clock) if service.boards.fresh_s > 0 else None
        yield
        if task is not None:
            task.cancel()
        if looking is not None:
            looking()

    app = FastAPI(
        lifespan=lifespan,
        title="podium",
        version=__version__,
        docs_url=None,
        redoc_url=None,
        summary="A contest served by podium.",
        **openapi_settings(service.public_url),
    )
    app.state.service = service
    app.state.metrics, uploads_refused, logins_refused, requests = metrics.registry(
        service.engine, lambda: _challenge(service), service.clock
    )
    app.add_middleware(BoardDirect, service=service)  # the innermost: a fresh board's GET past the router
    app.add_middleware(Bodies, times=service.body_times)
    app.add_middleware(SecurityHeaders)
    app.add_middleware(metrics.Watch, uploads=uploads_refused, logins=logins_refused, requests=requests)
    named = [Depends(contest_path)]
    for router in PAGES:
        app.include_router(router, prefix=PAGES_PREFIX, dependencies=named)
    app.include_router(health.router)
    app.include_router(contests.router)
    for router in PAGES:
        app.include_router(router)
    for router in API:
        app.include_router(router, prefix=API_PREFIX, dependencies=named)
        app.include_router(router, prefix="/api")
    error_pages.install(app)
    app.add_middleware(logs.RequestIds)  # the outermost: every record of a request carries its id
    return app


def _challenge(service: Service) -> str:
    """The scoring figures' ``challenge`` label: the served contest's challenge, or ``several`` when more are served."""
    try:
        return service.contests.get().challenge
    except UsageError:
        return "several"
