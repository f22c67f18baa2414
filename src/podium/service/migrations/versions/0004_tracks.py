"""podium 0.9: a submission belongs to a track (a contest file's [[track]]; the contest's own id when it has none)

Revision ID: 0004
Revises: 0003
Create Date: 2026-11-26

Every submission recorded before was made to the contest's only track, whose
id is the contest's: the rows are filled with the ``contest_id`` setting.
"""

import sqlalchemy as sa
from alembic import op

revision = "0004"
down_revision = "0003"
branch_labels = None
depends_on = None


def upgrade() -> None:
    # SQLite cannot make a column NOT NULL but by copying the table, which jobs and results point to (the copy breaks their
    # foreign keys within the transaction); it takes a NOT NULL column with a default at once: '' (podium always writes the track)
    sqlite = op.get_bind().dialect.name == "sqlite"
    op.add_column(
        "submissions",
        sa.Column("track", sa.String(length=64), nullable=not sqlite, server_default="" if sqlite else None),
    )
    settings = sa.table("settings", sa.column("key", sa.String), sa.column("value", sa.Text))
    submissions = sa.table("submissions", sa.column("track", sa.String))
    contest = op.get_bind().execute(sa.select(settings.c.value).where(settings.c.key == "contest_id")).scalar()
    op.execute(submissions.update().values(track=contest or ""))
    if not sqlite:
        op.alter_column("submissions", "track", existing_type=sa.String(length=64), nullable=False)
    op.create_index("ix_submissions_track_team_created", "submissions", ["track", "team_id", "created"], unique=False)


def downgrade() -> None:
    op.drop_index("ix_submissions_track_team_created", table_name="submissions")
    op.drop_column("submissions", "track")
