"""Taking a submission in: the open phase, the quota, safe unpacking, the checks, the queue.

The upload is first unpacked in ``DATA/incoming``; files are checked at once
(:func:`podium.scoring.engine.evaluate` with ``checks_only``); a program archive must
hold its entry point. Then, in one write transaction that locks the team's
row, the quota is checked again, the submission is recorded and (if accepted)
queued, and its folder moved to ``DATA/submissions/ID``, with the file as it was
uploaded (``upload``, or ``image.tar``) beside what was unpacked. A rejected
submission is recorded with every problem and uses no quota.
"""

from __future__ import annotations

import os
import shutil
import uuid
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any, TypeVar

from sqlalchemy import Connection, Engine, insert

from podium.contest import Contest
from podium.contest.definition import Phase
from podium.core.issues import Issue
from podium.core.result import REJECTED as RESULT_REJECTED
from podium.formats.archives import ArchiveLimits, ArchiveProblem, unpack
from podium.scoring.engine import evaluate
from podium.service import mail, queue, state
from podium.service.accounts import Caller, lock_team
from podium.service.database import writing
from podium.service.entry_points import DEFAULT_ENTRY, entry_point
from podium.service.quota import usage
from podium.service.scoring import DOCKER_PREFIX, IMAGE_ARCHIVE, outcome_of
from podium.service.statuses import QUEUED, REJECTED
from podium.service.tables import submissions

T = TypeVar("T")
Runner = Callable[
    ..., Any
]  # runs a function with its arguments, here or in another process: (function, *args, **kwargs) -> its result


class Refused(Exception):
    """An upload refused before it is recorded: ``status`` is the HTTP status (409 closed, 413 too large, 429 quota)."""

    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status = status


NEW_SUBMISSION = insert(submissions)  # built once: its values are bound at each upload
UPLOADED = "upload"  # the file as the team sent it, in DATA/submissions/ID (an image's is IMAGE_ARCHIVE)


def submission_folder(data: Path, submission_id: int) -> Path:
    """Where a submission's files are kept: ``DATA/submissions/ID``."""
    return data / "submissions" / str(submission_id)


def keep_upload(received: Path, staging: Path) -> None:
    """Keep the bytes received beside the unpacked files (a hard link where the file system allows it, else a copy)."""
    staging.mkdir(parents=True, exist_ok=True)
    try:
        os.link(received, staging / UPLOADED)
    except OSError:
        shutil.copyfile(received, staging / UPLOADED)


@dataclass(frozen=True)
class Upload:
    path: Path  # the bytes received
    filename: str
    size: int
    sha256: str
    entry: str | None  # programs: the entry point (default run.sh), or docker: for an image archive
    about: dict[str, Any] | None = None  # the method's columns given with it (podium.service.methods.Method)


MIN_UNPACK_BUDGET = 16 << 20  # a small archive may always unpack to this much


def unpack_budget(size: int, ratio: float) -> int:
    """The bytes an upload of ``size`` bytes may unpack to: ``ratio`` times it (the contest's ``unpack_ratio``), and at least 16 MiB.

    >>> unpack_budget(2_300_000, 20) // 2**20
    43
    """
    return max(int(size * ratio), MIN_UNPACK_BUDGET)


def open_phase(contest: Contest, now: datetime, track: str | None = None) -> Phase:
    """The phase open at ``now`` (409 if none); with ``track``, a phase that opens that track (409 naming the tracks it opens)."""
    for phase in contest.phases:
        if phase.start <= now < phase.end:
            if track is not None and phase.tracks is not None and track not in phase.tracks:
                raise Refused(
                    409,
                    f"phase {phase.name} does not take submissions for track {track}; it opens {', '.join(phase.tracks)}",
                )
            return phase
    upcoming = [p for p in contest.phases if p.start > now]
    if upcoming:
        raise Refused(409, f"no phase is open: {upcoming[0].name} opens at {upcoming[0].start.isoformat()}")
    raise Refused(409, f"the contest has ended: its last phase closed at {contest.phases[-1].end.isoformat()}")


def check_quota(connection: Connection, contest: Contest, caller: Caller, now: datetime) -> None:
    """Refuse a team whose upload to ``contest``'s track would be refused: no phase open (409), its quota used (429),
    before its upload is read (``take`` checks again, under a lock)."""
    _check_quota(connection, contest, open_phase(contest, now, contest.track_id), caller, now)


def _check_quota(connection: Connection, contest: Contest, phase: Phase, caller: Caller, now: datetime) -> None:
    """The track's quota (the contest's unless the track sets one), then the phase's own, if it has one."""
    assert caller.team_id is not None
    refusal = usage(connection, caller.team_id, contest.quota, contest.timezone, now, contest.track_id).refusal(
        contest.quota
    )
    if refusal is None and phase.quota is not None:
        used = usage(connection, caller.team_id, phase.quota, contest.timezone, now, contest.track_id, phase.name)
        refusal = used.refusal(phase.quota, f" of phase {phase.name}")
    if refusal:
        raise Refused(429, refusal)


