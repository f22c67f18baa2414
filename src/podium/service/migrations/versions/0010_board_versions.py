"""podium 0.12: the leaderboard's version stamp per contest, so a change in one contest redraws its boards only

Revision ID: 0010
Revises: 0009
Create Date: 2026-11-26

Revision 0003's one ``board_version`` row was bumped by any change any board
shows, so a result stored in one contest made every web process compute and
draw every contest's boards again (and so did a site setting: a worker's
heartbeat). ``board_versions`` holds a row per contest, bumped (made at its
first bump) by the same triggers, each now finding the contest of the row it
sees: a team's and a setting's own, a submission's through its team, a result's
through its submission and team. A row whose parent is gone in the same
transaction (a result deleted with its submission) finds none: the parent's
own trigger bumps the contest. A team moved to another contest (the first
contest served adopts the teams made before) bumps both.

The stamps start again at 0: a web process keeps its boards in memory only and
is started again with the upgrade. On PostgreSQL the triggers stay deferred to
the commit (0003's reason: the stamp's row locked last).
"""

import sqlalchemy as sa
from alembic import op

revision = "0010"
down_revision = "0009"
branch_labels = None
depends_on = None

OLD_FUNCTIONS = ("podium_board_first_submission", "podium_board_changed")
OLD_BUMP = "UPDATE board_version SET version = version + 1"
OLD_TRIGGERS = (  # (name, table, event): revisions 0003, 0007 and 0008's, on the one stamp
    ("board_results_insert", "results", "INSERT"),
    ("board_results_update", "results", "UPDATE"),
    ("board_results_delete", "results", "DELETE"),
    ("board_settings_insert", "settings", "INSERT"),
    ("board_settings_update", "settings", "UPDATE"),
    ("board_settings_delete", "settings", "DELETE"),
    ("board_teams_insert", "teams", "INSERT"),
    ("board_teams_update", "teams", "UPDATE OF name"),
    ("board_teams_delete", "teams", "DELETE"),
    ("board_teams_standing", "teams", "UPDATE OF banned, approved"),
    ("board_submissions_insert", "submissions", "INSERT"),
    ("board_submissions_update", "submissions", "UPDATE OF selected, team_id"),
    ("board_submissions_delete", "submissions", "DELETE"),
    ("board_submissions_method", "submissions", "UPDATE OF method, description, paper_url, code_url, method_shown"),
)

# The contest of a row, as a SELECT of (contest, 1) for the bump (ROW: NEW or OLD); a site setting (contest '') bumps none
CONTEST_OF = {
    "teams": "SELECT ROW.contest, 1 WHERE true",
    "settings": "SELECT ROW.contest, 1 WHERE ROW.contest <> ''",
    "submissions": "SELECT contest, 1 FROM teams WHERE id = ROW.team_id",
    "results": "SELECT teams.contest, 1 FROM teams, submissions WHERE submissions.id = ROW.submission_id AND teams.id = submissions.team_id",
}
KEY = {"teams": "contest", "settings": "contest", "submissions": "team_id", "results": "submission_id"}  # a row's link
FIRST = (
    "NOT EXISTS (SELECT 1 FROM submissions WHERE team_id = NEW.team_id AND id < NEW.id)"  # a team's first submission
)
# (name, table, event, condition): what the board reads, as the triggers they replace
TRIGGERS = (
    ("board_versions_results_insert", "results", "INSERT", None),
    ("board_versions_results_update", "results", "UPDATE", None),
    ("board_versions_results_delete", "results", "DELETE", None),
    ("board_versions_settings_insert", "settings", "INSERT", None),
    ("board_versions_settings_update", "settings", "UPDATE", None),
    ("board_versions_settings_delete", "settings", "DELETE", None),
    ("board_versions_teams_insert", "teams", "INSERT", None),
    ("board_versions_teams_update", "teams", "UPDATE OF name, contest, banned, approved", None),
    ("board_versions_teams_delete", "teams", "DELETE", None),
    ("board_versions_submissions_insert", "submissions", "INSERT", FIRST),
    (
        "board_versions_submissions_update",
        "submissions",
        "UPDATE OF selected, team_id, method, description, paper_url, code_url, method_shown",
        None,
    ),
    ("board_versions_submissions_delete", "submissions", "DELETE", None),
)


