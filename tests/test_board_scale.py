"""The board at scale: each contest's board reads its own teams and submissions only, and its numbers are the reference's.

Two contests in one database share their track ids (``main``, ``night``) and
their team names; each has two phases with data of their own (a board per
phase). Random scores rounded to two decimals make ties; some submissions are
rescored (the newest round counts), some rejected, some teams banned or
waiting for approval. Every board is compared with a reference written here
from the rule's words (camera-traps ranks by ``score``, higher first, ties
sharing a rank; a team's shown submission is its best by public score, the
earliest of equals; after the reveal, that submission's private score).
"""

from __future__ import annotations

import random
import shutil
import subprocess
import sys
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from sqlalchemy import insert, select, update

from podium.challenges import get
from podium.contest import load
from podium.service.board_cache import BoardCache
from podium.service.database import connect, migrate, writing
from podium.service.leaderboard import standings
from podium.service.tables import contests, results, submissions, teams

ROOT = Path(__file__).resolve().parents[1]
START = datetime(2026, 1, 1, tzinfo=UTC)
BEFORE, AFTER = datetime(2026, 2, 1, tzinfo=UTC), datetime(2031, 1, 1, tzinfo=UTC)  # the last phase ends in 2030
CONTEST = """id = "{id}"
title = "Contest {id}"
timezone = "UTC"

[[phase]]
name = "development"
start = 2026-01-01T00:00:00Z
end = 2028-01-01T00:00:00Z
submissions = "files"
truth = "{development}"

[[phase]]
name = "final"
start = 2028-01-01T00:00:01Z
end = 2030-01-01T00:00:00Z
submissions = "files"
truth = "{final}"

[ranking]
final = "best"
{decimals}

[[track]]
id = "main"
title = "Main"
challenge = "camera-traps"

[[track]]
id = "night"
title = "Night"
challenge = "camera-traps"
"""


def _contests(folder: Path) -> list[Any]:
    truth = get("camera-traps").write_demo(folder / "demo").truth
    final = folder / "final-truth.tsv"
    shutil.copy(truth, final)  # another path: another board
    found = []
    for name in ("alpha", "beta"):
        path = folder / f"{name}.toml"
        decimals = "decimals = 1" if name == "beta" else ""  # beta ranks by scores rounded to 0.1: more ties
        path.write_text(CONTEST.format(id=name, development=truth, final=final, decimals=decimals))
        found.append(load(path))
    return found


def _fill(engine: Any, chance: random.Random) -> None:
    """Both contests' teams (the same names in each) and their submissions, scored, rescored or rejected."""
    with writing(engine) as connection:
        for contest in ("alpha", "beta"):
            connection.execute(
                insert(contests).values(id=contest, path=f"{contest}.toml", added=START, withdrawn=False)
            )
            for n in range(12):
                connection.execute(
                    insert(teams).values(
                        name=f"team{n}", created=START, contest=contest, banned=n == 10, approved=n != 11
                    )
                )
        team_ids = list(connection.execute(select(teams.c.id)).scalars())
        sent, scored = [], []
        for submission_id in range(1, 700):
            created = START + timedelta(minutes=chance.randrange(100_000))
            sent.append(
                {
                    "id": submission_id,
                    "team_id": chance.choice(team_ids[:-3]),  # the last teams of beta send nothing
                    "phase": chance.choice(("development", "final")),
                    "track": chance.choice(("main", "night")),
                    "kind": "files",
                    "filename": "s.tsv",
                    "size": 1,
                    "sha256": "0" * 64,
                    "target": "s.tsv",
                    "created": created,
                    "status": "scored",
                    "selected": False,
                }
            )
            for round_ in range(1, chance.choice((1, 1, 1, 2, 3)) + 1):
                scored.append(
                    {
                        "submission_id": submission_id,
                        "round": round_,
                        "status": "rejected" if chance.random() < 0.1 else "scored",
                        "public_scores": {"score": chance.choice((0.25, 0.5, 0.75, round(chance.random(), 2)))},
                        "private_scores": {"score": round(chance.random(), 2)},
                        "document": {},
                        "public_document": {},
                        "created": created,
                    }
                )
        connection.execute(insert(submissions), sent)
        connection.execute(insert(results), scored)


