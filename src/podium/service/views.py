"""What a caller may see of a submission: a team its own, with the public view of its result until the reveal."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from sqlalchemy import Connection, select

from podium.service.tables import results, submissions, teams


def _time(value: datetime | None) -> str | None:
    return None if value is None else value.isoformat()


def submission_rows(connection: Connection, team_id: int | None, submission_id: int | None = None) -> list[Any]:
    """Submissions with their team's name, newest first: one team's (``team_id``), or every team's (``None``, organizers)."""
    query = select(submissions, teams.c.name.label("team")).join(teams).order_by(submissions.c.id.desc())
    if team_id is not None:
        query = query.where(submissions.c.team_id == team_id)
    if submission_id is not None:
        query = query.where(submissions.c.id == submission_id)
    return list(connection.execute(query))


def newest_results(connection: Connection, ids: list[int] | None = None, columns: tuple[Any, ...] = tuple(results.c)) -> dict[int, Any]:
    """Each submission's result of its newest round: of ``ids``, or of every submission (``None``).

    ``columns`` (``submission_id`` among them) leave out what is not needed: the
    leaderboard reads scores, not the documents.
    """
    query = select(*columns).order_by(results.c.round)
    if ids is not None:
        query = query.where(results.c.submission_id.in_(ids))
    return {row.submission_id: row for row in connection.execute(query)}  # later rounds overwrite earlier ones


def submission_view(row: Any, result: Any | None, full: bool) -> dict[str, Any]:
    """``full``: the whole result document (organizers, or anyone after the reveal); else its public view."""
    document = None if result is None else (result.document if full else result.public_document)
    run = (document or {}).get("run") or {}
    return {
        "id": row.id,
        "team": row.team,
        "phase": row.phase,
        "kind": row.kind,
        "filename": row.filename,
        "size": row.size,
        "sha256": row.sha256,
        "entry": row.entry,
        "created": _time(row.created),
        "status": row.status,
        "reason": row.reason,
        "problems": row.problems or [],
        "started": _time(row.started),
        "finished": _time(row.finished),
        "selected": bool(row.selected),
        "round": None if result is None else result.round,
        "stderr_tail": run.get("stderr_tail"),
        "result": document,
    }
