"""The board at scale (issue 41 item 7): 100 contests, 10,000 teams, 1,000,000 scored submissions in one database.

The database is built once and kept (``benchmarks/data/board-scale/``; a
PostgreSQL database given by ``--database URL`` is filled once and found again by
its rows): the real schema (``alembic upgrade head``), then bulk inserts through
SQLAlchemy Core, not the API. 100 contest files made from the camera-traps demo
(a real challenge's ranking rule), each with a track ``main`` (so track ids
repeat across contests: every board must filter by its contest) and every third
a second track ``night``; teams spread unevenly (3 contests of 2,000 teams, 97
of 10 to 70); each team's count of submissions drawn from a heavy tail (most a
handful, a few hundreds), scaled to 1,000,000 in all; every submission scored in
round 1 (scores rounded to 2 decimals: ties), a few rescored in round 2.

It measures, side by side in one run:

a. the cold board (what the first request after a change computes:
   ``BoardCache.current`` and its JSON) of the largest contest and of a small
   one, CPU and wall seconds, in a new process; with ``--podium-src DIR`` the
   same with another checkout's ``src`` (e.g. main's), interleaved;
b. ``GET`` of the board's API and HTML page: median and 99th percentile under 50
   keep-alive readers, then the same while a writer adds a scored submission
   every second (``--url-template``/``--page-template``: until ``podium serve
   --contests DIR`` lands, one contest at a time is served from the
   100-contest database (the others withdrawn meanwhile), the largest, through
   the single-contest URLs);
c. the memory the boards of all 100 contests hold (tracemalloc: the boards and
   their JSON, as a web process keeps them);
d. the peer: what a Codabench-like server does per request, one SQL statement
   ordering each team's best result by the first ranking score, no cache, on the
   same database; its best scores are checked equal to podium's board.

    .venv/bin/python benchmarks/board_scale.py [--small] [--database postgresql://...] [--podium-src /work/main/src]
"""

from __future__ import annotations

import argparse
import http.client
import json
import os
import random
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import tracemalloc
from datetime import UTC, datetime, timedelta
from pathlib import Path
from types import SimpleNamespace
from typing import Any

from board_speed import READERS, readers  # the same 50 keep-alive readers
from sqlalchemy import Engine, delete, func, insert, select, text, update
from timing import machine_header

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))

HERE = Path(__file__).resolve().parent
PODIUM = (sys.executable, "-m", "podium")
READS = 20  # GETs of the board by each reader (board_speed.py's default)
START = datetime(2026, 1, 1, tzinfo=UTC)
NOW = datetime(2026, 6, 1, tzinfo=UTC)  # the phase is open until 2040: nothing revealed
SCORES = ("score", "points", "precision", "recall", "f1", "class_accuracy")
CONTEST = """id = "{id}"
title = "Board scale {id}"
timezone = "UTC"

[[phase]]
name = "first"
start = 2026-01-01T00:00:00Z
end = 2040-01-01T00:00:00Z
submissions = "files"

[ranking]
final = "best"

[[track]]
id = "main"
title = "Main"
challenge = "camera-traps"
truth = "{truth}"
[track.split]
public = 0.5
seed = 7
{night}"""
NIGHT = """
[[track]]
id = "night"
title = "Night photos"
challenge = "camera-traps"
truth = "{truth}"
"""


class Scale:
    """How large a database to build: ``contests``, ``teams`` (``large`` contests of ``large_teams`` each), ``submissions``."""

    def __init__(self, small: bool) -> None:
        self.name = "small" if small else "full"
        self.contests, self.large, self.large_teams = (6, 1, 100) if small else (100, 3, 2_000)
        self.teams, self.submissions = (300, 6_000) if small else (10_000, 1_000_000)


