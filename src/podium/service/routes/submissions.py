"""A team's submissions: upload, list, show, download, cancel, select; its quota. ``/api/submissions...``, ``/api/quota``."""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, Header, HTTPException, Query, Request
from fastapi.responses import JSONResponse, Response

from podium.service import choices, methods
from podium.service.database import writing
from podium.service.deps import CallerDep, ContestDep, ReadingDep, ServiceDep, TrackQuery, team_of, track_of
from podium.service.downloads import Kind, download
from podium.service.intake import Refused
from podium.service.models import Cancelled, MethodFields, QuotaUsage, Selected, SubmissionView, Taken
from podium.service.quota import usage
from podium.service.statuses import CANCELLED
from podium.service.uploads import Bearer, method_given, receive_upload
from podium.service.views import visible_submissions

router = APIRouter()


@router.post(
    "/submissions",
    status_code=201,
    response_model=Taken,
    summary="Upload a submission: the request body is the file, zip or tar.gz",
    responses={
        413: {"description": "larger than the contest's upload_mb"},
        409: {"description": "no phase is open"},
        422: {"description": "rejected: every problem, with file and line (no quota used)"},
        429: {"description": "quota used"},
    },
)
async def upload(
    service: ServiceDep,
    request: Request,
    authorization: Annotated[str | None, Header()] = None,
    filename: Annotated[
        str, Query(max_length=255, description="The file's name (an archive's kind is read from its bytes)")
    ] = "submission",
    entry: Annotated[
        str | None,
        Query(
            max_length=255,
            description="Programs: the entry point in the archive [run.sh, else its only .py or .sh file at the top], or docker: when the file is an image saved by docker save",
        ),
    ] = None,
    track: TrackQuery = None,
    method: Annotated[str | None, Query(max_length=methods.MAX_METHOD, description="The method's name")] = None,
    description: Annotated[
        str | None, Query(max_length=methods.MAX_DESCRIPTION, description="The method in plain text")
    ] = None,
    paper_url: Annotated[
        str | None, Query(max_length=methods.MAX_URL, description="An http(s) link to the paper")
    ] = None,
    code_url: Annotated[
        str | None, Query(max_length=methods.MAX_URL, description="An http(s) link to the code")
    ] = None,
    shown: Annotated[bool, Query(description="Show the method on the board after the reveal")] = False,
) -> JSONResponse:
    about = method_given(
        {"method": method, "description": description, "paper_url": paper_url, "code_url": code_url, "shown": shown}
    )
    return await receive_upload(service, request, Bearer(authorization), filename, entry, track=track, method=about)


@router.get(
    "/submissions",
    response_model=list[SubmissionView],
    summary="Your team's submissions, newest first (organizers: every team's)",
)
def list_submissions(
    service: ServiceDep, contest: ContestDep, who: CallerDep, connection: ReadingDep
) -> list[dict[str, Any]]:
    return visible_submissions(connection, contest, who, service.clock())


@router.get(
    "/submissions/{submission_id}",
    response_model=SubmissionView,
    summary="One submission: status, problems, stderr tail, result",
)
def show_submission(
    service: ServiceDep, contest: ContestDep, submission_id: int, who: CallerDep, connection: ReadingDep
) -> dict[str, Any]:
    found = visible_submissions(connection, contest, who, service.clock(), submission_id)
    if not found:
        raise HTTPException(404, f"no submission {submission_id} of yours")
    return found[0]


DOWNLOADS: tuple[tuple[Kind, str, str], ...] = (  # what, its media type, the operation's summary
    ("file", "application/octet-stream", "Download the file as your team uploaded it"),
    ("result", "application/json", "Download the result document (its public view until the reveal)"),
    (
        "logs",
        "text/plain",
        "Download the logs of a program's run: outcome, exit code, time, memory, the last 16 KiB of stderr",
    ),
)


def _download_route(kind: Kind, media: str, summary: str) -> None:
    """``GET /api/submissions/{id}/KIND``: one of the caller's downloads (:func:`podium.service.downloads.download`)."""

    def handler(service: ServiceDep, contest: ContestDep, submission_id: int, who: CallerDep) -> Response:
        return download(service, contest, who, submission_id, kind)

    router.add_api_route(
        f"/submissions/{{submission_id}}/{kind}",
        handler,
        methods=["GET"],
        name=f"download_{kind}",
        response_class=Response,
        summary=summary,
        responses={
            200: {"content": {media: {}}, "description": f"the {kind}, as an attachment"},
            404: {"description": "no such submission of yours, or none of this kind yet"},
        },
    )


for _kind, _media, _summary in DOWNLOADS:
    _download_route(_kind, _media, _summary)


@router.put(
    "/submissions/{submission_id}/method",
    response_model=MethodFields,
    summary="Describe the method of a submission (name, description, paper and code links, shown on the board after the reveal or not), until its phase ends",
)
def describe_method(
    service: ServiceDep, contest: ContestDep, submission_id: int, body: MethodFields, who: CallerDep
) -> dict[str, Any]:
    team_id = team_of(who)
    try:
        about = methods.checked(body.method, body.description, body.paper_url, body.code_url, body.shown)
        with writing(service.engine) as connection:
            methods.describe(connection, contest, team_id, submission_id, about, service.clock(), who.user_id)
    except Refused as refused:
        raise HTTPException(refused.status, str(refused)) from None
    return methods.method_view(about)


@router.post(
    "/submissions/{submission_id}/cancel",
    response_model=Cancelled,
    summary="Cancel a queued submission (it uses no quota)",
)
def cancel(service: ServiceDep, submission_id: int, who: CallerDep) -> dict[str, Any]:
    team_id = team_of(who)
    try:
        choices.cancel_queued(service.engine, team_id, submission_id, service.clock(), who.user_id)
    except Refused as refused:
        raise HTTPException(refused.status, str(refused)) from None
    return {"id": submission_id, "status": CANCELLED}


@router.put(
    "/submissions/{submission_id}/selected",
    response_model=Selected,
    summary="Select (true) or unselect (false) a submission for the final ranking",
)
def select_submission(
    service: ServiceDep, contest: ContestDep, submission_id: int, selected: bool, who: CallerDep
) -> dict[str, Any]:
    team_id = team_of(who)
    try:
        choices.decide(service.engine, contest, team_id, submission_id, selected, service.clock(), who.user_id)
    except Refused as refused:
        raise HTTPException(refused.status, str(refused)) from None
    return {"id": submission_id, "selected": selected}


@router.get(
    "/quota",
    response_model=QuotaUsage,
    summary="Your team's quota: used today (in the contest's time zone), in all, at once",
)
def quota(
    service: ServiceDep, served: ContestDep, who: CallerDep, connection: ReadingDep, track: TrackQuery = None
) -> dict[str, Any]:
    team_id = team_of(who)
    contest = track_of(service, track, served)
    return usage(connection, team_id, contest.quota, contest.timezone, service.clock(), contest.track_id).to_dict(
        contest.quota
    )
