"""Migration 0009 (names unique whatever their case) on a database holding rows at 0008, on SQLite and PostgreSQL."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest
from click.testing import CliRunner
from sqlalchemy import insert, select, text
from sqlalchemy.exc import IntegrityError

from podium.cli import cli
from podium.service import accounts
from podium.service.database import DuplicateNames, connect, migrate, reading, schema_revision, writing
from podium.service.tables import teams, users

NOW = datetime(2026, 3, 10, 12, tzinfo=UTC)


def _rows(engine: object) -> list[tuple[str, str]]:
    with reading(engine) as connection:  # type: ignore[arg-type]
        named = [("user", r) for r in connection.execute(select(users.c.name).order_by(users.c.id)).scalars()]
        query = select(teams.c.contest, teams.c.name).order_by(teams.c.id)
        return named + [("team", f"{r.contest}/{r.name}") for r in connection.execute(query)]


def test_0009_stops_at_names_differing_in_case_names_them_and_runs_once_they_are_renamed(
    database_url: str, tmp_path: object
) -> None:
    engine = connect(database_url)
    migrate(engine, "0008")
    with engine.begin() as connection:  # rows as podium 0.10 let two requests at once write them
        for contest in ("c", "d"):
            connection.execute(
                text("INSERT INTO contests (id, path, added, withdrawn) VALUES (:c, 'x', :t, :f)"),
                {"c": contest, "t": NOW, "f": False},
            )
        for contest, name in (("c", "Alpha"), ("c", "alpha"), ("c", "beta"), ("d", "Beta")):
            connection.execute(
                text("INSERT INTO teams (name, created, contest, invitation) VALUES (:n, :t, :c, :i)"),
                {"n": name, "t": NOW, "c": contest, "i": f"code-{contest}-{name}" if name == "beta" else None},
            )
        for name in ("Alice", "alice", "bob"):
            connection.execute(
                text(
                    "INSERT INTO users (name, admin, password_hash, created, email_confirmed, mail_off) VALUES (:n, :f, 'x', :t, :f, '')"
                ),
                {"n": name, "t": NOW, "f": False},
            )
    before = _rows(engine)
    with pytest.raises(DuplicateNames) as refused:
        migrate(engine)
    message = str(refused.value)
    assert "2 names differ from another only in case" in message and "nothing was changed" in message
    assert "podium user rename 'alice' NEW" in message
    assert "podium team rename 'alpha' NEW --contest c" in message
    assert "Beta" not in message and "bob" not in message  # another contest's team, a distinct name: no pair
    assert schema_revision(engine) == "0008" and _rows(engine) == before

    database = ["--data", str(tmp_path), "--database", database_url]
    other = CliRunner().invoke(cli, ["team", "list", *database])
    assert other.exit_code == 2 and "podium user rename" in other.output  # every other command says why it stops
    assert "Traceback" not in other.output
    for command in (["user", "rename", "alice", "alice2"], ["team", "rename", "alpha", "alpha2", "--contest", "c"]):
        result = CliRunner().invoke(cli, [*command, *database])
        assert result.exit_code == 0, result.output
    upgraded = datetime.now(UTC)
    migrate(engine, "0009")  # this migration's own step: a later one may follow it
    assert schema_revision(engine) == "0009"
    with reading(engine) as connection:  # a code made before the upgrade works for 7 days from it
        ends = dict(
            connection.execute(select(teams.c.name, teams.c.invitation_expires).where(teams.c.contest == "c")).all()
        )
    assert ends["alpha2"] is None and ends["Alpha"] is None
    assert upgraded + timedelta(days=7) <= ends["beta"] <= datetime.now(UTC) + timedelta(days=7)
    assert ("user", "alice2") in _rows(engine) and ("team", "c/alpha2") in _rows(engine)

    with (
        pytest.raises(IntegrityError, match="lower"),
        engine.begin() as connection,
    ):  # the database refuses, whatever raced
        connection.execute(insert(users).values(name="ALICE", admin=False, password_hash="x", created=NOW))
    with pytest.raises(IntegrityError, match="lower"), engine.begin() as connection:
        connection.execute(insert(teams).values(name="BETA", created=NOW, contest="c"))
    with writing(engine) as connection:
        connection.execute(
            insert(teams).values(name="ALPHA", created=NOW, contest="d")
        )  # another contest: its own names
        with pytest.raises(accounts.NameTaken, match="taken"):
            accounts._naming(
                connection, insert(users).values(name="BOB", admin=False, password_hash="x", created=NOW), "BOB"
            )
    engine.dispose()