def contest_files(folder: Path, scale: Scale) -> list[Path]:
    """The contest files, ``folder/cNNN.toml``, on the camera-traps demo written once in ``folder/demo``."""
    from podium.challenges import get

    truth = folder / "demo" / "truth.tsv"
    if not truth.exists():
        truth = get("camera-traps").write_demo(folder / "demo").truth
    paths = []
    for n in range(scale.contests):
        path = folder / f"c{n:03d}.toml"
        night = NIGHT.format(truth=truth) if n % 3 == 0 else ""
        path.write_text(CONTEST.format(id=f"c{n:03d}", truth=truth, night=night))
        paths.append(path)
    return paths


def team_counts(scale: Scale, chance: random.Random) -> list[int]:
    """Teams per contest: ``large`` contests of ``large_teams``, the rest uneven (a random share each)."""
    rest = scale.teams - scale.large * scale.large_teams
    small = scale.contests - scale.large
    weights = [chance.uniform(1, 7) for _ in range(small)]
    counts = [max(1, int(rest * w / sum(weights))) for w in weights]
    counts[-1] += rest - sum(counts)
    return [scale.large_teams] * scale.large + counts


def submission_counts(teams: int, total: int, chance: random.Random) -> list[int]:
    """Each team's submissions: a heavy tail (Pareto, most a handful, a few hundreds), scaled to ``total`` in all."""
    drawn = [min(60.0, chance.paretovariate(1.2)) for _ in range(teams)]
    counts = [max(1, round(total * d / sum(drawn))) for d in drawn]
    counts[counts.index(max(counts))] += total - sum(counts)
    return counts


def _scores(chance: random.Random) -> dict[str, float]:
    return {name: round(chance.random(), 2) for name in SCORES}


def build(url: str, folder: Path, scale: Scale) -> list[Path]:
    """The database at ``url`` filled for ``scale`` (unless it already is) and the contest files; their paths."""
    from podium.service.database import connect, migrate, writing
    from podium.service.tables import contests, results, submissions, teams

    paths = contest_files(folder, scale)
    engine = connect(url)
    migrate(engine)
    with engine.connect() as connection:
        if connection.execute(select(func.count()).select_from(submissions)).scalar() == scale.submissions:
            engine.dispose()
            return paths
    chance = random.Random(41)
    started = time.perf_counter()
    with writing(engine) as connection:
        if connection.dialect.name == "postgresql":  # the board's deferred triggers, once per row, are not wanted here
            connection.execute(text("SET session_replication_role = replica"))
        for table in (results, submissions, teams, contests):
            connection.execute(table.delete())
        connection.execute(
            insert(contests),
            [{"id": p.stem, "path": str(p), "added": START, "withdrawn": False} for p in paths],
        )
        rows, owners = [], []
        for path, count in zip(paths, team_counts(scale, chance)):
            for n in range(count):
                rows.append({"name": f"team{n:05d}", "created": START, "contest": path.stem})
                owners.append(path.stem)
        connection.execute(insert(teams), rows)
        ids = {(r.contest, r.name): r.id for r in connection.execute(select(teams.c.id, teams.c.contest, teams.c.name))}
        team_ids = [ids[row["contest"], row["name"]] for row in rows]
        counts = submission_counts(len(team_ids), scale.submissions, chance)
        night = {p.stem for n, p in enumerate(paths) if n % 3 == 0}
        batch: list[dict[str, Any]] = []
        submission_id = 0
        for team, contest, count in zip(team_ids, owners, counts):
            for _ in range(count):
                submission_id += 1
                created = START + timedelta(seconds=chance.uniform(0, 120 * 86_400))
                batch.append(
                    {
                        "id": submission_id,
                        "team_id": team,
                        "phase": "first",
                        "track": "night" if contest in night and chance.random() < 0.3 else "main",
                        "kind": "files",
                        "filename": "submission.zip",
                        "size": 4096,
                        "sha256": "0" * 64,
                        "target": "files",
                        "created": created,
                        "status": "scored",
                        "started": created,
                        "finished": created + timedelta(seconds=2),
                        "selected": False,
                    }
                )
                if len(batch) == 50_000:
                    _insert_scored(connection, batch, chance)
                    batch = []
        _insert_scored(connection, batch, chance)
        if connection.dialect.name == "postgresql":
            connection.execute(text("SET session_replication_role = DEFAULT"))
            connection.execute(text("SELECT setval('submissions_id_seq', (SELECT max(id) FROM submissions))"))
    with engine.connect() as connection:
        if connection.dialect.name == "postgresql":
            connection.execute(text("ANALYZE"))
        else:
            connection.exec_driver_sql("ANALYZE")
        connection.commit()
    engine.dispose()
    print(f"built in {time.perf_counter() - started:.0f} s", flush=True)
    return paths


