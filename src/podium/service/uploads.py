"""An upload taken as a submission, the same way from the API and the submissions page: checked, streamed to disk under the cap, recorded.

The phase and the quota are checked before the body is read; the body is
streamed to ``DATA/incoming`` and cut off at the contest's ``upload_mb``; the
submission counts at the moment its body is complete, so the phase is checked
again then (:func:`podium.service.intake.take`).
"""

from __future__ import annotations

import errno
import hashlib
import tempfile
from collections.abc import AsyncIterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from fastapi import HTTPException, Request
from fastapi.concurrency import run_in_threadpool
from fastapi.responses import JSONResponse

from podium.contest import Contest
from podium.service import accounts
from podium.service.database import reading
from podium.service.deps import Service, bearer_caller, contest_of, team_of, track_of
from podium.service.filenames import display_name
from podium.service.intake import Refused, Upload, check_quota, take
from podium.service.methods import Method, checked
from podium.service.proxies import client_address
from podium.service.statuses import QUEUED

METHOD_FIELDS = ("method", "description", "paper_url", "code_url")


def method_given(fields: Mapping[str, Any]) -> Method:
    """The method given with an upload (the API's query, the page's form): :func:`podium.service.methods.checked`, 422 if wrong."""
    try:
        method, description, paper, code = (str(fields.get(name) or "") for name in METHOD_FIELDS)
        return checked(method, description, paper, code, str(fields.get("shown") or "").lower() in ("true", "on", "1"))
    except Refused as refused:
        raise HTTPException(refused.status, str(refused)) from None


@dataclass(frozen=True)
class Bearer:
    """An API upload's ``Authorization`` header: its caller is read in the transaction that reads its quota."""

    authorization: str | None


def _admitted(
    service: Service, request: Request, who: accounts.Caller | Bearer, track: str | None
) -> tuple[accounts.Caller, Contest]:
    """The caller and the track's contest of an upload whose phase is open and whose quota has room: the contest, the
    caller and the quota read in one transaction, before the body is read (``take`` reads the quota again under a lock).

    Refused in this order: the contest (404), the caller (401, 403), the team (403), the track (422), the phase (409),
    the quota (429).
    """
    now = service.clock()
    with reading(service.engine) as connection:
        served = contest_of(service, request, connection)
        if isinstance(who, Bearer):
            who = bearer_caller(service, connection, served, who.authorization)
        team_of(who)
        contest = track_of(service, track, served)
        try:
            check_quota(connection, contest, who, now)
        except Refused as refused:
            raise HTTPException(refused.status, str(refused)) from None
    return who, contest


async def receive_upload(
    service: Service,
    request: Request,
    who: accounts.Caller | Bearer,
    filename: str,
    entry: str | None,
    chunks: AsyncIterator[bytes] | None = None,
    track: str | None = None,
    method: Method | None = None,
) -> JSONResponse:
    """Take the request body (or ``chunks``: a form's file) as a submission to ``track`` (``None``: the contest's only one):
    the caller (``who``, or its :class:`Bearer` token), the phase and the quota first, then streamed to disk under the
    contest's cap.

    The answer is the submission as the team sees it: 201 queued, 422 rejected by its checks (or no such track).
    """
    filename = display_name(filename)  # kept and shown as display text only, never a path
    sender, contest = await run_in_threadpool(_admitted, service, request, who, track)
    team = team_of(sender)
    cap = int(contest.service.upload_mb * 2**20)
    declared = request.headers.get("content-length")
    if chunks is None and declared is not None and declared.isdigit() and int(declared) > cap:
        raise HTTPException(
            413, f"the upload is {int(declared):,} bytes; this contest takes at most {contest.service.upload_mb:g} MB"
        )
    with service.slots.held(team, client_address(request, service.proxies)):
        try:
            return await _spooled(
                service, contest, request.stream() if chunks is None else chunks, sender, filename, entry, cap, method
            )
        except OSError as exc:
            if exc.errno not in (errno.ENOSPC, errno.EDQUOT):
                raise
            raise HTTPException(
                507, "the server's disk is full: the upload was not kept and used no quota; tell the organizers"
            ) from None


async def _spooled(
    service: Service,
    contest: Contest,
    chunks: AsyncIterator[bytes],
    who: accounts.Caller,
    filename: str,
    entry: str | None,
    cap: int,
    method: Method | None,
) -> JSONResponse:
    (service.data / "incoming").mkdir(parents=True, exist_ok=True)
    with tempfile.NamedTemporaryFile(dir=service.data / "incoming", prefix="upload-") as spool:
        digest, size = hashlib.sha256(), 0
        async for chunk in chunks:
            size += len(chunk)
            if size > cap:
                raise HTTPException(
                    413, f"the upload is over {contest.service.upload_mb:g} MB, the most this contest takes"
                )
            digest.update(chunk)
            spool.write(chunk)
        spool.flush()
        if size == 0:
            raise HTTPException(422, "the upload is empty")
        about = None if method is None else method.columns()
        received = Upload(Path(spool.name), filename, size, digest.hexdigest(), entry, about)
        try:
            taken = await run_in_threadpool(
                take,
                service.engine,
                contest,
                service.data,
                who,
                received,
                service.clock(),
                service.allow_images,
                service.checks,
            )
        except Refused as refused:
            raise HTTPException(refused.status, str(refused)) from None
    return JSONResponse(taken, status_code=201 if taken["status"] == QUEUED else 422)