def inline(function: Callable[..., T], *args: Any, **kwargs: Any) -> T:
    """Where the checks run by default: in this thread (``podium serve`` gives a :class:`~podium.service.check_pool.CheckPool`)."""
    return function(*args, **kwargs)


def take(
    engine: Engine,
    contest: Contest,
    data: Path,
    caller: Caller,
    upload: Upload,
    now: datetime,
    allow_images: bool,
    checks: Runner = inline,
) -> dict[str, Any]:
    """Check (the files' checks run by ``checks``), record and queue an upload to ``contest``'s track (:meth:`Contest.on`); the submission as the team sees it."""
    assert caller.team_id is not None
    phase = open_phase(contest, now, contest.track_id)
    staging = data / "incoming" / uuid.uuid4().hex
    try:
        target, status, reason, problems = _check(contest, phase, upload, staging, allow_images, checks)
        if not (staging / IMAGE_ARCHIVE).exists():  # an image is kept as it came already
            keep_upload(upload.path, staging)
        with writing(engine) as connection:
            banned = lock_team(
                connection, caller.team_id, caller.user_id
            )  # the team or user banned while the body came
            if banned is not None:  # the ban is final
                raise Refused(403, banned)
            if status == QUEUED:
                _check_quota(connection, contest, phase, caller, now)
            values = {
                "team_id": caller.team_id,
                "phase": phase.name,
                "track": contest.track_id,
                "kind": phase.submissions,
                "filename": upload.filename[:255],
                "size": upload.size,
                "sha256": upload.sha256,
                "target": str(target.relative_to(staging)),
                "entry": _entry(phase, upload, target),
                "created": now,
                "status": status,
                "reason": reason,
                "problems": problems,
                "selected": False,
                **(upload.about or {}),
            }
            submission_id = int(connection.execute(NEW_SUBMISSION, values).inserted_primary_key[0])  # type: ignore[index]
            if status == QUEUED:
                queue.enqueue_new(connection, submission_id, state.current_round(connection, contest.id), now)
            else:
                mail.submission_done(connection, submission_id, status, reason, None, now)
            folder = submission_folder(data, submission_id)
            folder.parent.mkdir(parents=True, exist_ok=True)
            staging.rename(folder)
    finally:
        shutil.rmtree(staging, ignore_errors=True)
    return {
        "id": submission_id,
        "phase": phase.name,
        "track": contest.track_id,
        "kind": phase.submissions,
        "status": status,
        "reason": reason,
        "problems": problems,
    }


def _entry(phase: Phase, upload: Upload, target: Path) -> str | None:
    """What a program's submission records as its entry point: the one found (:func:`entry_point`), else what was asked."""
    if phase.submissions != "programs":
        return None
    if upload.entry and upload.entry.startswith(DOCKER_PREFIX):
        return upload.entry
    return entry_point(target, upload.entry)[0] or upload.entry or DEFAULT_ENTRY


def _check(
    contest: Contest, phase: Phase, upload: Upload, staging: Path, allow_images: bool, checks: Runner
) -> tuple[Path, str, str | None, list[dict[str, Any]]]:
    """Unpack and check: (what to score, status, reason, problems)."""
    if phase.submissions == "programs" and upload.entry and upload.entry.startswith(DOCKER_PREFIX):
        staging.mkdir(parents=True)
        if not allow_images:
            return staging, REJECTED, "this server runs no Docker engine: submit the program's code as an archive", []
        if upload.entry != DOCKER_PREFIX:  # a name could be anyone's image: a team's image is the archive it uploads
            reason = f"upload your image as an archive of docker save with the entry {DOCKER_PREFIX} alone; an image is not taken by name"
            return staging, REJECTED, reason, [Issue("image_by_name", reason, upload.filename).to_dict()]
        shutil.copyfile(upload.path, staging / IMAGE_ARCHIVE)
        return staging, QUEUED, None, []
    limits = ArchiveLimits(max_bytes=unpack_budget(upload.size, contest.service.unpack_ratio))
    try:
        target = unpack(upload.path, upload.filename, staging / "files", limits)
    except ArchiveProblem as exc:
        shutil.rmtree(staging / "files", ignore_errors=True)
        (staging / "files").mkdir(parents=True, exist_ok=True)
        return staging / "files", REJECTED, str(exc), [Issue("archive", str(exc), upload.filename).to_dict()]
    if phase.submissions == "programs":
        entry, missing = entry_point(target, upload.entry)
        if entry is None:
            return target, REJECTED, missing, [Issue("no_entry_point", str(missing), upload.filename).to_dict()]
        return target, QUEUED, None, []
    result = checks(
        evaluate, contest.challenge, contest.truth, target, contest.settings, checks_only=True, **contest.evaluation()
    )
    outcome = outcome_of(result, "files", target)
    if result.status == RESULT_REJECTED:
        return target, REJECTED, outcome.reason, outcome.problems
    return target, QUEUED, None, outcome.problems