def _insert_scored(connection: Any, batch: list[dict[str, Any]], chance: random.Random) -> None:
    """``batch``'s submissions, each with its result of round 1 (and one in fifty rescored: round 2)."""
    from podium.service.tables import results, submissions

    if not batch:
        return
    connection.execute(insert(submissions), batch)
    rows = []
    for row in batch:
        for round_ in (1, 2) if chance.random() < 0.02 else (1,):
            public, private = _scores(chance), _scores(chance)
            rows.append(
                {
                    "submission_id": row["id"],
                    "round": round_,
                    "status": "scored",
                    "public_scores": public,
                    "private_scores": private,
                    "document": {"scores": private, "public_scores": public},
                    "public_document": {"scores": public},
                    "created": row["finished"],
                }
            )
    connection.execute(insert(results), rows)


def cold(url: str, paths: list[Path], names: list[str], repeats: int) -> dict[str, Any]:
    """In this process: the cold board of each contest of ``names`` (track ``main``), CPU and wall seconds (best of ``repeats``), and its teams."""
    from podium.contest import load
    from podium.service.board_cache import BoardCache
    from podium.service.database import connect

    engine = connect(url)
    found: dict[str, Any] = {}
    for name in names:
        contest = load(next(p for p in paths if p.stem == name)).on("main")
        best = (float("inf"), float("inf"))
        for _ in range(repeats):
            boards = BoardCache(engine)  # empty: the first request after a change
            cpu, wall = time.process_time(), time.perf_counter()
            board = boards.current(contest, NOW)
            board.json()
            best = min(best, (time.perf_counter() - wall, time.process_time() - cpu))
        found[name] = {
            "wall": best[0],
            "cpu": best[1],
            "teams": len(board.board["teams"]),
            "best": {t["team"]: t["scores"].get("score") for t in board.board["teams"]},
        }
    engine.dispose()
    return found


def cold_in_process(url: str, folder: Path, names: list[str], repeats: int, source: str | None) -> dict[str, Any]:
    """:func:`cold` in a new process, from this checkout or from ``source`` (a ``src`` folder)."""
    environment = {**os.environ, **({"PYTHONPATH": source} if source else {})}
    command = [sys.executable, __file__, "--cold", ",".join(names), "--folder", str(folder), "--database", url]
    answer = subprocess.run(
        [*command, "--repeats", str(repeats)], capture_output=True, text=True, env=environment, check=False
    )
    if answer.returncode != 0:
        raise SystemExit(f"the cold board failed:\n{answer.stderr[-3000:]}")
    return dict(json.loads(answer.stdout.splitlines()[-1]))


def memory(url: str, paths: list[Path]) -> tuple[float, int]:
    """MB that the boards of every contest's every track hold (their JSON included), as one process keeps them; the count."""
    from podium.contest import load
    from podium.service.board_cache import BoardCache
    from podium.service.database import connect

    engine = connect(url)
    contests = [load(p) for p in paths]
    boards = [BoardCache(engine) for _ in contests]
    tracemalloc.start()
    before = tracemalloc.take_snapshot()
    kept = 0
    for contest, cache in zip(contests, boards):
        for track in contest.track_ids():
            cache.current(contest.on(track), NOW).json()
            kept += 1
    after = tracemalloc.take_snapshot()
    tracemalloc.stop()
    grown = sum(stat.size_diff for stat in after.compare_to(before, "filename"))
    engine.dispose()
    return grown / 1e6, kept


