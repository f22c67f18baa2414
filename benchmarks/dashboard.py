"""The organizers' dashboard on 10,000 submissions: its figures and its whole page, with migration 0008's indexes and without.

A SQLite database (or ``--database`` a PostgreSQL URL, emptied first) gets
100 teams and N submissions over 30 days (every status, a job each but the
rejected, a quarter ended in the last hour, a few waiting), and the dashboard
is timed in one run, the two sides interleaved so the machine's load falls on
both: ``GET /api/dashboard`` (the figures) and ``GET /organizer`` (the page:
figures, teams, the newest submissions, announcements) through the app, with
the indexes ``ix_submissions_track_created`` and ``ix_submissions_track_finished``, and
with them dropped (the baseline: what the queries cost without them). Both
sides answer the same figures.

    .venv/bin/python benchmarks/dashboard.py [--submissions 10000] [--repeats 5] [--database URL]
"""

from __future__ import annotations

import argparse
import json
import random
import sys
import tempfile
import urllib.request
from datetime import timedelta
from pathlib import Path

from sqlalchemy import insert, text
from timing import Timed, best_of, machine_header

sys.path.insert(0, str(Path(__file__).parent.parent / "tests"))
from podium.service import accounts
from podium.service.database import writing
from podium.service.pages import COOKIE
from podium.service.tables import jobs, submissions
from service_helpers import Clock, LiveServer, at, set_up, write_contest

STATUSES = ("scored", "scored", "scored", "rejected", "failed", "error", "queued")
INDEXES = (("ix_submissions_track_created", "track, created"), ("ix_submissions_track_finished", "track, finished"))


def fill(engine: object, count: int, now: object) -> None:
    """100 teams' ``count`` submissions over 30 days, with their jobs."""
    chance = random.Random(7)
    rows, job_rows = [], []
    for n in range(count):
        status = STATUSES[chance.randrange(len(STATUSES))]
        created = now - timedelta(seconds=chance.uniform(0, 30 * 86_400))  # type: ignore[operator]
        if status != "queued" and chance.random() < 0.25:
            created = now - timedelta(seconds=chance.uniform(60, 3_600))  # type: ignore[operator]
        started = None if status == "queued" else created + timedelta(seconds=chance.uniform(1, 30))
        finished = None if started is None else min(now, started + timedelta(seconds=chance.uniform(1, 60)))  # type: ignore[type-var]
        rows.append(
            {
                "team_id": n % 100 + 1,
                "phase": "first",
                "track": "test-glas",
                "kind": "files",
                "filename": f"s{n}.zip",
                "size": 1000,
                "sha256": "0" * 64,
                "target": "files",
                "created": created,
                "status": status,
                "reason": "it was stopped at the time limit of 60 s" if status == "failed" else None,
                "started": started,
                "finished": finished,
                "selected": False,
            }
        )
    with writing(engine) as connection:  # type: ignore[arg-type]
        connection.execute(insert(submissions), rows)
        for n, row in enumerate(rows, start=1):
            if row["status"] != "rejected":
                state = "queued" if row["status"] == "queued" else "done"
                job_rows.append(
                    {"submission_id": n, "round": 1, "state": state, "attempts": 1, "created": row["created"]}
                )
        connection.execute(insert(jobs), job_rows)


def _get(url: str, headers: dict[str, str]) -> bytes:
    with urllib.request.urlopen(urllib.request.Request(url, headers=headers), timeout=120) as response:
        return bytes(response.read())


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--submissions", type=int, default=10_000)
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--database", help="a PostgreSQL URL (its database is emptied first) [default: SQLite]")
    options = parser.parse_args()
    machine_header(options.repeats)
    with tempfile.TemporaryDirectory() as folder:
        tmp = Path(folder)
        if options.database:
            from sqlalchemy import create_engine

            with create_engine(options.database).begin() as connection:
                connection.execute(text("DROP SCHEMA public CASCADE; CREATE SCHEMA public"))
        clock = Clock(at("2026-03-30T12:00:00Z"))
        contest = write_contest(tmp / "contest")
        url = options.database or f"sqlite:///{tmp / 'podium.db'}"
        service, _ = set_up(url, contest, tmp / "data", tuple(f"team{n:03d}" for n in range(100)), clock)
        fill(service.engine, options.submissions, clock())
        with writing(service.engine) as connection:
            accounts.add_user(connection, "olga", "olga-password-1", None, True, clock())
            api = accounts.new_token(connection, None, True, "bench", clock())
            session = accounts.new_token(connection, None, True, "bench", clock(), session=True)
        with LiveServer(service) as live:
            figures = lambda: _get(live.url + "/api/dashboard", {"Authorization": f"Bearer {api}"})
            page = lambda: _get(live.url + "/organizer", {"Cookie": f"{COOKIE}={session}"})
            answers: dict[str, object] = {}
            times: dict[tuple[str, str], Timed[bytes]] = {}
            for indexed in (True, False, True, False):  # interleaved: the load falls on both sides
                with service.engine.begin() as connection:
                    for name, column in INDEXES:
                        connection.execute(text(f"DROP INDEX IF EXISTS {name}"))
                        if indexed:
                            connection.execute(text(f"CREATE INDEX {name} ON submissions ({column})"))
                side = "with the indexes" if indexed else "without them"
                for what, call in (("figures", figures), ("page", page)):
                    run = best_of(options.repeats, call, what=f"{what} {side}", live=True)
                    kept = times.get((what, side))
                    times[what, side] = run if kept is None or run.wall < kept.wall else kept
                    if what == "figures":
                        answers.setdefault(side, json.loads(run.value))
        assert answers["with the indexes"] == answers["without them"], "both sides answer the same figures"
        print(f"{options.submissions:,} submissions, 100 teams ({'PostgreSQL' if options.database else 'SQLite'}):")
        for (what, side), run in times.items():  # the server runs in this process: its CPU time is counted
            print(f"  {what:8s} {side:18s} {run.wall * 1000:7.1f} ms wall, {run.cpu * 1000:6.1f} ms CPU")


if __name__ == "__main__":
    main()
