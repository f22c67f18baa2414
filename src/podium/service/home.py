"""The home page of a server with several contests: each served contest, open, upcoming or finished, with its phases
and the time left (``/`` and ``GET /api/contests``)."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from podium.contest import Contest
from podium.core.errors import UsageError
from podium.service import joining, state
from podium.service.database import reading

OPEN, UPCOMING, FINISHED = "open", "upcoming", "finished"


def served(service: Any) -> list[Contest]:
    """The contests served, by id (a contest whose file no longer reads is left out: the server log names it)."""
    with reading(service.engine) as connection:
        ids = state.served_ids(connection)
    found = []
    for contest_id in ids:
        try:
            found.append(service.contests.get(contest_id))
        except UsageError:
            continue  # withdrawn since the ids were read
    return found


def when(contest: Contest, now: datetime) -> tuple[str, datetime | None]:
    """Whether ``contest`` is open, upcoming or finished at ``now``, and the moment that changes it (``None``: never)."""
    current = next((p for p in contest.phases if p.start <= now < p.end), None)
    if current is not None:
        return OPEN, current.end
    later = [p.start for p in contest.phases if p.start > now]
    return (UPCOMING, min(later)) if later else (FINISHED, None)


def summary(contest: Contest, now: datetime) -> dict[str, Any]:
    """What the home page and the API say of one contest."""
    status, until = when(contest, now)
    return {
        "id": contest.id,
        "title": contest.title or contest.id,
        "status": status,
        "until": None if until is None else until.isoformat(),
        "seconds_left": None if until is None else int((until - now).total_seconds()),
        "tracks": contest.track_ids() if contest.tracks else [],
        "registration_open": joining.is_open(contest, now),
        "phases": [{"name": p.name, "start": p.start.isoformat(), "end": p.end.isoformat()} for p in contest.phases],
    }


def groups(service: Any, now: datetime) -> dict[str, list[dict[str, Any]]]:
    """The served contests' summaries: open (soonest to close first), upcoming (soonest to open first), finished (latest first)."""
    found: dict[str, list[dict[str, Any]]] = {OPEN: [], UPCOMING: [], FINISHED: []}
    for contest in served(service):
        found[when(contest, now)[0]].append(summary(contest, now))
    found[OPEN].sort(key=lambda c: c["until"])
    found[UPCOMING].sort(key=lambda c: c["until"])
    found[FINISHED].sort(key=lambda c: c["phases"][-1]["end"] if c["phases"] else "", reverse=True)
    return found


def joined(service: Any, who: Any) -> dict[str, str]:
    """The signed-in user's team in each contest they are in (contest id -> team name); none for a visitor or a team's token."""
    if who is None or who.user_id is None:
        return {}
    with reading(service.engine) as connection:
        return joining.teams_by_contest(connection, who.user_id)
