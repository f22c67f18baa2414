"""podium 0.10: many contests in one database: the contests table, settings and teams per contest, memberships, organizers per contest, site administrators

Revision ID: 0006
Revises: 0005
Create Date: 2026-11-26

The database's one contest (``settings``' ``contest_id`` and ``contest_path``)
becomes the first row of ``contests``; its teams, its settings (the scoring
round, the reveal, the announcements mailed) and its tokens are keyed by it; a
user's team (``users.team_id``) becomes a membership, an organizer
(``users.organizer``) that contest's organizer. Site-wide settings (the
workers' heartbeats, the mailer's sender) keep the contest ``''``. Every row is
kept. A database that never served a contest keeps its teams with the
contest ``''``: the first contest served adopts them (``podium.service.contests.register``).

On SQLite ``teams``, ``users`` and ``settings`` are copied to change their keys
(``podium.service.database.migrate`` turns the foreign keys off for it, as
SQLite's own procedure for such changes asks, and checks them after); the copy
drops the triggers on ``teams`` and ``settings``, which are made again.
"""

from datetime import UTC, datetime

import sqlalchemy as sa
from alembic import op

revision = "0006"
down_revision = "0005"
branch_labels = None
depends_on = None

BUMP = "UPDATE board_version SET version = version + 1"
SQLITE_TRIGGERS = (  # 0003's triggers on the tables SQLite copies
    ("board_settings_insert", "settings", "INSERT"),
    ("board_settings_update", "settings", "UPDATE"),
    ("board_settings_delete", "settings", "DELETE"),
    ("board_teams_insert", "teams", "INSERT"),
    ("board_teams_update", "teams", "UPDATE OF name"),
    ("board_teams_delete", "teams", "DELETE"),
)
PER_CONTEST = ("round", "revealed")  # settings of the contest; also every "mailed:" key
NAMES = {"uq": "uq_%(table_name)s_%(column_0_name)s"}  # SQLite's unnamed unique constraints, named to drop them

settings = sa.table(
    "settings", sa.column("key", sa.String), sa.column("value", sa.Text), sa.column("contest", sa.String)
)
contests = sa.table(
    "contests",
    sa.column("id", sa.String),
    sa.column("path", sa.Text),
    sa.column("added", sa.DateTime(timezone=True)),
    sa.column("withdrawn", sa.Boolean),
)


def upgrade() -> None:
    bind = op.get_bind()
    sqlite = bind.dialect.name == "sqlite"
    if (
        not sqlite
    ):  # the board's deferred triggers fire at each statement: PostgreSQL alters no table with events pending
        op.execute("SET CONSTRAINTS ALL IMMEDIATE")
    found = dict(
        bind.execute(
            sa.select(settings.c.key, settings.c.value).where(settings.c.key.in_(("contest_id", "contest_path")))
        ).all()
    )
    contest = found.get("contest_id", "")
    op.create_table(
        "contests",
        sa.Column("id", sa.String(length=64), nullable=False),
        sa.Column("path", sa.Text(), nullable=False),
        sa.Column("added", sa.DateTime(timezone=True), nullable=False),
        sa.Column("withdrawn", sa.Boolean(), nullable=False, server_default=sa.false()),
        sa.PrimaryKeyConstraint("id"),
    )
    if contest:
        op.execute(
            contests.insert().values(
                id=contest, path=found.get("contest_path", ""), added=datetime.now(UTC), withdrawn=False
            )
        )

    op.add_column("settings", sa.Column("contest", sa.String(length=64), nullable=False, server_default=""))
    op.execute(settings.delete().where(settings.c.key.in_(("contest_id", "contest_path"))))
    op.execute(
        settings.update()
        .where(sa.or_(settings.c.key.in_(PER_CONTEST), settings.c.key.startswith("mailed:")))
        .values(contest=contest)
    )
    if sqlite:  # a copy with the new primary key
        keyed = sa.Table(
            "settings",
            sa.MetaData(),
            sa.Column("contest", sa.String(length=64), primary_key=True, server_default=""),
            sa.Column("key", sa.String(length=64), primary_key=True),
            sa.Column("value", sa.Text(), nullable=False),
        )
        with op.batch_alter_table("settings", copy_from=keyed, recreate="always"):
            pass
    else:
        op.drop_constraint("settings_pkey", "settings", type_="primary")
        op.create_primary_key("pk_settings", "settings", ["contest", "key"])

    op.add_column("teams", sa.Column("contest", sa.String(length=64), nullable=False, server_default=""))
    op.execute(sa.table("teams", sa.column("contest", sa.String)).update().values(contest=contest))
    with op.batch_alter_table("teams", naming_convention=NAMES) as batch_op:
        batch_op.drop_constraint("uq_teams_name" if sqlite else "teams_name_key", type_="unique")
        batch_op.create_index("ix_teams_contest_name", ["contest", "name"], unique=True)

    op.create_table(
        "memberships",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("user_id", sa.Integer(), nullable=False),
        sa.Column("team_id", sa.Integer(), nullable=False),
        sa.Column("contest", sa.String(length=64), nullable=False),
        sa.ForeignKeyConstraint(["user_id"], ["users.id"], name="fk_memberships_user_id"),
        sa.ForeignKeyConstraint(["team_id"], ["teams.id"], name="fk_memberships_team_id"),
        sa.PrimaryKeyConstraint("id"),
        sa.UniqueConstraint("user_id", "contest", name="uq_memberships_user_contest"),
    )
    op.create_index("ix_memberships_team_id", "memberships", ["team_id"], unique=False)
    op.create_table(
        "organizers",
        sa.Column("user_id", sa.Integer(), nullable=False),
        sa.Column("contest", sa.String(length=64), nullable=False),
        sa.ForeignKeyConstraint(["user_id"], ["users.id"], name="fk_organizers_user_id"),
        sa.PrimaryKeyConstraint("user_id", "contest"),
    )
    op.execute(
        "INSERT INTO memberships (user_id, team_id, contest)"
        " SELECT users.id, users.team_id, teams.contest FROM users JOIN teams ON teams.id = users.team_id"
    )
    users = sa.table("users", sa.column("id", sa.Integer), sa.column("organizer", sa.Boolean))
    organizers = bind.execute(sa.select(users.c.id).where(users.c.organizer)).scalars().all()
    if organizers:
        op.bulk_insert(
            sa.table("organizers", sa.column("user_id", sa.Integer), sa.column("contest", sa.String)),
            [{"user_id": user, "contest": contest} for user in organizers],
        )
    op.add_column("users", sa.Column("admin", sa.Boolean(), nullable=False, server_default=sa.false()))
    if (
        not contest and organizers
    ):  # no contest to organize yet: the organizers of the only database become its administrators
        op.execute(users.update().where(users.c.organizer).values(admin=True))
    with op.batch_alter_table("users", naming_convention=NAMES) as batch_op:
        batch_op.drop_column("team_id")
        batch_op.drop_column("organizer")

    op.add_column("tokens", sa.Column("contest", sa.String(length=64), nullable=True))
    op.execute(sa.table("tokens", sa.column("contest", sa.String)).update().values(contest=contest or None))

    if sqlite:
        for name, table, event in SQLITE_TRIGGERS:
            op.execute(f"CREATE TRIGGER {name} AFTER {event} ON {table} FOR EACH ROW BEGIN {BUMP}; END")


def downgrade() -> None:
    raise NotImplementedError("podium does not downgrade a database with many contests; restore its backup")
