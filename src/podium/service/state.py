"""The service's settings row by row: the contest file it serves, the scoring round, the reveal."""

from __future__ import annotations

from datetime import datetime
from pathlib import Path

from sqlalchemy import Connection, Engine, insert, select, update

from podium.contest import Contest
from podium.contest import load as load_contest
from podium.core.errors import UsageError
from podium.service.database import reading
from podium.service.tables import settings

CONTEST_PATH = "contest_path"
CONTEST_ID = "contest_id"
ROUND = "round"  # 1, then one more for each rescore
REVEALED = "revealed"  # ISO time at which the organizer revealed the private split


def get(connection: Connection, key: str) -> str | None:
    return connection.execute(select(settings.c.value).where(settings.c.key == key)).scalar()


def put(connection: Connection, key: str, value: str) -> None:
    if connection.execute(update(settings).where(settings.c.key == key).values(value=value)).rowcount == 0:
        connection.execute(insert(settings).values(key=key, value=value))


def current_round(connection: Connection) -> int:
    return int(get(connection, ROUND) or 1)


def revealed_at(connection: Connection) -> datetime | None:
    value = get(connection, REVEALED)
    return None if value is None else datetime.fromisoformat(value)


def is_revealed(connection: Connection, contest: Contest, now: datetime) -> bool:
    """Whether the private split is shown: an organizer revealed it, or the last phase has ended."""
    return revealed(revealed_at(connection) is not None, contest, now)


def revealed(by_organizer: bool, contest: Contest, now: datetime) -> bool:
    """Whether the board is the final one: revealed by ``podium reveal`` (``by_organizer``), or the last phase has ended."""
    return by_organizer or (bool(contest.phases) and now >= contest.phases[-1].end)


class ContestCache:
    """The served contest, read again from its file when the scoring round changes (``podium rescore``)."""

    def __init__(self, engine: Engine) -> None:
        self.engine = engine
        self._loaded: tuple[int, Contest] | None = None

    def get(self) -> Contest:
        with reading(self.engine) as connection:  # one statement: every request reads it
            found = dict(
                connection.execute(
                    select(settings.c.key, settings.c.value).where(settings.c.key.in_((ROUND, CONTEST_PATH)))
                ).all()
            )
        round_, path = int(found.get(ROUND) or 1), found.get(CONTEST_PATH)
        if path is None:
            raise UsageError("the database serves no contest yet: start podium serve --contest FILE first")
        if self._loaded is None or self._loaded[0] != round_:
            self._loaded = (round_, load_contest(Path(path)))
        return self._loaded[1]