def bumps(table: str, event: str) -> list[str]:
    """The statements bumping the contest of the row ``event`` touches in ``table`` (an update: the new row's, and the
    old row's when it was of another)."""
    moved = f" AND OLD.{KEY[table]} <> NEW.{KEY[table]}"
    rows = {"INSERT": (("NEW", ""),), "DELETE": (("OLD", ""),)}.get(event, (("NEW", ""), ("OLD", moved)))
    return [
        f"INSERT INTO board_versions (contest, version) {CONTEST_OF[table].replace('ROW', row)}{condition} "
        "ON CONFLICT (contest) DO UPDATE SET version = board_versions.version + 1"
        for row, condition in rows
    ]


def upgrade() -> None:
    postgresql = op.get_bind().dialect.name == "postgresql"
    if postgresql:  # the deferred triggers fire at each statement: PostgreSQL drops no trigger with events pending
        op.execute("SET CONSTRAINTS ALL IMMEDIATE")
    for name, table, _event in OLD_TRIGGERS:
        op.execute(f"DROP TRIGGER {name} ON {table}" if postgresql else f"DROP TRIGGER {name}")
    if postgresql:
        for function in OLD_FUNCTIONS:
            op.execute(f"DROP FUNCTION {function}()")
    op.drop_table("board_version")
    op.create_table(
        "board_versions",
        sa.Column("contest", sa.String(length=64), nullable=False),
        sa.Column("version", sa.Integer(), nullable=False),
        sa.PrimaryKeyConstraint("contest"),
    )
    for name, table, event, condition in TRIGGERS:
        kind = event.split()[0]
        statements = bumps(table, kind)
        if postgresql:
            body = "; ".join(statements)
            if condition:
                body = f"IF {condition} THEN {body}; END IF"
            op.execute(
                f"CREATE FUNCTION {name}() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN {body}; RETURN NULL; END $$"
            )
            op.execute(
                f"CREATE CONSTRAINT TRIGGER {name} AFTER {event} ON {table} DEFERRABLE INITIALLY DEFERRED "
                f"FOR EACH ROW EXECUTE FUNCTION {name}()"
            )
        else:
            when = f" WHEN {condition}" if condition else ""
            op.execute(
                f"CREATE TRIGGER {name} AFTER {event} ON {table} FOR EACH ROW{when} BEGIN {'; '.join(statements)}; END"
            )


def downgrade() -> None:
    """Revision 0009's one stamp and its triggers again (the stamp starts at 1: the web processes start again too)."""
    postgresql = op.get_bind().dialect.name == "postgresql"
    if postgresql:
        op.execute("SET CONSTRAINTS ALL IMMEDIATE")
    for name, table, _event, _condition in TRIGGERS:
        op.execute(f"DROP TRIGGER {name} ON {table}" if postgresql else f"DROP TRIGGER {name}")
        if postgresql:
            op.execute(f"DROP FUNCTION {name}()")
    op.drop_table("board_versions")
    op.create_table(
        "board_version",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("version", sa.Integer(), nullable=False),
        sa.PrimaryKeyConstraint("id"),
    )
    op.execute("INSERT INTO board_version (id, version) VALUES (1, 1)")
    if postgresql:
        op.execute(
            f"CREATE FUNCTION podium_board_changed() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN {OLD_BUMP}; RETURN NULL; END $$"
        )
        op.execute(
            "CREATE FUNCTION podium_board_first_submission() RETURNS trigger LANGUAGE plpgsql AS "
            f"$$ BEGIN IF {FIRST} THEN {OLD_BUMP}; END IF; RETURN NULL; END $$"
        )
    for name, table, event in OLD_TRIGGERS:
        first = name == "board_submissions_insert"
        if postgresql:
            function = "podium_board_first_submission" if first else "podium_board_changed"
            op.execute(
                f"CREATE CONSTRAINT TRIGGER {name} AFTER {event} ON {table} DEFERRABLE INITIALLY DEFERRED "
                f"FOR EACH ROW EXECUTE FUNCTION {function}()"
            )
        else:
            when = f" WHEN {FIRST}" if first else ""
            op.execute(f"CREATE TRIGGER {name} AFTER {event} ON {table} FOR EACH ROW{when} BEGIN {OLD_BUMP}; END")