def peer(url: str, contest: str) -> tuple[float, float, dict[str, float]]:
    """A Codabench-like board: one SQL statement, each team's best public ``score`` on track ``main``, ordered; CPU s, wall s, the scores."""
    from podium.service.database import connect

    engine = connect(url)
    postgresql = engine.dialect.name == "postgresql"
    score = (
        "CAST(r.public_scores ->> 'score' AS DOUBLE PRECISION)"
        if postgresql
        else "json_extract(r.public_scores, '$.score')"
    )
    statement = text(
        f"SELECT t.name, MAX({score}) AS best FROM results r JOIN submissions s ON s.id = r.submission_id "
        "JOIN teams t ON t.id = s.team_id WHERE t.contest = :contest AND s.track = 'main' AND r.status = 'scored' "
        "AND r.round = (SELECT MAX(round) FROM results WHERE submission_id = r.submission_id) "
        "GROUP BY t.id, t.name ORDER BY best DESC"
    )
    best = (float("inf"), float("inf"))
    for _ in range(3):
        with engine.connect() as connection:
            cpu, wall = time.process_time(), time.perf_counter()
            rows = connection.execute(statement, {"contest": contest}).all()
            best = min(best, (time.perf_counter() - wall, time.process_time() - cpu))
    engine.dispose()
    return best[1], best[0], dict(rows)  # type: ignore[arg-type]


def served(url: str, folder: Path, paths: list[Path], contest: str, templates: tuple[str, str]) -> list[str]:
    """``podium serve`` of ``contest`` alone (the others withdrawn meanwhile): readers, then readers with a writer; the lines."""
    from service_throughput import free_port

    from podium.service.database import connect
    from podium.service.tables import contests, results, submissions

    engine = connect(url)
    with engine.begin() as connection:
        connection.execute(update(contests).values(withdrawn=contests.c.id != contest))
        last = connection.execute(select(func.max(submissions.c.id))).scalar()
    port = free_port()
    path = next(p for p in paths if p.stem == contest)
    with tempfile.TemporaryDirectory(prefix="podium-board-scale-") as data:
        where = ["--contest", str(path), "--database", url, "--data", data, "--port", str(port)]
        process = subprocess.Popen(
            [*PODIUM, "serve", *where, "--workers", "0"],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
            text=True,
        )
        lines = []
        try:
            _wait(port, process)
            for writing in (False, True):
                stop = threading.Event()
                writer = threading.Thread(target=_writer, args=(engine, contest, stop), daemon=True)
                if writing:
                    writer.start()
                for kind, template in zip(("API", "HTML"), templates):
                    times, closed = readers(SimpleNamespace(port=port), template.format(id=contest), READS)  # type: ignore[arg-type]
                    median, p99 = statistics.median(times), times[int(0.99 * (len(times) - 1))]
                    lines.append(
                        f"  {kind:4} {'with a writer' if writing else 'readers only':14} "
                        f"p50 {1000 * median:7.1f} ms  p99 {1000 * p99:7.1f} ms  closed {closed}"
                    )
                    print(lines[-1], flush=True)
                stop.set()
                if writing:
                    writer.join()
        finally:
            process.kill()  # at once: a graceful stop waits for the keep-alive readers' connections
            process.wait(timeout=60)
            with engine.begin() as connection:  # the database as built: the writer's submissions removed
                connection.execute(update(contests).values(withdrawn=False))
                connection.execute(delete(results).where(results.c.submission_id > last))
                connection.execute(delete(submissions).where(submissions.c.id > last))
            engine.dispose()
    return lines


def _wait(port: int, process: subprocess.Popen[str]) -> None:
    for _ in range(1200):  # bounded: 120 s
        if process.poll() is not None:
            raise SystemExit(f"podium serve ended: {process.stderr.read() if process.stderr else ''}")
        try:
            connection = http.client.HTTPConnection("127.0.0.1", port, timeout=5)
            connection.request("GET", "/healthz")
            if connection.getresponse().status == 200:
                return
        except OSError:
            time.sleep(0.1)
    raise SystemExit("podium serve did not answer within 120 s")


