"""Connecting to the service's database and bringing its schema up to date.

SQLite (the default, one file in the data folder) runs in WAL mode with a busy
timeout; every write transaction starts with ``BEGIN IMMEDIATE``, so two
writers never both read a free job or a free quota and then collide.
PostgreSQL (``postgresql://...``, driven by psycopg 3) locks rows with
``SELECT ... FOR UPDATE [SKIP LOCKED]`` instead. :func:`writing` and
:func:`reading` are the only ways the service opens a transaction.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from importlib import resources
from pathlib import Path
from typing import Any

from sqlalchemy import Connection, Engine, create_engine, event, inspect, make_url, text

from podium.core.errors import UsageError

SQLITE_FILE = "podium.sqlite3"
BUSY_TIMEOUT_MS = 30_000


class DuplicateNames(UsageError):
    """The upgrade to revision 0009 found names differing only in case; the message names them and their renaming commands."""


def database_url(url: str | None, data: Path) -> str:
    """``url`` with ``postgresql://`` meaning psycopg 3; by default a SQLite file in ``data``."""
    if url is None:
        return f"sqlite:///{(data / SQLITE_FILE).resolve()}"
    for prefix in ("postgresql://", "postgres://"):
        if url.startswith(prefix):
            return "postgresql+psycopg://" + url[len(prefix) :]
    if url.startswith(("sqlite:///", "postgresql+psycopg://")):
        return url
    raise UsageError(
        f"--database {url.split('@')[-1]}: podium takes sqlite:///PATH or postgresql://USER@HOST:PORT/NAME"
    )


def connect(url: str) -> Engine:
    """An engine for ``url``, set up for the service's transactions."""
    parsed = make_url(url)
    if parsed.get_backend_name() == "sqlite":
        engine = create_engine(url, connect_args={"timeout": BUSY_TIMEOUT_MS / 1000, "check_same_thread": False})

        @event.listens_for(engine, "connect")
        def _on_connect(dbapi_connection: Any, _record: Any) -> None:
            dbapi_connection.isolation_level = None  # SQLAlchemy emits BEGIN itself (below)
            cursor = dbapi_connection.cursor()
            cursor.execute("PRAGMA journal_mode=WAL")
            cursor.execute(f"PRAGMA busy_timeout={BUSY_TIMEOUT_MS}")
            cursor.execute("PRAGMA foreign_keys=ON")
            cursor.close()

        @event.listens_for(engine, "begin")
        def _on_begin(connection: Connection) -> None:
            immediate = connection.get_execution_options().get("podium_write", False)
            connection.exec_driver_sql("BEGIN IMMEDIATE" if immediate else "BEGIN")

        return engine
    if parsed.get_backend_name() == "postgresql":
        return create_engine(url, pool_pre_ping=True, pool_size=10, max_overflow=20)
    raise UsageError(f"unsupported database {parsed.get_backend_name()}")


@contextmanager
def writing(engine: Engine) -> Iterator[Connection]:
    """A write transaction: ``BEGIN IMMEDIATE`` on SQLite; committed at the end, rolled back on an exception."""
    with engine.connect() as connection:
        connection = connection.execution_options(podium_write=True)
        with connection.begin():
            yield connection


@contextmanager
def reading(engine: Engine) -> Iterator[Connection]:
    """A read transaction (one consistent snapshot)."""
    with engine.connect() as connection, connection.begin():
        yield connection


def migrate(engine: Engine, revision: str = "head") -> None:
    """Bring the schema to the newest Alembic revision, or to ``revision`` (a new database gets every table)."""
    from alembic import command
    from alembic.config import Config

    config = Config()
    config.set_main_option("script_location", str(resources.files("podium.service") / "migrations"))
    with engine.connect() as connection:
        sqlite = connection.dialect.name == "sqlite"
        if sqlite:  # SQLite's procedure for a change that copies a table: foreign keys off outside the transaction, checked after
            connection.connection.driver_connection.execute("PRAGMA foreign_keys=OFF")  # type: ignore[union-attr]
        try:
            config.attributes["connection"] = connection
            command.upgrade(config, revision)
            if sqlite and (broken := connection.exec_driver_sql("PRAGMA foreign_key_check").all()):
                raise UsageError(f"the migration left rows pointing to no row: {broken[:5]}")
            connection.commit()
        finally:
            if sqlite:
                connection.rollback()
                connection.connection.driver_connection.execute("PRAGMA foreign_keys=ON")  # type: ignore[union-attr]


def schema_revision(engine: Engine) -> str | None:
    """The Alembic revision the database is at; ``None`` for a database podium never opened."""
    with reading(engine) as connection:
        if not inspect(connection).has_table("alembic_version"):
            return None
        return connection.execute(text("SELECT version_num FROM alembic_version")).scalar()
