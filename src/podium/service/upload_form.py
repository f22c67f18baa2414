"""The upload form of the submissions page, posted as a plain HTML form (``multipart/form-data``): it works without JavaScript.

With JavaScript the page sends the file as the request body instead, as the
API takes it, and shows the answer live. Posted as a form, the request is
read under the contest's ``upload_mb`` plus :data:`FORM_OVERHEAD` bytes (413
beyond, counted as it arrives, whatever Content-Length says), the form's
CSRF field is checked, and the browser is sent back to the submissions page,
where the new submission's status and problems are shown; a refusal (closed,
quota, too large) is an HTML error page that says why.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from urllib.parse import quote

from fastapi import HTTPException, Request
from fastapi.responses import RedirectResponse, Response
from starlette.datastructures import UploadFile
from starlette.types import Message

from podium.service import accounts
from podium.service.deps import Service, contest_of
from podium.service.uploads import method_given, receive_upload
from podium.service.urls import site_url

FORM_OVERHEAD = 64 << 10  # the form's other fields and multipart boundaries
CHUNK = 1 << 20


def is_form(request: Request) -> bool:
    return request.headers.get("content-type", "").startswith("multipart/form-data")


async def posted(service: Service, request: Request, token: str, who: accounts.Caller) -> Response:
    """Take the form's file as a submission (:func:`podium.service.uploads.receive_upload`); 303 to the submissions page."""
    upload_mb = contest_of(service, request).service.upload_mb
    limit = int(upload_mb * 2**20) + FORM_OVERHEAD
    too_large = HTTPException(413, f"the upload is over {upload_mb:g} MB, the most this contest takes")
    declared = request.headers.get("content-length", "")
    if declared.isdigit() and int(declared) > limit:
        raise too_large
    received = 0

    async def counted() -> Message:
        nonlocal received
        message = await request.receive()
        received += len(message.get("body", b""))
        if received > limit:
            raise too_large
        return message

    async with Request(request.scope, counted).form(max_files=1, max_fields=10, max_part_size=16384) as form:
        if form.get("csrf") != accounts.csrf_token(token):
            raise HTTPException(403, "the form's CSRF token is missing or wrong: reload the page")
        sent = form.get("file")
        if not isinstance(sent, UploadFile) or not sent.filename:
            raise HTTPException(422, "choose a file to send")
        entry = str(form.get("entry") or "").strip()[:255] or None
        track = str(form.get("track") or "")[:64] or None

        async def chunks() -> AsyncIterator[bytes]:
            while chunk := await sent.read(CHUNK):
                yield chunk

        answer = await receive_upload(
            service, request, who, sent.filename[:255], entry, chunks(), track, method_given(form)
        )
    taken = json.loads(bytes(answer.body))
    back = f"/submissions?sent={taken['id']}" + (f"&track={quote(taken['track'])}" if track else "")
    return RedirectResponse(site_url(request, back), status_code=303)
