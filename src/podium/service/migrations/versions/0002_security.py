"""podium 0.9: tokens that expire, belong to a user and know a session; the log-in limiter's attempts

Revision ID: 0002
Revises: 0001
Create Date: 2026-11-26

A web session's token was told apart by its label ("session of NAME") and its
age; it now carries ``session`` and ``expires`` (its log-in time plus 12 hours,
so sessions opened before the upgrade end when they did).
"""

from datetime import timedelta

import sqlalchemy as sa
from alembic import op

revision = "0002"
down_revision = "0001"
branch_labels = None
depends_on = None

SESSION_HOURS = 12


def upgrade() -> None:
    with op.batch_alter_table("tokens", schema=None) as batch_op:
        batch_op.add_column(sa.Column("expires", sa.DateTime(timezone=True), nullable=True))
        batch_op.add_column(sa.Column("user_id", sa.Integer(), nullable=True))
        batch_op.add_column(sa.Column("session", sa.Boolean(), nullable=False, server_default=sa.false()))
        batch_op.create_foreign_key("fk_tokens_user_id", "users", ["user_id"], ["id"])
    tokens = sa.table(
        "tokens",
        sa.column("id", sa.Integer),
        sa.column("label", sa.String),
        sa.column("session", sa.Boolean),
        sa.column("created", sa.DateTime(timezone=True)),
        sa.column("expires", sa.DateTime(timezone=True)),
    )
    sessions = tokens.c.label.startswith("session of ")
    op.execute(tokens.update().where(sessions).values(session=True))
    for row in op.get_bind().execute(sa.select(tokens.c.id, tokens.c.created).where(sessions)).all():
        op.execute(
            tokens.update().where(tokens.c.id == row.id).values(expires=row.created + timedelta(hours=SESSION_HOURS))
        )
    op.create_table(
        "attempts",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("kind", sa.String(length=16), nullable=False),
        sa.Column("address", sa.String(length=64), nullable=False),
        sa.Column("user", sa.String(length=64), nullable=False),
        sa.Column("at", sa.DateTime(timezone=True), nullable=False),
        sa.PrimaryKeyConstraint("id"),
    )
    with op.batch_alter_table("attempts", schema=None) as batch_op:
        batch_op.create_index("ix_attempts_kind_address_at", ["kind", "address", "at"], unique=False)
        batch_op.create_index("ix_attempts_at", ["at"], unique=False)


def downgrade() -> None:
    with op.batch_alter_table("attempts", schema=None) as batch_op:
        batch_op.drop_index("ix_attempts_at")
        batch_op.drop_index("ix_attempts_kind_address_at")
    op.drop_table("attempts")
    with op.batch_alter_table("tokens", schema=None) as batch_op:
        batch_op.drop_constraint("fk_tokens_user_id", type_="foreignkey")
        batch_op.drop_column("session")
        batch_op.drop_column("user_id")
        batch_op.drop_column("expires")
