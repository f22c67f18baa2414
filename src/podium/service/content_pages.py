"""The contest's content pages (``/pages/ID``: overview, evaluation, FAQ, ...), its data page (``/data``) and their downloads.

The organizer writes the pages in Markdown beside the contest file and names
them in it (``[pages]``); they are rendered safely (:mod:`podium.service.markdown`)
once for each change of their file. The data page shows the ``data`` page's
text, the public files (``[data] files``) with their size and SHA-256, links to
files kept elsewhere, and each track's starting kit. Downloads are attachments
(``Content-Disposition``, never sniffed), answer range requests, and are looked
up by the name the contest file lists (:mod:`podium.service.public_files`):
``..``, an absolute path, an encoded slash or a link names nothing listed.
"""

from __future__ import annotations

from pathlib import PurePosixPath
from typing import Any
from urllib.parse import quote

from fastapi import APIRouter, HTTPException, Request
from fastapi.concurrency import run_in_threadpool
from fastapi.responses import FileResponse, HTMLResponse, RedirectResponse, Response

from podium.contest import Contest, ContestError
from podium.service.deps import ContestDep, ServiceDep, TrackQuery, contest_of, track_of
from podium.service.filenames import content_disposition
from podium.service.markdown import render_file
from podium.service.pages import render_page
from podium.service.public_files import kit_file, kit_tracks, listing, served_file
from podium.service.urls import site_url

router = APIRouter(include_in_schema=False)
DATA_PAGE = "data"  # the page whose text heads the data page
IMAGE_TYPES = {
    ".png": "image/png",
    ".jpg": "image/jpeg",
    ".jpeg": "image/jpeg",
    ".gif": "image/gif",
    ".webp": "image/webp",
}  # never SVG: it runs scripts


def public_urls(contest: Contest, request: Request) -> dict[str, str]:
    """Each public file's name and download address: the images a page may show."""
    return {f.name: site_url(request, "/data/files/" + quote(f.name)) for f in contest.content.files}


def offers_data(contest: Contest) -> bool:
    """Whether the contest has a data page: its text, public files, links or a starting kit."""
    content = contest.content
    return bool(content.page(DATA_PAGE) or content.files or content.links or kit_tracks(contest))


@router.get("/pages/{page_id}", response_class=HTMLResponse)
def content_page(service: ServiceDep, request: Request, page_id: str) -> Response:
    contest = contest_of(service, request)
    if page_id == DATA_PAGE and offers_data(contest):
        return RedirectResponse(site_url(request, "/data"), status_code=308)
    page = contest.content.page(page_id)
    if page is None:
        raise HTTPException(404, f"this contest has no page {page_id[:64]!r}")
    html = render_file(page.path, contest.path.parent, public_urls(contest, request))
    return render_page(service, request, "page.html", page=page, html=html)


@router.get("/data", response_class=HTMLResponse)
async def data_page(service: ServiceDep, contest: ContestDep, request: Request) -> HTMLResponse:
    if not offers_data(contest):
        raise HTTPException(404, "this contest has no data page")
    page = contest.content.page(DATA_PAGE)
    text = None if page is None else render_file(page.path, contest.path.parent, public_urls(contest, request))
    data: dict[str, Any] = await run_in_threadpool(  # hashing a file, building a kit: off the event loop
        listing, contest, service.data, lambda path: site_url(request, path)
    )
    return render_page(service, request, "data.html", text=text, data=data)


@router.api_route("/data/files/{name:path}", methods=["GET", "HEAD"])
def data_file(contest: ContestDep, name: str) -> FileResponse:
    path = served_file(contest, name)
    if path is None:
        raise HTTPException(404, "no such public file: the data page lists them")
    return _download(str(path), PurePosixPath(name).name)


@router.api_route("/data/kit.zip", methods=["GET", "HEAD"])
def kit_download(service: ServiceDep, contest: ContestDep, track: TrackQuery = None) -> FileResponse:
    chosen = track_of(service, track, contest)
    if chosen.kit is None:
        raise HTTPException(404, "this track has no starting kit")
    try:
        path = kit_file(service.data, chosen)
    except ContestError as exc:
        raise HTTPException(404, f"the starting kit is not offered: {exc}") from None
    return _download(str(path), path.name.rsplit("-", 1)[0] + ".zip")


def _download(path: str, filename: str) -> FileResponse:
    """A file as an attachment (never shown or sniffed as a page), with range requests; a raster image keeps its type, for the pages' ``<img>``."""
    media = IMAGE_TYPES.get(PurePosixPath(filename).suffix.lower(), "application/octet-stream")
    return FileResponse(path, media_type=media, headers={"Content-Disposition": content_disposition(filename)})
