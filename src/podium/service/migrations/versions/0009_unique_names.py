"""podium 0.11: names unique whatever their case, enforced by the database; invitation codes that end

Revision ID: 0009
Revises: 0008
Create Date: 2026-11-26

The code refused a user ``Alice`` beside ``alice`` (and a team ``Alpha`` beside
``alpha`` in one contest) by looking first, so two requests at once could both
pass. Two unique indexes on the lower-cased names now make the database refuse
the second: users over the whole server, teams within their contest. Names are
ASCII (:data:`podium.service.accounts.NAME`), so SQL's ``lower`` folds them as
Python's does.

A database that already holds such a pair is not changed: the upgrade stops
with :class:`podium.service.database.DuplicateNames`, naming the rows and the
commands that rename them (``podium user rename``, ``podium team rename``),
which still run on the database as it is.

A team's invitation code now ends (:mod:`podium.service.invitations`): a code
made before the upgrade works for 7 days from it; an organizer may revoke one.
"""

from datetime import UTC, datetime, timedelta

import sqlalchemy as sa
from alembic import op

from podium.service.database import DuplicateNames

revision = "0009"
down_revision = "0008"
branch_labels = None
depends_on = None

USERS = "ix_users_name_lower"
TEAMS = "ix_teams_contest_name_lower"


def _duplicates(connection: sa.Connection) -> list[str]:
    """The commands that would rename every name but one of each case-folded pair (users, then teams by contest)."""
    fixes = []
    users = connection.execute(sa.text("SELECT name FROM users ORDER BY id")).scalars()
    seen: dict[str, str] = {}
    for name in users:
        if (first := seen.setdefault(name.lower(), name)) != name:
            fixes.append(f"user {name!r} (as {first!r}): podium user rename '{name}' NEW")
    teams = connection.execute(sa.text("SELECT contest, name FROM teams ORDER BY id")).all()
    seen = {}
    for contest, name in teams:
        if (first := seen.setdefault(f"{contest}/{name.lower()}", name)) != name:
            where = f" --contest {contest}" if contest else ""
            fixes.append(f"team {name!r} (as {first!r}, contest {contest!r}): podium team rename '{name}' NEW{where}")
    return fixes


def upgrade() -> None:
    fixes = _duplicates(op.get_bind())
    if fixes:
        raise DuplicateNames(
            f"{len(fixes)} name{'s' * (len(fixes) != 1)} differ from another only in case, which podium now refuses; "
            "nothing was changed: rename them, then start again:\n  " + "\n  ".join(fixes)
        )
    op.add_column("teams", sa.Column("invitation_expires", sa.DateTime(timezone=True), nullable=True))
    op.add_column("teams", sa.Column("invitation_revoked", sa.Boolean(), nullable=False, server_default=sa.false()))
    teams = sa.table(
        "teams", sa.column("invitation", sa.String), sa.column("invitation_expires", sa.DateTime(timezone=True))
    )
    end = datetime.now(UTC) + timedelta(days=7)  # a code made before the upgrade: 7 days from it
    op.execute(teams.update().where(teams.c.invitation.is_not(None)).values(invitation_expires=end))
    op.create_index(USERS, "users", [sa.text("lower(name)")], unique=True)
    op.create_index(TEAMS, "teams", ["contest", sa.text("lower(name)")], unique=True)


def downgrade() -> None:
    op.drop_index(TEAMS, table_name="teams")
    op.drop_index(USERS, table_name="users")
    with op.batch_alter_table("teams") as batch_op:
        batch_op.drop_column("invitation_revoked")
        batch_op.drop_column("invitation_expires")
