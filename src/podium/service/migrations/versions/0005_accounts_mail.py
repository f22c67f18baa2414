"""podium 0.9: users' e-mail addresses (confirmed or not) and notification choices, teams' invitation codes, password-reset links, the outbox

Revision ID: 0005
Revises: 0004
Create Date: 2026-11-26

Columns are added with plain ``ALTER TABLE ... ADD COLUMN`` (no table is
rebuilt on SQLite, so the triggers other revisions put on ``teams`` stay).
"""

import sqlalchemy as sa
from alembic import op

revision = "0005"
down_revision = "0004"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.add_column("teams", sa.Column("invitation", sa.String(length=32), nullable=True))
    op.create_index("ix_teams_invitation", "teams", ["invitation"], unique=True)
    op.add_column("users", sa.Column("email", sa.String(length=254), nullable=True))
    op.add_column("users", sa.Column("email_confirmed", sa.Boolean(), nullable=False, server_default=sa.false()))
    op.add_column("users", sa.Column("email_check", sa.String(length=64), nullable=True))
    op.add_column("users", sa.Column("mail_off", sa.String(length=256), nullable=False, server_default=""))
    op.create_table(
        "resets",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("digest", sa.String(length=64), nullable=False),
        sa.Column("user_id", sa.Integer(), nullable=False),
        sa.Column("created", sa.DateTime(timezone=True), nullable=False),
        sa.Column("expires", sa.DateTime(timezone=True), nullable=False),
        sa.ForeignKeyConstraint(["user_id"], ["users.id"], name="fk_resets_user_id"),
        sa.PrimaryKeyConstraint("id"),
        sa.UniqueConstraint("digest"),
    )
    op.create_table(
        "outbox",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("user_id", sa.Integer(), nullable=True),
        sa.Column("address", sa.String(length=254), nullable=False),
        sa.Column("kind", sa.String(length=16), nullable=False),
        sa.Column("subject", sa.String(length=256), nullable=False),
        sa.Column("body", sa.Text(), nullable=False),
        sa.Column("created", sa.DateTime(timezone=True), nullable=False),
        sa.Column("tries", sa.Integer(), nullable=False),
        sa.Column("next_try", sa.DateTime(timezone=True), nullable=False),
        sa.Column("sent", sa.DateTime(timezone=True), nullable=True),
        sa.Column("error", sa.Text(), nullable=True),
        sa.ForeignKeyConstraint(["user_id"], ["users.id"], name="fk_outbox_user_id"),
        sa.PrimaryKeyConstraint("id"),
    )
    op.create_index("ix_outbox_sent_next_try", "outbox", ["sent", "next_try"], unique=False)


def downgrade() -> None:
    op.drop_index("ix_outbox_sent_next_try", table_name="outbox")
    op.drop_table("outbox")
    op.drop_table("resets")
    with op.batch_alter_table("users", schema=None) as batch_op:
        batch_op.drop_column("mail_off")
        batch_op.drop_column("email_check")
        batch_op.drop_column("email_confirmed")
        batch_op.drop_column("email")
    op.drop_index("ix_teams_invitation", table_name="teams")
    with op.batch_alter_table("teams", schema=None) as batch_op:
        batch_op.drop_column("invitation")
