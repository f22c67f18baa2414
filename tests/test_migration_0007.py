"""Migration 0007 (a submission's method) on a database holding rows at 0005, on SQLite and PostgreSQL."""

from __future__ import annotations

from datetime import UTC, datetime

from sqlalchemy import select, text, update

from podium.service.database import connect, migrate, reading, schema_revision, writing
from podium.service.tables import submissions

NOW = datetime(2026, 3, 10, 12, tzinfo=UTC)


def test_0007_keeps_the_rows_and_bumps_the_board_when_a_method_changes(database_url: str) -> None:
    engine = connect(database_url)
    migrate(engine, "0005")
    with engine.begin() as connection:  # rows as podium 0.9.0 wrote them (no method columns yet)
        connection.execute(text("INSERT INTO teams (id, name, created) VALUES (1, 'alpha', :t)"), {"t": NOW})
        connection.execute(
            text(
                "INSERT INTO submissions (id, team_id, phase, track, kind, filename, size, sha256, target, created, status, selected) "
                "VALUES (1, 1, 'first', 'c', 'files', 's.zip', 3, :h, 'files', :t, 'scored', :f)"
            ),
            {"h": "0" * 64, "t": NOW, "f": False},
        )
    migrate(engine, "0007")
    assert schema_revision(engine) == "0007"
    with reading(engine) as connection:
        row = connection.execute(select(submissions)).one()
        stamp = connection.execute(text("SELECT version FROM board_version")).scalar_one()
    assert (row.filename, row.method, row.description, row.paper_url, row.method_shown) == (
        "s.zip",
        None,
        None,
        None,
        False,
    )
    with writing(engine) as connection:
        connection.execute(update(submissions).values(method="net", method_shown=True))
    with reading(engine) as connection:
        assert connection.execute(text("SELECT version FROM board_version")).scalar_one() == stamp + 1
        assert connection.execute(select(submissions.c.method)).scalar_one() == "net"
    engine.dispose()