def _writer(engine: Engine, contest: str, stop: threading.Event) -> None:
    """A scored submission every second, to a random team of ``contest``, until ``stop``."""
    from podium.service.tables import teams

    chance = random.Random(7)
    with engine.connect() as connection:
        team_ids = list(connection.execute(select(teams.c.id).where(teams.c.contest == contest)).scalars())
    while not stop.wait(1.0):
        with engine.begin() as connection:
            next_id = connection.execute(text("SELECT MAX(id) FROM submissions")).scalar() + 1
            at = NOW - timedelta(seconds=1)
            row = {
                "id": next_id,
                "team_id": chance.choice(team_ids),
                "phase": "first",
                "track": "main",
                "kind": "files",
                "filename": "submission.zip",
                "size": 4096,
                "sha256": "0" * 64,
                "target": "files",
                "created": at,
                "status": "scored",
                "started": at,
                "finished": at,
                "selected": False,
            }
            _insert_scored(connection, [row], chance)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--small", action="store_true", help="6 contests, 300 teams, 6,000 submissions: a quick check")
    parser.add_argument("--database", help="a PostgreSQL URL (filled once) [default: SQLite under benchmarks/data]")
    parser.add_argument("--podium-src", help="also measure the cold board with this source folder (PYTHONPATH)")
    parser.add_argument(
        "--url-template", default="/api/leaderboard?track=main", help="the board API's path; {id}: the contest"
    )
    parser.add_argument(
        "--page-template", default="/leaderboard?track=main", help="the board page's path; {id}: the contest"
    )
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--no-serve", action="store_true", help="leave out (b), the served readers")
    parser.add_argument("--data", type=Path, default=HERE / "data", help="where the built database is kept")
    parser.add_argument("--folder", help=argparse.SUPPRESS)
    parser.add_argument("--cold", help=argparse.SUPPRESS)  # the cold board in this process (cold_in_process)
    options = parser.parse_args()
    if options.cold:
        paths = sorted(Path(options.folder).glob("c*.toml"))
        print(json.dumps(cold(options.database, paths, options.cold.split(","), options.repeats)))
        return
    machine_header(options.repeats)
    scale = Scale(options.small)
    folder = options.data / f"board-scale-{scale.name}"
    folder.mkdir(parents=True, exist_ok=True)
    url = options.database or f"sqlite:///{folder / 'podium.sqlite3'}"
    from podium.service.database import database_url

    url = database_url(url, folder)
    paths = build(url, folder, scale)
    largest, small = paths[0].stem, paths[-1].stem
    database = "PostgreSQL" if url.startswith("postgresql") else "SQLite"
    print(f"{database}: {scale.contests} contests, {scale.teams:,} teams, {scale.submissions:,} scored submissions")
    print(f"(a) the cold board (BoardCache.current + JSON, a new cache), best of {options.repeats}:")
    sides = [("this checkout", None), *([("--podium-src", options.podium_src)] if options.podium_src else [])]
    boards: dict[str, Any] = {}
    for label, source in sides * (2 if options.podium_src else 1):  # interleaved
        found = cold_in_process(url, folder, [largest, small], options.repeats, source)
        for name, figures in found.items():
            print(
                f"  {label:14} {name} ({figures['teams']:5,} teams on its board): "
                f"CPU {figures['cpu']:7.3f} s  wall {figures['wall']:7.3f} s",
                flush=True,
            )
        boards.setdefault(label, found)
    mine = boards["this checkout"]
    cpu, wall, best = peer(url, largest)
    assert best == {team: value for team, value in mine[largest]["best"].items() if value is not None}, (
        "the peer's best scores are podium's"
    )
    print(f"(d) the peer, one SQL statement per request, {largest}: CPU {cpu:7.3f} s  wall {wall:7.3f} s")
    grown, kept = memory(url, paths)
    print(f"(c) the memory of {kept} boards (every track of {len(paths)} contests, with their JSON): {grown:.1f} MB")
    if not options.no_serve:
        print(f"(b) {READERS} keep-alive readers x {READS} GETs, podium serve of {largest} alone:")
        served(url, folder, paths, largest, (options.url_template, options.page_template))


if __name__ == "__main__":
    main()
