"""What a team downloads of its own submission: the file as it was uploaded, its result document, the logs of its program's run.

Each is answered to whoever may see the submission (its team, an organizer),
by the API (``GET /api/submissions/N/file``, ``/result``, ``/logs``) and the
pages (``/submissions/N/...``) alike; anyone else is answered 404, as if the
submission did not exist. The result is the document the caller sees: its
public view until the reveal (:func:`podium.service.views.visible_submissions`).
The logs are what the run kept: its outcome, exit code, time and peak memory,
and the last 16 KiB of its stderr (a program's stdout is not kept: see
:class:`podium.runner.process.RunReport`).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Literal

from fastapi import HTTPException
from fastapi.responses import FileResponse, Response

from podium.contest import Contest
from podium.service.accounts import Caller
from podium.service.database import reading
from podium.service.deps import Service
from podium.service.filenames import content_disposition
from podium.service.intake import UPLOADED, submission_folder
from podium.service.scoring import IMAGE_ARCHIVE
from podium.service.views import visible_submissions

Kind = Literal["file", "result", "logs"]
KINDS: tuple[Kind, ...] = ("file", "result", "logs")


def uploaded_file(data: Path, submission_id: int) -> Path | None:
    """The file submission ``submission_id`` was uploaded as, if it was kept (submissions before podium 0.10 kept only their files unpacked)."""
    folder = submission_folder(data, submission_id)
    return next((folder / name for name in (UPLOADED, IMAGE_ARCHIVE) if (folder / name).is_file()), None)


def logs_text(view: dict[str, Any]) -> str | None:
    """The run's log as kept, as text; ``None`` when no program ran (a submission of files, or one not run yet)."""
    run = (view["result"] or {}).get("run")
    if view["kind"] != "programs" or not run:
        return None
    head = [
        f"# submission {view['id']} of team {view['team']}: {run.get('outcome')}, exit code {run.get('exit_code')}, "
        f"{run.get('wall_s', 0):.2f} s, peak memory {run.get('peak_memory_mb', 0):.1f} MB, sandbox {run.get('sandbox')}",
        "# stderr as kept: its last 16 KiB (stdout is not kept)",
    ]
    return "\n".join(head) + "\n" + (run.get("stderr_tail") or "") + "\n"


def download(service: Service, contest: Contest, who: Caller, submission_id: int, kind: Kind) -> Response:
    """``kind`` of the caller's submission in ``contest`` as an attachment; 404 for another team's, or when there is none of
    that kind yet; 429 when the caller, or the server, sends as many downloads at once as it may
    (:mod:`podium.service.download_slots`)."""
    return service.downloads.answer(who, lambda: _download(service, contest, who, submission_id, kind))


def _download(service: Service, contest: Contest, who: Caller, submission_id: int, kind: Kind) -> Response:
    with reading(service.engine) as connection:
        found = visible_submissions(connection, contest, who, service.clock(), submission_id)
    if not found:
        raise HTTPException(404, f"no submission {submission_id} of yours")
    view = found[0]
    name = f"submission-{submission_id}"
    if kind == "file":
        path = uploaded_file(service.data, submission_id)
        if path is None:
            raise HTTPException(404, f"submission {submission_id}'s file was not kept (sent before podium 0.10)")
        shown = {"Content-Disposition": content_disposition(view["filename"] or name)}  # stored before 0.11: as sent
        return FileResponse(path, media_type="application/octet-stream", headers=shown)
    if kind == "result":
        if view["result"] is None:
            raise HTTPException(404, f"submission {submission_id} has no result yet: it is {view['status']}")
        body = json.dumps(view["result"], ensure_ascii=False, indent=1).encode()
        return _attachment(body, "application/json", f"{name}-result.json")
    text = logs_text(view)
    if text is None:
        said = (
            "no program ran: it is a submission of files" if view["kind"] != "programs" else f"it is {view['status']}"
        )
        raise HTTPException(404, f"submission {submission_id} has no logs: {said}")
    return _attachment(text.encode(), "text/plain; charset=utf-8", f"{name}-logs.txt")


def _attachment(body: bytes, media_type: str, filename: str) -> Response:
    return Response(body, media_type=media_type, headers={"Content-Disposition": content_disposition(filename)})
