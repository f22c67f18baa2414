"""podium 0.10: a submission's method (name, description, paper and code links) and whether the board may show it after the reveal

Revision ID: 0007
Revises: 0006
Create Date: 2026-11-26

Columns are added with plain ``ALTER TABLE ... ADD COLUMN`` (no table is
rebuilt on SQLite, so the board's triggers on ``submissions`` stay). A change
of them bumps the board's version stamp, as a selection does (migration 0003):
the board shows a method after the reveal.
"""

import sqlalchemy as sa
from alembic import op

revision = "0007"
down_revision = "0006"
branch_labels = None
depends_on = None

TRIGGER = "board_submissions_method"
COLUMNS = "method, description, paper_url, code_url, method_shown"


def upgrade() -> None:
    op.add_column("submissions", sa.Column("method", sa.String(length=100), nullable=True))
    op.add_column("submissions", sa.Column("description", sa.Text(), nullable=True))
    op.add_column("submissions", sa.Column("paper_url", sa.String(length=500), nullable=True))
    op.add_column("submissions", sa.Column("code_url", sa.String(length=500), nullable=True))
    op.add_column("submissions", sa.Column("method_shown", sa.Boolean(), nullable=False, server_default=sa.false()))
    if op.get_bind().dialect.name == "postgresql":
        op.execute(
            f"CREATE CONSTRAINT TRIGGER {TRIGGER} AFTER UPDATE OF {COLUMNS} ON submissions "
            "DEFERRABLE INITIALLY DEFERRED FOR EACH ROW EXECUTE FUNCTION podium_board_changed()"
        )
    else:
        op.execute(
            f"CREATE TRIGGER {TRIGGER} AFTER UPDATE OF {COLUMNS} ON submissions FOR EACH ROW "
            "BEGIN UPDATE board_version SET version = version + 1; END"
        )


def downgrade() -> None:
    postgresql = op.get_bind().dialect.name == "postgresql"
    op.execute(f"DROP TRIGGER {TRIGGER} ON submissions" if postgresql else f"DROP TRIGGER {TRIGGER}")
    for column in ("method_shown", "code_url", "paper_url", "description", "method"):
        op.drop_column("submissions", column)
