"""podium 0.10: the organizer's dashboard: banned teams and users, teams waiting for approval, announcements, re-runs

Revision ID: 0008
Revises: 0007
Create Date: 2026-11-26

Columns are added with plain ``ALTER TABLE ... ADD COLUMN`` (no table is
rebuilt on SQLite, so the triggers of revision 0003 stay). A ban or an
approval changes the leaderboard, so a trigger bumps its version stamp as
0003's do. Two indexes serve the dashboard's figures: a track's submissions by the time
they were sent, and by the time they ended (the last hour's waits and runs).
"""

import sqlalchemy as sa
from alembic import op

revision = "0008"
down_revision = "0007"
branch_labels = None
depends_on = None

BUMP = "UPDATE board_version SET version = version + 1"
STANDING = ("board_teams_standing", "teams", "UPDATE OF banned, approved")  # what the board reads of a team, as 0003's


def upgrade() -> None:
    op.add_column("teams", sa.Column("banned", sa.Boolean(), nullable=False, server_default=sa.false()))
    op.add_column("teams", sa.Column("approved", sa.Boolean(), nullable=False, server_default=sa.true()))
    op.add_column("users", sa.Column("banned", sa.Boolean(), nullable=False, server_default=sa.false()))
    op.add_column("jobs", sa.Column("notify", sa.Boolean(), nullable=False, server_default=sa.false()))
    op.create_index("ix_submissions_track_created", "submissions", ["track", "created"], unique=False)
    op.create_index("ix_submissions_track_finished", "submissions", ["track", "finished"], unique=False)
    op.create_table(
        "announcements",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("contest", sa.String(length=64), nullable=False),
        sa.Column("text", sa.Text(), nullable=False),
        sa.Column("author", sa.String(length=64), nullable=True),
        sa.Column("created", sa.DateTime(timezone=True), nullable=False),
        sa.PrimaryKeyConstraint("id"),
    )
    op.create_index("ix_announcements_contest_created", "announcements", ["contest", "created"], unique=False)
    name, table, event = STANDING
    if op.get_bind().dialect.name == "postgresql":
        op.execute(
            f"CREATE CONSTRAINT TRIGGER {name} AFTER {event} ON {table} DEFERRABLE INITIALLY DEFERRED FOR EACH ROW EXECUTE FUNCTION podium_board_changed()"
        )
    else:
        op.execute(f"CREATE TRIGGER {name} AFTER {event} ON {table} FOR EACH ROW BEGIN {BUMP}; END")


def downgrade() -> None:
    name, table, _event = STANDING
    op.execute(
        f"DROP TRIGGER {name} ON {table}" if op.get_bind().dialect.name == "postgresql" else f"DROP TRIGGER {name}"
    )
    op.drop_index("ix_announcements_contest_created", table_name="announcements")
    op.drop_table("announcements")
    op.drop_index("ix_submissions_track_finished", table_name="submissions")
    op.drop_index("ix_submissions_track_created", table_name="submissions")
    with op.batch_alter_table("jobs", schema=None) as batch_op:
        batch_op.drop_column("notify")
    with op.batch_alter_table("users", schema=None) as batch_op:
        batch_op.drop_column("banned")
    with op.batch_alter_table("teams", schema=None) as batch_op:
        batch_op.drop_column("approved")
        batch_op.drop_column("banned")
