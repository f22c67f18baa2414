"""Write the rows of a served contest's database as JSON: the fixture ``tests/test_upgrade.py`` upgrades.

``tests/releases/podium-0.8.5.json`` was made with podium 0.8.5 (schema
revision 0001) in these steps, on the real clock: a GlaS demo
contest (``service_helpers.write_contest``, phase open), ``podium serve
--workers 1``; teams alpha and beta with a token each, members ann (alpha) and
olga (organizer) with passwords; alpha's demo submission and beta's worse copy
scored, a garbage zip rejected, ``podium rescore`` (round 2) scored; then
with ``--workers 0`` one more upload left queued. The tokens and passwords
are in the file's ``secrets`` so that the test can use them.

``tests/releases/podium-0.9.0.json`` was made with podium 0.9.0 (revision 0005; ``git archive
1bcbc54``, run from its ``src``) the same way, plus what 0.9.0 added: members ann (alpha, with a
confirmed address) and bea (beta), organizer olga (with an address), ``podium serve --smtp`` to a
local aiosmtpd server (the outbox's rows, the announcements' settings), alpha's demo submission and
a garbage zip (rejected), beta's copy, ``podium rescore`` (round 2), ann's web session (the log-in
page), bea's API log-in, ``podium reveal``, one more upload of beta left queued (``--workers 0``),
and ``podium user reset bea`` (a reset link).

Usage: ``.venv/bin/python tools/release_rows.py --database URL --secrets JSON OUT``.
Rows are read through the database's own schema (reflected), not podium's
tables, so that the file holds what that release wrote; times are ISO 8601.
"""

from __future__ import annotations

import argparse
import json
from datetime import datetime
from pathlib import Path
from typing import Any

from sqlalchemy import MetaData, create_engine, select, text


def _plain(value: Any) -> Any:
    return value.isoformat() if isinstance(value, datetime) else value


def rows(url: str) -> dict[str, Any]:
    """``{"revision": ..., "tables": {name: [row, ...]}}`` of the database at ``url``, tables in dependency order."""
    engine = create_engine(url)
    reflected = MetaData()
    reflected.reflect(engine)
    with engine.connect() as connection:
        revision = connection.execute(text("SELECT version_num FROM alembic_version")).scalar()
        tables = {
            table.name: [
                {key: _plain(value) for key, value in row._mapping.items()}
                for row in connection.execute(select(table).order_by(*table.primary_key.columns))
            ]
            for table in reflected.sorted_tables
            if table.name != "alembic_version"
        }
    engine.dispose()
    return {"revision": revision, "tables": tables}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--database", required=True, help="sqlite:///PATH of the release's database")
    parser.add_argument("--secrets", required=True, help="JSON: the tokens and passwords the rows were made with")
    parser.add_argument("out", type=Path)
    arguments = parser.parse_args()
    found = rows(arguments.database) | {"secrets": json.loads(arguments.secrets)}
    arguments.out.write_text(json.dumps(found, indent=1, sort_keys=True) + "\n")


if __name__ == "__main__":
    main()
