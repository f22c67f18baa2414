"""Upgrading a served contest: a database podium 0.8.5 or 0.9.0 wrote, migrated to today's schema by ``podium serve``, served whole.

The rows are those a real podium 0.8.5 (or 0.9.0) server wrote (``tests/releases/``, made
by ``tools/release_rows.py``), put into a database at 0.8.5's schema
(revision 0001, or 0.9.0's 0005) on SQLite and PostgreSQL; ``podium serve`` of this podium then
migrates it to ``head``, whatever migrations exist, and the contest must show
every team, user, token, submission, result and round through the API and the pages.
"""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from click.testing import CliRunner
from sqlalchemy import DateTime, MetaData, insert, select, text

from podium._version import __version__
from podium.cli import cli
from podium.service.database import connect, migrate, reading, schema_revision, writing
from served import Serve, open_contest, podium
from service_helpers import write_contest

RELEASE = Path(__file__).parent / "releases" / "podium-0.8.5.json"
RELEASE_0_9_0 = Path(__file__).parent / "releases" / "podium-0.9.0.json"


def _value(column: Any, value: Any) -> Any:
    if isinstance(column.type, DateTime) and isinstance(value, str):
        parsed = datetime.fromisoformat(value)
        return parsed if parsed.tzinfo else parsed.replace(tzinfo=UTC)  # 0.8.5 stored UTC
    return value


def load_release(url: str, release: dict[str, Any]) -> None:
    """A database at the release's schema revision holding its rows, as that release's server left it."""
    engine = connect(url)
    migrate(engine, release["revision"])
    reflected = MetaData()
    reflected.reflect(engine)
    with writing(engine) as connection:
        for table in reflected.sorted_tables:
            found = release["tables"].get(table.name, [])
            if found:
                connection.execute(table.delete())  # a row the migrations made (board_version's) is the release's own
                connection.execute(
                    insert(table), [{key: _value(table.c[key], value) for key, value in row.items()} for row in found]
                )
            if (
                engine.dialect.name == "postgresql" and "id" in table.c and found
            ):  # as the release's own inserts left the sequences
                connection.execute(
                    text(
                        f"SELECT setval(pg_get_serial_sequence('{table.name}', 'id'), {max(row['id'] for row in found)})"
                    )
                )
    engine.dispose()


def test_a_contest_of_podium_0_8_5_is_served_whole_after_the_upgrade(tmp_path: Path, database_url: str) -> None:
    release = json.loads(RELEASE.read_text())
    assert release["revision"] == "0001"
    data = tmp_path / "data"
    sqlite = database_url.startswith("sqlite")
    url = f"sqlite:///{data / 'podium.sqlite3'}" if sqlite else database_url
    data.mkdir()
    load_release(url, release)
    contest = open_contest(write_contest(tmp_path / "contest"))
    tokens, passwords = release["secrets"]["tokens"], release["secrets"]["passwords"]
    rows = release["tables"]
    if sqlite:  # on PostgreSQL podium serve migrates
        database = ("--data", str(data))
        current = f"schema {_head()}: already this podium's ({__version__})\n"
        assert podium("migrate", *database).stdout == (current if _head() == "0001" else f"schema 0001 -> {_head()}\n")
        assert podium("migrate", *database).stdout == current
    with Serve(contest, data, None if sqlite else database_url, workers=0) as server:
        results = {(r["submission_id"], r["round"]): r for r in rows["results"]}
        for name, token in tokens.items():
            team = next(t["id"] for t in rows["teams"] if t["name"] == name)
            shown = server.call("GET", "/api/submissions", token).body
            written = [s for s in rows["submissions"] if s["team_id"] == team]
            assert sorted((s["id"], s["status"], s["filename"], s["sha256"]) for s in shown) == sorted(
                (s["id"], s["status"], s["filename"], s["sha256"]) for s in written
            )
            for item in shown:
                newest = max(
                    (r for r in rows["results"] if r["submission_id"] == item["id"]),
                    key=lambda r: r["round"],
                    default=None,
                )
                assert item["round"] == (newest and newest["round"])
                assert item["result"] == (newest and results[(item["id"], newest["round"])]["public_document"])
        assert {
            s["round"] for s in server.call("GET", "/api/submissions", tokens["beta"]).body if s["status"] == "scored"
        } == {2}
        assert [s["status"] for s in server.call("GET", "/api/submissions", tokens["alpha"]).body] == [
            "queued",
            "scored",
        ]
        for user, password in passwords.items():
            assert server.call("POST", "/api/tokens", json_body={"user": user, "password": password}).status == 201
        organizer = server.call("POST", "/api/tokens", json_body={"user": "olga", "password": passwords["olga"]}).body[
            "token"
        ]
        assert {s["id"] for s in server.call("GET", "/api/submissions", organizer).body} == {
            s["id"] for s in rows["submissions"]
        }
        board = server.call("GET", "/api/leaderboard").body
        assert {(row["team"], row["status"]) for row in board["teams"]} == {("alpha", "scored"), ("beta", "scored")}, (
            board
        )
        alpha = next(row for row in board["teams"] if row["team"] == "alpha")
        assert alpha["scores"] == next(
            r["public_scores"] for r in rows["results"] if r["submission_id"] == 1 and r["round"] == 2
        )
        page = server.call("GET", "/leaderboard")
        assert f"podium {__version__}" in str(page.body)
    engine = connect(url)
    assert schema_revision(engine) == _head()
    _assert_one_contest(engine, rows, next(s["value"] for s in rows["settings"] if s["key"] == "contest_id"))
    engine.dispose()


