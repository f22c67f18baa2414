"""podium 0.9: the leaderboard's version stamp, bumped by triggers whenever what the board shows changes

Revision ID: 0003
Revises: 0002
Create Date: 2026-11-26

Every web process keeps the board it computed under the stamp it read
(:mod:`podium.service.board_cache`); the database bumps the stamp in the same
transaction as any change the board shows, whatever process or command makes
it: a result stored or deleted (a score, a rescore), a setting (the reveal,
the scoring round, the contest served), a selection, a team added, renamed or
removed, a team's first submission (the board tells a team with none from
one with no scored submission), a submission deleted. On PostgreSQL the
triggers are deferred to the commit, so the stamp's row is locked last and
briefly, after every other row a transaction locks (no deadlock with a
writer that locks a submission first).
"""

import sqlalchemy as sa
from alembic import op

revision = "0003"
down_revision = "0002"
branch_labels = None
depends_on = None

BUMP = "UPDATE board_version SET version = version + 1"
FIRST = (
    "NOT EXISTS (SELECT 1 FROM submissions WHERE team_id = NEW.team_id AND id < NEW.id)"  # the team's first submission
)
# (name, table, event, condition): what the board reads
TRIGGERS = (
    ("board_results_insert", "results", "INSERT", None),
    ("board_results_update", "results", "UPDATE", None),
    ("board_results_delete", "results", "DELETE", None),
    ("board_settings_insert", "settings", "INSERT", None),
    ("board_settings_update", "settings", "UPDATE", None),
    ("board_settings_delete", "settings", "DELETE", None),
    ("board_teams_insert", "teams", "INSERT", None),
    ("board_teams_update", "teams", "UPDATE OF name", None),
    ("board_teams_delete", "teams", "DELETE", None),
    ("board_submissions_insert", "submissions", "INSERT", FIRST),
    ("board_submissions_update", "submissions", "UPDATE OF selected, team_id", None),
    ("board_submissions_delete", "submissions", "DELETE", None),
)


def upgrade() -> None:
    op.create_table(
        "board_version",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("version", sa.Integer(), nullable=False),
        sa.PrimaryKeyConstraint("id"),
    )
    op.execute("INSERT INTO board_version (id, version) VALUES (1, 1)")
    postgresql = op.get_bind().dialect.name == "postgresql"
    if postgresql:
        op.execute(
            f"CREATE FUNCTION podium_board_changed() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN {BUMP}; RETURN NULL; END $$"
        )
        op.execute(
            f"CREATE FUNCTION podium_board_first_submission() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN IF {FIRST} THEN {BUMP}; END IF; RETURN NULL; END $$"
        )
    for name, table, event, condition in TRIGGERS:
        if postgresql:
            function = "podium_board_first_submission" if condition else "podium_board_changed"
            op.execute(
                f"CREATE CONSTRAINT TRIGGER {name} AFTER {event} ON {table} DEFERRABLE INITIALLY DEFERRED FOR EACH ROW EXECUTE FUNCTION {function}()"
            )
        else:
            when = f" WHEN {condition}" if condition else ""
            op.execute(f"CREATE TRIGGER {name} AFTER {event} ON {table} FOR EACH ROW{when} BEGIN {BUMP}; END")


def downgrade() -> None:
    postgresql = op.get_bind().dialect.name == "postgresql"
    for name, table, _event, _condition in TRIGGERS:
        op.execute(f"DROP TRIGGER {name} ON {table}" if postgresql else f"DROP TRIGGER {name}")
    if postgresql:
        op.execute("DROP FUNCTION podium_board_first_submission()")
        op.execute("DROP FUNCTION podium_board_changed()")
    op.drop_table("board_version")
