"""What operators read: ``/healthz`` (liveness), ``/metrics`` (Prometheus, an organizer's token), ``/docs`` (the API, offline)."""

from __future__ import annotations

from fastapi import APIRouter, Depends, Request
from fastapi.responses import HTMLResponse, JSONResponse, Response
from prometheus_client import CONTENT_TYPE_LATEST, generate_latest

from podium._version import __version__
from podium.service import metrics
from podium.service.deps import ServiceDep, site_organizer
from podium.service.docs_page import render
from podium.service.models import Health

router = APIRouter()


@router.get(
    "/healthz",
    response_model=Health,
    responses={503: {"model": Health, "description": "the database does not answer"}},
    summary="Liveness: the database, the jobs queued and running, the data folder's free disk (ok: false under 1 GiB), the workers alive (503: no database)",
)
def health(service: ServiceDep) -> JSONResponse:
    answers, details = metrics.health(service.engine, service.data, service.clock)
    ok = answers and not details["disk"]["low"]
    return JSONResponse({"ok": ok, "version": __version__, **details}, status_code=200 if answers else 503)


@router.get(
    "/metrics",
    response_class=Response,
    dependencies=[Depends(site_organizer)],
    responses={200: {"content": {CONTENT_TYPE_LATEST: {}}, "description": "Prometheus' text format"}},
    summary="Prometheus metrics: queue, submissions, scoring time, workers, refusals (an organizer's token)",
)
def scrape(request: Request) -> Response:
    return Response(generate_latest(request.app.state.metrics), media_type=CONTENT_TYPE_LATEST)


@router.get("/docs", response_class=HTMLResponse, include_in_schema=False)
def docs(request: Request) -> str:
    return render(request.app.openapi(), request)
