"""``GET /api/contest``, ``GET /api/leaderboard`` and ``/api/leaderboard.csv``: what anyone may read of the contest."""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter, Request
from fastapi.responses import Response

from podium.service.board_direct import board_json
from podium.service.deps import ContestDep, PhaseQuery, ReadingDep, ServiceDep, TrackQuery, kept_board
from podium.service.models import Board, ContestView
from podium.service.views import contest_view

router = APIRouter()


@router.get(
    "/contest",
    response_model=ContestView,
    response_model_exclude_unset=True,
    summary="The contest: challenge, phases, quota, ranking rule, split sizes",
)
def contest_summary(service: ServiceDep, contest: ContestDep, connection: ReadingDep) -> dict[str, Any]:
    return contest_view(connection, contest, service.clock())


@router.get(
    "/leaderboard",
    response_model=None,
    responses={
        200: {"model": Board, "description": "The board, with its ETag"},
        304: {"description": "The board is still the one of the ETag sent in If-None-Match"},
    },
    summary="A track's leaderboard (the contest's only one by default), of a phase when phases name their own data: public scores until the reveal, then the final ranking on the private split",
)
async def board(service: ServiceDep, request: Request, track: TrackQuery = None, phase: PhaseQuery = None) -> Response:
    """The board kept under the database's version stamp (:mod:`podium.service.board_cache`), its JSON encoded once per board
    (answered before the router while fresh: :mod:`podium.service.board_direct`)."""
    _served, _contest, kept = await kept_board(service, request, track, phase)
    return board_json(request, kept)


@router.get(
    "/leaderboard.csv",
    response_class=Response,
    responses={200: {"content": {"text/csv": {}}, "description": "The board's rows as CSV, with a header row"}},
    summary="A track's leaderboard as CSV: rank (and public rank after the reveal), team, status, entries, last, each score",
)
async def board_csv(
    service: ServiceDep, request: Request, track: TrackQuery = None, phase: PhaseQuery = None
) -> Response:
    _served, _contest, kept = await kept_board(service, request, track, phase)
    return Response(kept.csv(), media_type="text/csv; charset=utf-8")
