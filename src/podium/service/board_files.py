"""The leaderboard as files and as a chart: CSV (what the page shows, one row per team) and the best public score over time.

The CSV holds the board as every caller sees it (public scores until the
reveal, then the final ranking with each team's public rank beside it); a
cell of text that a spreadsheet would read as a formula (``=``, ``+``, ``-``,
``@``) is quoted with a leading ``'`` (OWASP's advice on CSV injection).

The history is each day's best public score by the board's first criterion
(UTC days): of the ``TOP`` teams first on the board, each one's best so far
at the end of every day it sent a scored submission, and the contest's best
so far each day; the leaderboard page draws it with the vendored Vega-Lite
and shows the same numbers as a table without JavaScript.
"""

from __future__ import annotations

import csv
import io
from typing import Any

from sqlalchemy import Connection

from podium.contest import Contest
from podium.service.leaderboard import scored_entries

TOP = 10  # teams drawn in the chart
FORMULA = ("=", "+", "-", "@", "\t", "\r")


def _cell(value: Any) -> Any:
    return "'" + value if isinstance(value, str) and value.startswith(FORMULA) else value


def board_csv(board: dict[str, Any]) -> bytes:
    """The board's rows as CSV (UTF-8, a header row): ranks, team, status, entries, last, each criterion, measured, rank sum."""
    names = [c["name"] for c in board["criteria"]]
    measured = board.get("measured") or []
    public = ["public_rank"] if board["revealed"] else []
    header = ["rank", *public, "team", "status", "entries", "last", *names, *measured]
    header += ["rank_sum"] if board["rank_sum"] else []
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(header)
    for t in board["teams"]:
        row = [t["rank"], *(t.get("public_rank") for _ in public), _cell(t["team"]), t["status"]]
        row += [t["entries"], t["last"] or "", *(t["scores"].get(n) for n in names)]
        row += [(t.get("measured") or {}).get(m) for m in measured]
        row += [t["rank_sum"]] if board["rank_sum"] else []
        writer.writerow(["" if v is None else v for v in row])
    return out.getvalue().encode()


def best_over_time(connection: Connection, contest: Contest, board: dict[str, Any]) -> dict[str, Any]:
    """The history of the board of ``contest`` (a track, and its phases when phases name data): ``points`` (day, team, best so far) of its first teams, ``days`` (day, best, team)."""
    criterion = board["criteria"][0]
    name, higher = criterion["name"], criterion["higher_is_better"]
    shown = [t["team"] for t in board["teams"] if t["status"] == "scored"][:TOP]
    names = {t["team"] for t in board["teams"]}
    points: list[dict[str, Any]] = []
    leaders: dict[str, tuple[float, str]] = {}  # day -> the best score sent up to its end, and its team
    for team, entries in scored_entries(connection, contest).items():
        if team not in names:
            continue
        best: float | None = None
        by_day: dict[str, float] = {}
        for entry in entries:  # oldest first
            score = entry.public.get(name)
            if score is None:
                continue
            if best is None or (score > best if higher else score < best):
                best = score
            by_day[entry.created.date().isoformat()] = best
        if team in shown:
            points += [{"day": day, "team": team, "best": value} for day, value in by_day.items()]
        for day, value in by_day.items():
            held = leaders.get(day)
            if held is None or (value > held[0] if higher else value < held[0]):
                leaders[day] = (value, team)
    days: list[dict[str, Any]] = []
    for day in sorted(leaders):  # the contest's best so far: never worse than the day before
        value, team = leaders[day]
        if days and not (value > days[-1]["best"] if higher else value < days[-1]["best"]):
            value, team = days[-1]["best"], days[-1]["team"]
        days.append({"day": day, "best": value, "team": team})
    return {"criterion": name, "higher_is_better": higher, "points": points, "days": days}


def history_spec(history: dict[str, Any], score: str) -> dict[str, Any]:
    """A Vega-Lite line chart of the first teams' best public ``score`` (its title) by day (a step line each, a point per day sent)."""
    return {
        "$schema": "https://vega.github.io/schema/vega-lite/v5.json",
        "title": f"Best public {score} by day",
        "width": "container",
        "height": 260,
        "data": {"values": history["points"]},
        "mark": {"type": "line", "interpolate": "step-after", "point": True},
        "encoding": {
            "x": {"field": "day", "type": "temporal", "title": "day (UTC)"},
            "y": {
                "field": "best",
                "type": "quantitative",
                "title": f"best public {score}",
                "scale": {"zero": False},
            },
            "color": {"field": "team", "type": "nominal", "title": "team"},
            "tooltip": [{"field": "team"}, {"field": "day", "type": "temporal"}, {"field": "best", "format": ".4~f"}],
        },
    }
