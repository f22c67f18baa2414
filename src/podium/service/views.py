"""What a caller may see: of a submission, a team its own, with the public view of its result until the reveal; of the contest, no server folder."""

from __future__ import annotations

from datetime import datetime
from pathlib import Path
from typing import Any

from sqlalchemy import Connection, select

from podium.challenges import get
from podium.contest import Contest, ContestError
from podium.service.accounts import Caller
from podium.service.intake import Refused, open_phase
from podium.service.methods import method_view
from podium.service.state import is_revealed
from podium.service.tables import MAX_ID, results, submissions, teams


def _time(value: datetime | None) -> str | None:
    return None if value is None else value.isoformat()


def submission_rows(
    connection: Connection, contest: str, team_id: int | None, submission_id: int | None = None
) -> list[Any]:
    """Submissions of ``contest`` with their team's name, newest first: one team's (``team_id``), or every team's (``None``, organizers)."""
    query = (
        select(submissions, teams.c.name.label("team"))
        .join(teams)
        .where(teams.c.contest == contest)
        .order_by(submissions.c.id.desc())
    )
    if team_id is not None:
        query = query.where(submissions.c.team_id == team_id)
    if submission_id is not None:
        query = query.where(submissions.c.id == submission_id)
    return list(connection.execute(query))


def newest_results(
    connection: Connection, ids: list[int] | None = None, columns: tuple[Any, ...] = tuple(results.c)
) -> dict[int, Any]:
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
        "track": row.track,
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
        **method_view(row),
        "round": None if result is None else result.round,
        "stderr_tail": run.get("stderr_tail"),
        "result": document,
    }


def visible_submissions(
    connection: Connection,
    contest: Contest,
    who: Caller,
    now: datetime,
    submission_id: int | None = None,
    scores_only: bool = False,
) -> list[dict[str, Any]]:
    """The submissions ``who`` may see (a team its own, organizers every team's; a user in no team of the contest none),
    as :func:`submission_view` shows them; ``scores_only`` (a list of them): without their result documents (an
    ILSVRC Task 1 document is 5 MB), ``scored_on`` holding the scores a list shows and the split they are of."""
    if (submission_id is not None and not 0 < submission_id <= MAX_ID) or (who.team_id is None and not who.organizer):
        return []
    if not who.organizer and who.team_id is None:
        return []  # a user of no team in this contest
    rows = submission_rows(connection, contest.id, None if who.organizer else who.team_id, submission_id)
    full = who.organizer or is_revealed(connection, contest, now)
    if scores_only:
        scores = (results.c.submission_id, results.c.public_scores, results.c.private_scores)
        found = newest_results(connection, [r.id for r in rows], scores)
        return [
            submission_view(row, None, full) | {"scored_on": _scored_on(found.get(row.id), full, _split(contest, row))}
            for row in rows
        ]
    found = newest_results(connection, [r.id for r in rows])
    return [submission_view(row, found.get(row.id), full) for row in rows]


def _split(contest: Contest, row: Any) -> bool:
    """Whether the board of a submission's track and phase has a split (one a reloaded contest no longer has: taken
    as split, so its scores are labelled)."""
    try:
        return contest.on(row.track, row.phase).split is not None
    except ContestError:
        return True


def _scored_on(result: Any | None, full: bool, split: bool) -> tuple[dict[str, Any], str | None]:
    """The scores a list shows of a result, and their split where its board has one (``split``): the private split's
    to those who may see it (as the final board ranks), else the public split's. Without a split both columns hold
    the whole test set's scores, which are shown unlabelled (they read 'private' to organizers, 'public' to teams)."""
    if result is None:
        return {}, None
    if not split:
        return result.public_scores or {}, None
    return (result.private_scores or {}, "private") if full else (result.public_scores or {}, "public")


def contest_view(connection: Connection, contest: Contest, now: datetime) -> dict[str, Any]:
    """The contest as anyone may see it: its summary without the server's folders, whether it is revealed, the open phase."""
    summary = contest.summary()
    for scored in (summary, *summary.get("tracks", ()), *summary.get("boards", ())):
        for private_path in ("truth", "images"):  # the server's folders are nobody's business
            scored.pop(private_path, None)
        data = {
            p.name for p in get(scored["challenge"]).parameters if p.role == "data"
        }  # files of the truth (boxes, meta): their names only
        scored["parameters"] = {k: Path(v).name if k in data else v for k, v in scored["parameters"].items()}
    summary["revealed"] = is_revealed(connection, contest, now)
    try:
        summary["open_phase"] = open_phase(contest, now).name
    except Refused as closed:
        summary["open_phase"], summary["closed"] = None, str(closed)
    return summary
