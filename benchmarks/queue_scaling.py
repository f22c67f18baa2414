"""The service's cost against the number of teams: 10, 100 and 1,000 submissions queued at once.

For each N, a new database (SQLite by default, or ``--database`` a PostgreSQL
URL whose database is emptied first) with N teams, each of which sends the
camera-traps demo submission (two small tables, scored in milliseconds, so the
queue and the database are what is measured). Measured:

- intake: seconds per submission (checks, files, rows) and SQL statements per
  submission, counted in this process;
- draining: two ``podium worker`` processes started once all N are queued,
  timed until every job is done; per worker its peak resident memory (VmHWM)
  and CPU seconds; SQL statements per job counted on 10 more jobs scored in
  this process;
- the leaderboard: milliseconds to compute ``GET /api/leaderboard``'s answer (best of 5), which
  the service does on every request;
- storage: database bytes (SQLite file, or ``pg_database_size``) and the
  submissions folder's bytes, per submission.

    .venv/bin/python benchmarks/queue_scaling.py [--counts 10,100,1000] [--database postgresql+psycopg://...]
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import tempfile
import time
from datetime import UTC, datetime
from pathlib import Path

import psutil
from dask_scaling import peak_mb
from sqlalchemy import Engine, event, func, select, text
from timing import machine_header

from podium.challenges import get
from podium.contest import load
from podium.service import accounts
from podium.service.accounts import Caller
from podium.service.client import packed
from podium.service.database import connect, migrate, reading, writing
from podium.service.intake import Upload, take
from podium.service.leaderboard import leaderboard
from podium.service.server import register_contest
from podium.service.statuses import JOB_DONE
from podium.service.tables import jobs, metadata
from podium.service.worker import Worker

CONTEST = """id = "queue-bench"
title = "queue bench"
challenge = "camera-traps"
truth = "{truth}"
[split]
public = 0.5
seed = 1
[[phase]]
name = "open"
start = 2020-01-01T00:00:00Z
end = 2040-01-01T00:00:00Z
submissions = "files"
[quota]
per_day = 5
"""


class Statements:
    """Counts the SQL statements an engine sends."""

    def __init__(self, engine: Engine) -> None:
        self.count = 0
        event.listen(engine, "before_cursor_execute", self._seen)

    def _seen(self, *_: object) -> None:
        self.count += 1


def folder_bytes(folder: Path) -> int:
    return sum(p.stat().st_size for p in folder.rglob("*") if p.is_file())


def database_bytes(engine: Engine, url: str) -> int:
    if url.startswith("sqlite"):
        path = Path(url.split("///", 1)[1])
        return sum(p.stat().st_size for p in path.parent.glob(path.name + "*"))
    with reading(engine) as connection:
        return int(connection.execute(text("select pg_database_size(current_database())")).scalar_one())


def run(count: int, root: Path, url: str | None) -> None:
    folder = root / f"n{count}"
    demo = get("camera-traps").write_demo(folder / "demo")
    contest_path = folder / "contest.toml"
    contest_path.write_text(CONTEST.format(truth=demo.truth))
    contest = load(contest_path)
    url = url or f"sqlite:///{folder / 'podium.sqlite3'}"
    engine = connect(url)
    if not url.startswith("sqlite"):
        metadata.drop_all(engine)
        with writing(engine) as connection:
            connection.execute(text("drop table if exists alembic_version"))
    migrate(engine)
    register_contest(engine, contest)
    data = folder / "data"
    archive = packed(demo.submission, folder)
    now = datetime.now(UTC)
    with writing(engine) as connection:
        team_ids = [accounts.add_team(connection, f"team{k:04d}", now) for k in range(count + 10)]
    statements = Statements(engine)
    start = time.perf_counter()
    for team_id in team_ids:
        upload = Upload(archive, "submission.tar.gz", archive.stat().st_size, "0" * 64, None)
        assert (
            take(engine, contest, data, Caller(team_id, f"t{team_id}", False), upload, now, False)["status"] == "queued"
        )
    intake_s = (time.perf_counter() - start) / len(team_ids)
    intake_statements = statements.count / len(team_ids)

    statements.count = 0
    worker = Worker(engine, data.resolve())
    for _ in range(10):  # 10 jobs in this process, to count a job's statements
        assert worker.work_once()
    job_statements = statements.count / 10

    command = [
        sys.executable,
        "-m",
        "podium",
        "worker",
        "--database",
        url,
        "--data",
        str(data.resolve()),
        "--sandbox",
        "none",
    ]
    done = select(func.count()).select_from(jobs).where(jobs.c.state == JOB_DONE)
    start = time.perf_counter()
    workers = [subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE) for _ in range(2)]
    try:
        deadline = time.monotonic() + 600
        while time.monotonic() < deadline:
            with reading(engine) as connection:
                if connection.execute(done).scalar_one() == len(team_ids):
                    break
            time.sleep(0.05)
        drain_s = time.perf_counter() - start
        peaks = [peak_mb(w.pid) for w in workers]
        cpu = [sum(psutil.Process(w.pid).cpu_times()[:2]) for w in workers]
    finally:
        for w in workers:
            w.terminate()
            w.wait(timeout=30)
    board_ms = float("inf")
    for _ in range(5):
        start = time.perf_counter()
        with reading(engine) as connection:
            assert len(leaderboard(connection, contest, now)["teams"]) == len(team_ids)
        board_ms = min(board_ms, 1000 * (time.perf_counter() - start))
    total_db = database_bytes(engine, url)
    stored = folder_bytes(data)
    print(
        f"{count:>6,}{1000 * intake_s:>11.1f}{intake_statements:>9.1f}{drain_s:>9.2f}{1000 * drain_s / count:>10.1f}{job_statements:>9.1f}"
        f"{'  ' + ' '.join(f'{p:.0f}' for p in peaks):>14}{'  ' + ' '.join(f'{c:.1f}' for c in cpu):>13}"
        f"{board_ms:>10.1f}{total_db / len(team_ids) / 1024:>11.1f}{stored / len(team_ids) / 1024:>11.1f}"
    )
    engine.dispose()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--counts", default="10,100,1000")
    parser.add_argument(
        "--database", default=None, help="a PostgreSQL URL (its podium tables are dropped first) [default: SQLite]"
    )
    args = parser.parse_args()
    machine_header(1)
    print("PostgreSQL" if args.database else "SQLite")
    print(
        "10 more jobs than N are queued; 10 are scored in this process to count statements, the 2 workers drain the N others"
    )
    print(
        f"{'N':>6}{'intake ms':>11}{'SQL/sub':>9}{'drain s':>9}{'ms/job':>10}{'SQL/job':>9}{'peak MB':>14}{'CPU s':>13}{'board ms':>10}{'DB KB/sub':>11}{'files KB':>11}"
    )
    with tempfile.TemporaryDirectory(prefix="podium-queue-") as root:
        for count in (int(c) for c in args.counts.split(",")):
            run(count, Path(root), args.database)


if __name__ == "__main__":
    main()
