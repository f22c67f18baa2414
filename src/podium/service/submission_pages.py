"""A team's submissions on the pages: cancel a queued one, select or unselect a final one, download each one's file, result and logs.

The downloads (``/submissions/N/file``, ``/result``, ``/logs``) are the API's
(:mod:`podium.service.downloads`) for the session's caller.

Each form is a POST with the session's CSRF field (:func:`podium.service.pages.checked_form`)
answered by a 303 back to the submissions page, which says what was done; htmx may
send the same form and follow the redirect. The rules are the API's, by the same
functions (:mod:`podium.service.choices`): a refusal is the error page with the
API's status and message (another team's submission: 404, as if it did not exist).
"""

from __future__ import annotations

from urllib.parse import quote

from fastapi import APIRouter, HTTPException, Request
from fastapi.responses import RedirectResponse, Response

from podium.service import choices, methods
from podium.service.database import writing
from podium.service.deps import ContestDep, ServiceDep, team_of
from podium.service.downloads import Kind, download
from podium.service.intake import Refused
from podium.service.pages import _form, checked_form, signed_in
from podium.service.uploads import method_given
from podium.service.urls import site_url

router = APIRouter(include_in_schema=False)


def _back(request: Request, done: str) -> Response:
    return RedirectResponse(site_url(request, "/submissions?done=" + quote(done)), status_code=303)


@router.get("/submissions/{submission_id}/{kind}")
def download_page(
    service: ServiceDep, contest: ContestDep, request: Request, submission_id: int, kind: Kind
) -> Response:
    _, who = signed_in(service, request)
    return download(service, contest, who, submission_id, kind)


@router.post("/submissions/{submission_id}/method")
async def describe(service: ServiceDep, contest: ContestDep, request: Request, submission_id: int) -> Response:
    _, who = await checked_form(service, request)
    method = method_given(await _form(request))
    try:
        with writing(service.engine) as connection:
            methods.describe(connection, contest, team_of(who), submission_id, method, service.clock(), who.user_id)
    except Refused as refused:
        raise HTTPException(refused.status, str(refused)) from None
    return RedirectResponse(
        site_url(request, f"/submissions/{submission_id}?done=" + quote("the method is saved")), status_code=303
    )


@router.post("/submissions/{submission_id}/cancel")
async def cancel(service: ServiceDep, request: Request, submission_id: int) -> Response:
    _, who = await checked_form(service, request)
    try:
        choices.cancel_queued(service.engine, team_of(who), submission_id, service.clock(), who.user_id)
    except Refused as refused:
        raise HTTPException(refused.status, str(refused)) from None
    return _back(request, f"submission {submission_id} is cancelled; it uses no quota")


@router.post("/submissions/{submission_id}/selected")
async def select(service: ServiceDep, contest: ContestDep, request: Request, submission_id: int) -> Response:
    _, who = await checked_form(service, request)
    wanted = (await _form(request)).get("selected", "")
    if wanted not in ("true", "false"):
        raise HTTPException(422, "send selected=true or selected=false")
    selected = wanted == "true"
    try:
        choices.decide(service.engine, contest, team_of(who), submission_id, selected, service.clock(), who.user_id)
    except Refused as refused:
        raise HTTPException(refused.status, str(refused)) from None
    said = "selected for the final ranking" if selected else "no longer selected"
    return _back(request, f"submission {submission_id} is {said}")