def _rounded(contest: Any, scores: dict[str, float]) -> float:
    decimals = contest.ranking.decimals
    return scores["score"] if decimals is None else round(scores["score"], decimals)


def _every_row(engine: Any) -> tuple[list[Any], ...]:
    with engine.connect() as connection:
        return tuple(connection.execute(select(table)).all() for table in (teams, submissions, results))


def _reference(rows: tuple[list[Any], ...], contest: Any, revealed: bool) -> dict[str, tuple[Any, ...]]:
    """Each team's (rank, status, score, entries) on the board of ``contest`` (a track and phase), from every row of the database."""
    all_teams, all_submissions, all_results = rows
    newest: dict[int, Any] = {}
    for result in sorted(all_results, key=lambda r: r.round):
        newest[result.submission_id] = result
    shown = {t.id: t.name for t in all_teams if t.contest == contest.id and not t.banned and t.approved}
    mine = [
        s for s in all_submissions if s.team_id in shown and s.track == contest.track_id and s.phase in contest.board
    ]
    found: dict[str, tuple[Any, ...]] = {}
    scores: dict[str, float] = {}
    for team_id, name in shown.items():
        sent = sorted((s for s in mine if s.team_id == team_id), key=lambda s: (s.created, s.id))
        scored = [newest[s.id] for s in sent if s.id in newest and newest[s.id].status == "scored"]
        if scored:
            best = max(scored, key=lambda r: _rounded(contest, r.public_scores))  # the first of equals: the earliest
            shown_scores = best.private_scores if revealed else best.public_scores
            scores[name] = _rounded(contest, shown_scores)  # what ranks; the board shows the score as it is
        status = "scored" if scored else ("no scored submission" if sent else "none")
        found[name] = (status, shown_scores["score"] if scored else None, len(scored))
    return {  # a team without a scored submission has no rank
        name: (1 + sum(v > scores[name] for v in scores.values()) if name in scores else None, *row)
        for name, row in found.items()
    }


def test_every_board_reads_its_contest_only_and_equals_the_reference(database_url: str, tmp_path: Path) -> None:
    engine = connect(database_url)
    migrate(engine)
    _fill(engine, random.Random(41))
    rows = _every_row(engine)
    boards = 0
    for contest in _contests(tmp_path):
        for track in ("main", "night"):
            for phase in ("development", "final"):
                on = contest.on(track, phase)
                for now, revealed in ((BEFORE, False), (AFTER, True)):
                    with engine.connect() as connection:
                        board, _shown = standings(connection, on, now)
                    assert board["revealed"] is revealed
                    got = {
                        t["team"]: (t["rank"], t["status"], t["scores"].get("score"), t["entries"])
                        for t in board["teams"]
                    }
                    assert got == _reference(rows, on, revealed), (contest.id, track, phase, revealed)
                    boards += 1
    assert boards == 16


def test_a_board_is_not_changed_by_another_contests_rows(database_url: str, tmp_path: Path) -> None:
    """A team of beta renamed, beta's submissions added: alpha's board is the same (only its stamp moved)."""
    engine = connect(database_url)
    migrate(engine)
    _fill(engine, random.Random(7))
    alpha = _contests(tmp_path)[0].on("main", "development")
    cache = BoardCache(engine)
    before = cache.current(alpha, BEFORE).json()
    with writing(engine) as connection:
        connection.execute(update(teams).where(teams.c.contest == "beta", teams.c.name == "team0").values(name="beta0"))
    assert cache.current(alpha, BEFORE).json() == before


def test_the_benchmark_runs_small(tmp_path: Path) -> None:
    """``benchmarks/board_scale.py --small`` builds its database and measures (a), (c) and (d), so the script cannot rot."""
    answer = subprocess.run(
        [
            sys.executable,
            "benchmarks/board_scale.py",
            "--small",
            "--no-serve",
            "--repeats",
            "1",
            "--data",
            str(tmp_path),
        ],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert answer.returncode == 0, answer.stderr[-3000:]
    assert "(a) the cold board" in answer.stdout and "(d) the peer" in answer.stdout, answer.stdout
    assert "(c) the memory of 8 boards" in answer.stdout, answer.stdout
