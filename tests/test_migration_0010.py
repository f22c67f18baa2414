"""Migration 0010 (the board's version stamp per contest) on a database holding rows at 0009, on SQLite and PostgreSQL.

Every change a board shows bumps its contest's stamp, and only its contest's: the test makes each kind the
triggers watch in contest ``c`` and checks ``d``'s stamp never moves (before 0010 one stamp moved for both).
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, datetime
from importlib import resources

from alembic import command
from alembic.config import Config
from sqlalchemy import Connection, delete, insert, select, text, update

from podium.service.board_cache import board_stamp
from podium.service.database import connect, migrate, reading, schema_revision, writing
from podium.service.tables import board_versions, results, settings, submissions, teams

NOW = datetime(2026, 3, 10, 12, tzinfo=UTC)


def _submission(connection: Connection, team: int) -> int:
    return int(
        connection.execute(
            insert(submissions)
            .values(
                team_id=team,
                phase="first",
                track="",
                kind="files",
                filename="s.zip",
                size=3,
                sha256="0" * 64,
                target="files",
                created=NOW,
                status="scored",
                selected=False,
            )
            .returning(submissions.c.id)
        ).scalar_one()
    )


def _result(connection: Connection, submission: int, round_: int = 1) -> None:
    connection.execute(
        insert(results).values(
            submission_id=submission,
            round=round_,
            status="scored",
            public_scores={"f1": 0.5},
            private_scores={"f1": 0.4},
            document={},
            public_document={},
            created=NOW,
        )
    )


def test_0010_keeps_the_rows_and_bumps_only_the_changed_contest(database_url: str) -> None:
    engine = connect(database_url)
    migrate(engine, "0009")
    with engine.begin() as connection:  # rows as podium 0.11 wrote them: two contests, a team each, a scored submission
        for contest in ("c", "d"):
            connection.execute(
                text("INSERT INTO contests (id, path, added, withdrawn) VALUES (:c, 'x', :t, :f)"),
                {"c": contest, "t": NOW, "f": False},
            )
            connection.execute(
                text("INSERT INTO teams (name, created, contest) VALUES (:n, :t, :c)"),
                {"n": f"team-{contest}", "t": NOW, "c": contest},
            )
        connection.execute(text("INSERT INTO teams (name, created, contest) VALUES ('early', :t, '')"), {"t": NOW})
        ids = dict(connection.execute(text("SELECT contest, id FROM teams")).all())
        for contest in ("c", "d"):
            _result(connection, _submission(connection, ids[contest]))
    migrate(engine)
    assert schema_revision(engine) == "0010"
    with reading(engine) as connection:
        assert connection.execute(select(results.c.id)).scalars().all() == [1, 2]  # the rows kept
        assert board_stamp(connection, "c") == board_stamp(connection, "d") == (0, False)  # before any change

    def bumps(change: Callable[[Connection], object], contests: tuple[str, ...] = ("c",)) -> None:
        with reading(engine) as connection:
            before = {c: board_stamp(connection, c)[0] for c in ("", "c", "d")}
        with writing(engine) as connection:
            change(connection)
        with reading(engine) as connection:
            after = {c: board_stamp(connection, c)[0] for c in ("", "c", "d")}
        moved = tuple(c for c in after if after[c] != before[c])
        assert moved == contests, (change, before, after)

    team = ids["c"]
    first = _submission  # a team's first submission bumps (the board tells none from no scored one); a second does not
    bumps(lambda connection: connection.execute(insert(teams).values(name="new", created=NOW, contest="c")))
    new = int(_scalar(engine, select(teams.c.id).where(teams.c.name == "new")))
    bumps(lambda connection: first(connection, new))
    bumps(lambda connection: _submission(connection, team), ())
    bumps(lambda connection: _result(connection, 1, 2))
    bumps(lambda connection: connection.execute(update(results).where(results.c.id == 1).values(status="rejected")))
    bumps(lambda connection: connection.execute(delete(results).where(results.c.submission_id == 1)))
    bumps(lambda connection: connection.execute(update(submissions).where(submissions.c.id == 1).values(selected=True)))
    bumps(lambda connection: connection.execute(update(submissions).where(submissions.c.id == 1).values(method="m")))
    bumps(
        lambda connection: connection.execute(update(submissions).where(submissions.c.id == 1).values(status="x")), ()
    )
    bumps(lambda connection: connection.execute(delete(submissions).where(submissions.c.id == 1)))
    for values in ({"name": "renamed"}, {"banned": True}, {"approved": False}):
        bumps(lambda connection, v=values: connection.execute(update(teams).where(teams.c.id == team).values(**v)))
    bumps(lambda connection: connection.execute(insert(settings).values(contest="c", key="revealed", value="x")))
    bumps(lambda connection: connection.execute(update(settings).where(settings.c.contest == "c").values(value="y")))
    bumps(lambda connection: connection.execute(delete(settings).where(settings.c.contest == "c")))
    bumps(lambda connection: connection.execute(insert(settings).values(contest="", key="heartbeat", value="1")), ())
    adopted = update(teams).where(teams.c.contest == "").values(contest="c")
    bumps(lambda connection: connection.execute(adopted), ("", "c"))  # adopted by the first contest served
    bumps(lambda connection: _gone(connection, new))
    bumps(lambda connection: _result(connection, 2, 3), ("d",))  # d's submission: d's stamp alone
    with reading(engine) as connection:
        assert connection.execute(
            select(board_versions.c.contest).order_by(board_versions.c.contest)
        ).scalars().all() == [
            "",
            "c",
            "d",
        ]
    engine.dispose()


def _gone(connection: Connection, team: int) -> None:
    """``team`` removed with its submissions."""
    connection.execute(delete(submissions).where(submissions.c.team_id == team))
    connection.execute(delete(teams).where(teams.c.id == team))


def _scalar(engine: object, query: object) -> object:
    with reading(engine) as connection:  # type: ignore[arg-type]
        return connection.execute(query).scalar_one()  # type: ignore[call-overload]


def test_0010_downgrades_to_the_one_stamp_and_its_triggers(database_url: str) -> None:
    """Back to 0009 (podium 0.11 on the same database): the one stamp again, bumped by a change in any contest."""
    engine = connect(database_url)
    migrate(engine)
    config = Config()
    config.set_main_option("script_location", str(resources.files("podium.service") / "migrations"))
    with engine.connect() as connection:
        config.attributes["connection"] = connection
        command.downgrade(config, "0009")
        connection.commit()
    assert schema_revision(engine) == "0009"
    with engine.begin() as connection:
        connection.execute(
            text("INSERT INTO contests (id, path, added, withdrawn) VALUES ('c', 'x', :t, :f)"), {"t": NOW, "f": False}
        )
    stamp = _scalar(engine, text("SELECT version FROM board_version"))
    with writing(engine) as connection:
        connection.execute(insert(teams).values(name="alpha", created=NOW, contest="c"))
    assert _scalar(engine, text("SELECT version FROM board_version")) == stamp + 1  # type: ignore[operator]
    with writing(engine) as connection:
        _result(connection, _submission(connection, 1))  # the team's first submission and its result: two bumps
    assert _scalar(engine, text("SELECT version FROM board_version")) == stamp + 3  # type: ignore[operator]
    migrate(engine)  # and up again
    assert schema_revision(engine) == "0010"
    engine.dispose()
