"""How each program on the board ran: its time and peak RAM, and the points they earned where the rule gives some.

In a contest of programs these decide the rank (face-clustering's final
points weigh time and RAM), so the board shows them beside the scores: the
measurements are the run's (``run.wall_s``, ``run.peak_memory_mb``), the
points the shown split's details (``time_points``, ``ram_points``).
"""

from __future__ import annotations

from typing import Any

from sqlalchemy import Connection

from podium.service.tables import results
from podium.service.views import newest_results

RUN = (("wall_s", "time (s)"), ("peak_memory_mb", "peak RAM (MB)"))
POINTS = (("time_points", "time points"), ("ram_points", "RAM points"))


def measured(document: dict[str, Any] | None, split: str | None) -> dict[str, Any]:
    """The run's measurements and points of one result document, by column title (``split``: whose details; ``None``: the whole)."""
    if not document or "run" not in document:
        return {}
    run = document.get("run") or {}
    splits = document.get("splits") or {}
    details = (splits.get(split) or {}).get("details") if split in splits else document.get("details")
    values = {title: run.get(key) for key, title in RUN}
    values |= {title: (details or {}).get(key) for key, title in POINTS if key in (details or {})}
    return values


def board_measured(connection: Connection, board: dict[str, Any], shown: dict[str, int]) -> list[str]:
    """Add each shown program's measurements to its board row (``measured``); the column titles, none for a contest of files."""
    found = newest_results(connection, list(shown.values()), (results.c.submission_id, results.c.document))
    columns: list[str] = []
    for team in board["teams"]:
        document = (
            found[shown[team["team"]]].document if team["team"] in shown and shown[team["team"]] in found else None
        )
        team["measured"] = measured(document, board["split"] if document and "splits" in document else None)
        columns += [c for c in team["measured"] if c not in columns]
    return columns
