"""``GET /api/contest`` and ``GET /api/leaderboard``: what anyone may read of the contest."""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter
from fastapi.concurrency import run_in_threadpool

from podium.service.database import reading
from podium.service.deps import ReadingDep, Service, ServiceDep, TrackQuery, track_of
from podium.service.leaderboard import leaderboard
from podium.service.models import Board, ContestView
from podium.service.views import contest_view

router = APIRouter(prefix="/api")


@router.get("/contest", response_model=ContestView, response_model_exclude_unset=True,
            summary="The contest: challenge, phases, quota, ranking rule, split sizes")  # fmt: skip
def contest_summary(service: ServiceDep, connection: ReadingDep) -> dict[str, Any]:
    return contest_view(connection, service.contests.get(), service.clock())


def _board(service: Service, track: str | None) -> dict[str, Any]:
    contest = track_of(service, track)
    with reading(service.engine) as connection:
        return leaderboard(connection, contest, service.clock())


@router.get("/leaderboard", response_model=Board, response_model_exclude_unset=True,
            summary="A track's leaderboard (the contest's only one by default): public scores until the reveal, then the final ranking on the private split")  # fmt: skip
async def board(service: ServiceDep, track: TrackQuery = None) -> dict[str, Any]:
    """Async, the reading on one worker thread: FastAPI then checks the answer in the event loop, not on a second thread (the board is polled).

    Measured against a sync handler with ``ReadingDep`` (three thread hops): 0.8 ms less server CPU per answer, as fast as before the models.
    """
    return await run_in_threadpool(_board, service, track)
