"""The service's settings row by row (a contest's: the scoring round, the reveal) and the contests it serves."""

from __future__ import annotations

import logging
from datetime import datetime
from functools import cache
from pathlib import Path

from sqlalchemy import Connection, Engine, Select, bindparam, insert, select, true, update

from podium.contest import Contest, ContestError
from podium.contest import load as load_contest
from podium.core.errors import UsageError
from podium.service.database import reading
from podium.service.tables import contests, settings

log = logging.getLogger("podium.serve")
SITE = (
    ""  # the settings of the whole site (the workers' heartbeats, the mailer's sender); a contest's are keyed by its id
)
ROUND = "round"  # 1, then one more for each rescore
REVEALED = "revealed"  # ISO time at which the organizer revealed the private split
READ = (
    "read"  # the SHA-256 of the contest file as it was last read and found good (podium serve, podium contest reload)
)
FOLDER = "contests"  # the site's: the folder podium serve --contests serves (podium contest reload reads it again)


SETTING = select(settings.c.value).where(settings.c.contest == bindparam("contest"), settings.c.key == bindparam("key"))


def get(connection: Connection, key: str, contest: str = SITE) -> str | None:
    """The setting ``key`` of ``contest`` (:data:`SITE`: the site's)."""
    return connection.execute(SETTING, {"contest": contest, "key": key}).scalar()


def put(connection: Connection, key: str, value: str, contest: str = SITE) -> None:
    """Set ``key`` of ``contest`` (:data:`SITE`: the site's) to ``value``."""
    where = (settings.c.contest == contest, settings.c.key == key)
    if connection.execute(update(settings).where(*where).values(value=value)).rowcount == 0:
        connection.execute(insert(settings).values(contest=contest, key=key, value=value))


def current_round(connection: Connection, contest: str) -> int:
    """The contest's scoring round: 1, then one more for each rescore."""
    return int(get(connection, ROUND, contest) or 1)


def revealed_at(connection: Connection, contest: str) -> datetime | None:
    value = get(connection, REVEALED, contest)
    return None if value is None else datetime.fromisoformat(value)


def is_revealed(connection: Connection, contest: Contest, now: datetime) -> bool:
    """Whether the private split is shown: an organizer revealed it, or the last phase has ended."""
    return revealed(revealed_at(connection, contest.id) is not None, contest, now)


def revealed(by_organizer: bool, contest: Contest, now: datetime) -> bool:
    """Whether the board is the final one: revealed by ``podium reveal`` (``by_organizer``), or the last phase has ended."""
    return by_organizer or (bool(contest.phases) and now >= contest.phases[-1].end)


def served_ids(connection: Connection) -> list[str]:
    """The ids of the contests served (not withdrawn), in order."""
    return list(
        connection.execute(select(contests.c.id).where(~contests.c.withdrawn).order_by(contests.c.id)).scalars()
    )


def only_contest(connection: Connection, contest: str | None = None) -> str:
    """``contest`` if the database serves it, else (``None``) the one contest it serves; :class:`UsageError` otherwise."""
    served = served_ids(connection)
    if contest is not None:
        if contest not in served:
            raise UsageError(f"the database serves no contest {contest!r} (it serves: {', '.join(served) or 'none'})")
        return contest
    if len(served) != 1:
        raise UsageError(
            "the database serves no contest yet: start podium serve --contest FILE first"
            if not served
            else f"the database serves {len(served)} contests ({', '.join(served)}): name one with --contest ID"
        )
    return served[0]


@cache
def _served(any_contest: bool) -> Select[str, str, str | None, str | None]:
    """The statement :meth:`ContestCache.get` runs at every request, built once (building it took most of its time):
    a served contest's id, file, round and read stamp, by its id (bound as ``contest``) or (``any_contest``) the first two served."""
    round_setting, read_setting = settings.alias("round_setting"), settings.alias("read_setting")
    return (
        select(contests.c.id, contests.c.path, round_setting.c.value, read_setting.c.value)
        .select_from(
            contests.outerjoin(
                round_setting, (round_setting.c.contest == contests.c.id) & (round_setting.c.key == ROUND)
            ).outerjoin(read_setting, (read_setting.c.contest == contests.c.id) & (read_setting.c.key == READ))
        )
        .where(~contests.c.withdrawn)
        .where(true() if any_contest else contests.c.id == bindparam("contest"))
        .limit(2)
    )


class ContestCache:
    """The served contests, each read again from its file when its scoring round changes (``podium rescore``) or the
    file was read again and found good (``podium contest reload``: :data:`READ`); a file that no longer reads keeps its
    contest as this process last read it."""

    def __init__(self, engine: Engine) -> None:
        self.engine = engine
        self._loaded: dict[str, tuple[tuple[int, str, str], Contest]] = {}

    def get(self, contest: str | None = None, connection: Connection | None = None) -> Contest:
        """The contest ``contest`` (``None``: the only one served); :class:`UsageError` when the database does not serve it.

        One statement (every request reads it), in ``connection``'s transaction if given, else in one of its own.
        """
        if connection is None:
            with reading(self.engine) as connection:
                return self.get(contest, connection)
        rows = connection.execute(_served(contest is None), {"contest": contest}).all()
        if len(rows) != 1:
            only_contest(connection, contest)  # the reason, in words
            raise UsageError(f"the database no longer serves {contest or 'a single contest'}")
        id_, path, round_text, read = rows[0]
        stamp = (int(round_text or 1), path, read or "")
        known = self._loaded.get(id_)
        if known is None or known[0] != stamp:
            try:
                known = (stamp, load_contest(Path(path)))
            except ContestError:
                if known is None:
                    raise
                log.warning("the contest file %s no longer reads: %s is served as last read", path, id_)
                known = (stamp, known[1])
            self._loaded[id_] = known
        return known[1]

    def only(self) -> Contest | None:
        """The only contest served, or ``None`` when several are (or none)."""
        try:
            return self.get()
        except UsageError:
            return None