def test_a_contest_of_podium_0_9_0_becomes_the_first_of_many_with_every_row(tmp_path: Path, database_url: str) -> None:
    """0.9.0's one contest (revision 0005: sessions, the reveal, the mailer's outbox and announcements, a reset link)
    becomes the first contest of the new schema: every row kept, logged-in users keep their team, the reveal stays."""
    release = json.loads(RELEASE_0_9_0.read_text())
    assert release["revision"] == "0005"
    data = tmp_path / "data"
    data.mkdir()
    url = f"sqlite:///{data / 'podium.sqlite3'}" if database_url.startswith("sqlite") else database_url
    load_release(url, release)
    contest = open_contest(write_contest(tmp_path / "contest"))
    tokens, passwords, rows = release["secrets"]["tokens"], release["secrets"]["passwords"], release["tables"]
    with Serve(contest, data, None if url.startswith("sqlite") else database_url, workers=0) as server:
        for name, token in tokens.items():
            team = next(t["id"] for t in rows["teams"] if t["name"] == name)
            shown = server.call("GET", "/api/submissions", token).body
            assert sorted((s["id"], s["status"]) for s in shown) == sorted(
                (s["id"], s["status"]) for s in rows["submissions"] if s["team_id"] == team
            )
        for user, team in (("ann", "alpha"), ("bea", "beta")):  # a member's log-in is their team's, as before
            login = server.call("POST", "/api/tokens", json_body={"user": user, "password": passwords[user]})
            assert login.status == 201, login.body
            assert {s["id"] for s in server.call("GET", "/api/submissions", login.body["token"]).body} == {
                s["id"]
                for s in rows["submissions"]
                if s["team_id"] == next(t["id"] for t in rows["teams"] if t["name"] == team)
            }
        olga = server.call("POST", "/api/tokens", json_body={"user": "olga", "password": passwords["olga"]}).body[
            "token"
        ]
        assert {s["id"] for s in server.call("GET", "/api/submissions", olga).body} == {
            s["id"] for s in rows["submissions"]
        }
        board = server.call("GET", "/api/leaderboard").body
        assert board["revealed"] and board["split"] == "private"  # podium reveal, kept
    engine = connect(url)
    assert schema_revision(engine) == _head()
    _assert_one_contest(engine, rows, next(s["value"] for s in rows["settings"] if s["key"] == "contest_id"))
    with reading(engine) as connection:
        for table in ("submissions", "jobs", "results", "outbox", "resets"):
            assert connection.execute(text(f"SELECT id FROM {table} ORDER BY id")).scalars().all() == [
                r["id"] for r in rows[table]
            ], table
        sessions = text("SELECT id FROM tokens WHERE session AND user_id IS NOT NULL")
        assert connection.execute(sessions).scalars().all() == [t["id"] for t in rows["tokens"] if t["session"]]
    engine.dispose()


def _assert_one_contest(engine: Any, rows: dict[str, Any], contest: str) -> None:
    """The release's one contest is the first of the new schema: its teams, members, organizers, settings and tokens keyed by it."""
    from podium.service.tables import contests, memberships, organizers, settings, teams, tokens

    with reading(engine) as connection:
        assert [(r.id, r.withdrawn) for r in connection.execute(select(contests))] == [(contest, False)]
        assert {(r.id, r.name, r.contest) for r in connection.execute(select(teams))} == {
            (t["id"], t["name"], contest) for t in rows["teams"]
        }
        assert {(r.user_id, r.team_id, r.contest) for r in connection.execute(select(memberships))} == {
            (u["id"], u["team_id"], contest) for u in rows["users"] if u["team_id"] is not None
        }
        assert {(r.user_id, r.contest) for r in connection.execute(select(organizers))} == {
            (u["id"], contest) for u in rows["users"] if u["organizer"]
        }
        assert {(r.contest, r.key, r.value) for r in connection.execute(select(settings))} >= {
            (
                contest if s["key"] in ("round", "revealed") or s["key"].startswith("mailed:") else "",
                s["key"],
                s["value"],
            )
            for s in rows["settings"]
            if not s["key"].startswith("contest_")  # now the contests table's
        }
        kept = select(tokens).where(tokens.c.id.in_([t["id"] for t in rows["tokens"]]))  # the test's log-ins made more
        assert {(r.id, r.team_id, r.contest) for r in connection.execute(kept)} == {
            (t["id"], t["team_id"], contest) for t in rows["tokens"]
        }


def _head() -> str:
    from importlib import resources

    from alembic.config import Config
    from alembic.script import ScriptDirectory

    config = Config()
    config.set_main_option("script_location", str(resources.files("podium.service") / "migrations"))
    head = ScriptDirectory.from_config(config).get_current_head()
    assert head is not None
    return head


def test_podium_names_its_version() -> None:
    shown = CliRunner().invoke(cli, ["--version"])
    assert shown.exit_code == 0 and shown.stdout.strip() == f"podium, version {__version__}"
