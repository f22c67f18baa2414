"""Scoring one stored submission: what a worker does with a job, and how the answer is kept.

A file submission is scored by :func:`podium.scoring.engine.evaluate`; a program by
:func:`podium.scoring.run.run_program` in the sandbox under the contest's
limits. The outcome's status is the team's: ``scored``; ``rejected`` (the
files fail a check); ``failed`` (the program crashed, ran out of time or
memory, or wrote nothing scorable). Any exception is podium's or the
organizer's failure, never the team's: the worker retries the job.

File names in the problems are made relative to the submission, so a team
never sees the server's folders.
"""

from __future__ import annotations

import json
import os
import shlex
from dataclasses import dataclass
from pathlib import Path, PurePath
from typing import Any

from podium.challenges import get
from podium.contest import Contest
from podium.core.result import PRIVATE, PUBLIC, SCORED, Result
from podium.runner.process import Limits
from podium.runner.sandbox import CODE_FOLDER, choose
from podium.scoring.engine import evaluate
from podium.scoring.run import RunRequest, run_program
from podium.service.statuses import FAILED, REJECTED, RunStatus
from podium.service.statuses import SCORED as SUBMISSION_SCORED

DOCKER_PREFIX = "docker:"
IMAGE_ARCHIVE = "image.tar"  # a team's image, as it uploaded it (docker save)


@dataclass(frozen=True)
class Outcome:
    status: RunStatus
    reason: str | None
    problems: list[dict[str, Any]]
    document: dict[str, Any]
    public_document: dict[str, Any]
    public_scores: dict[str, Any]
    private_scores: dict[str, Any]


@dataclass(frozen=True)
class Runtime:
    """How a worker scores: the sandbox of programs (``podium run --sandbox``), a delegated cgroup,
    and the Dask scheduler that scores a job's items (:mod:`podium.scoring.distributed`), if any."""

    sandbox: str = "auto"
    cgroup: Path | None = None
    scheduler: str | None = None


def score(contest: Contest, kind: str, target: Path, entry: str | None, runtime: Runtime) -> Outcome:
    """Score the submission whose files are ``target`` (a program's code folder, with ``entry`` its entry point)."""
    evaluation = contest.evaluation()
    if kind == "files":
        result = evaluate(
            contest.challenge, contest.truth, target, contest.settings, scheduler=runtime.scheduler, **evaluation
        )
    else:
        assert contest.images is not None and entry is not None
        image = (
            str(target / IMAGE_ARCHIVE) if entry.startswith(DOCKER_PREFIX) else None
        )  # the team's own image, never one by name
        limits = Limits(contest.limits.time_s, contest.limits.memory_mb, contest.limits.disk_mb, contest.limits.cpus)
        seen = Path(CODE_FOLDER) if choose(runtime.sandbox, image is not None) == "bwrap" else target
        request = RunRequest(
            contest.challenge,
            contest.images,
            contest.truth,
            limits,
            command=None if image else program_command(seen, entry),
            image=image,
            settings=contest.settings,
            sandbox=runtime.sandbox,
            code=None if image else target,
            cgroup=runtime.cgroup,
            scheduler=runtime.scheduler,
            **evaluation,
        )
        result = run_program(request)
    return outcome_of(result, kind, target)


def program_command(code: Path, entry: str) -> str:
    """The shell command that starts a program: ``sh ENTRY`` for a shell script, ``python3 ENTRY`` for Python, else ENTRY itself."""
    path = shlex.quote(str(code / entry))
    if entry.endswith(".py"):
        return f"python3 {path}"
    if entry.endswith(".sh"):
        return f"/bin/sh {path}"
    return path


def outcome_of(result: Result, kind: str, root: Path) -> Outcome:
    document = _stored(_relative(result.to_dict(), root))
    public_document = _stored(_relative(result.public_view(), root))
    status: RunStatus
    if result.status == SCORED:
        status, reason = SUBMISSION_SCORED, None
    else:
        status = FAILED if kind == "programs" else REJECTED
        reason = result.errors[0].message if result.errors else "not scored"
    problems = public_document["errors"] + public_document["warnings"]
    splits = document.get("splits")
    public_scores = document["scores"] if splits is None else splits.get(PUBLIC, {}).get("scores", {})
    private_scores = document["scores"] if splits is None else splits.get(PRIVATE, {}).get("scores", {})
    return Outcome(status, reason, problems, document, public_document, public_scores, private_scores)


def _stored(document: dict[str, Any]) -> dict[str, Any]:
    """The document as the database keeps it: plain JSON, a parameter naming a file (the truth's ``boxes`` or ``meta``) by its name.

    The full path is the server's business (the document arrives with it as text: :mod:`podium.core.result`).
    """
    plain: dict[str, Any] = json.loads(json.dumps(document, allow_nan=False, default=str))
    parameters = plain.get("parameters") or {}
    for parameter in get(plain["challenge"]).parameters:
        if parameter.is_path and isinstance(parameters.get(parameter.name), str):
            parameters[parameter.name] = PurePath(parameters[parameter.name]).name
    return plain


def _relative(document: dict[str, Any], root: Path) -> dict[str, Any]:
    """The document with every issue's file relative to the submission (other server paths: their last part only)."""
    prefix = str(root) + os.sep

    def fix(issue: dict[str, Any]) -> dict[str, Any]:
        name = issue.get("file")
        if isinstance(name, str) and os.path.isabs(name):
            name = (
                name[len(prefix) :] if name.startswith(prefix) else "." if name == str(root) else os.path.basename(name)
            )
        return {**issue, "file": name}

    fixed = {
        **document,
        "warnings": [fix(i) for i in document["warnings"]],
        "errors": [fix(i) for i in document["errors"]],
    }
    if "splits" in document:
        fixed["splits"] = {n: {**s, "warnings": [fix(i) for i in s["warnings"]]} for n, s in document["splits"].items()}
    if "run" in document:
        fixed["run"] = {k: v for k, v in document["run"].items() if k != "workdir"}
    return fixed
