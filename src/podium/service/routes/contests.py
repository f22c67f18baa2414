"""``GET /api/contests``: the contests the server serves, open first, then upcoming, then finished (the home page's list)."""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter

from podium.service import home
from podium.service.deps import ServiceDep
from podium.service.models import ContestListing

router = APIRouter()


@router.get(
    "/api/contests",
    response_model=list[ContestListing],
    summary="The contests served: open (soonest to close first), upcoming, finished; each one's API is under /api/contests/ID/",
)
def served_contests(service: ServiceDep) -> list[dict[str, Any]]:
    groups = home.groups(service, service.clock())
    return [*groups[home.OPEN], *groups[home.UPCOMING], *groups[home.FINISHED]]
