"""``GET /api/pages`` and ``GET /api/data``: the contest's content pages, and what its data page offers for download."""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter, Request
from fastapi.concurrency import run_in_threadpool

from podium.service.deps import ContestDep, ServiceDep
from podium.service.models import DataView, PageView
from podium.service.public_files import listing
from podium.service.urls import site_url

router = APIRouter()


@router.get("/pages", response_model=list[PageView], summary="The contest's content pages: id, title, address")
def pages(contest: ContestDep, request: Request) -> list[dict[str, str]]:
    return [
        {
            "id": page.id,
            "title": page.title,
            "url": site_url(request, "/data" if page.id == "data" else f"/pages/{page.id}"),
        }
        for page in contest.content.pages
    ]


@router.get(
    "/data",
    response_model=DataView,
    summary="The public files (size, SHA-256, address), links to files kept elsewhere, and each track's starting kit",
)
async def data(service: ServiceDep, contest: ContestDep, request: Request) -> dict[str, Any]:
    return await run_in_threadpool(listing, contest, service.data, lambda path: site_url(request, path))
