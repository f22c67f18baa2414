"""The service's tables (SQLAlchemy Core). Alembic migrations in ``migrations/`` create them.

Times are aware UTC datetimes (:class:`UTCDateTime`). A submission's status is
one of :data:`podium.service.statuses.STATUSES`; whether it uses the team's quota follows from its status
alone (:func:`podium.service.quota.charged`), so no counter can drift.
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from sqlalchemy import (
    JSON,
    Boolean,
    Column,
    DateTime,
    Dialect,
    ForeignKey,
    Index,
    Integer,
    MetaData,
    String,
    Table,
    Text,
    UniqueConstraint,
    false,
    func,
    true,
)
from sqlalchemy.types import TypeDecorator

MAX_ID = (
    2**31 - 1
)  # the largest id the databases' integer columns hold: a larger one names no row (the API answers 404)


class UTCDateTime(TypeDecorator[datetime]):
    """An aware UTC datetime on every database (SQLite stores it without its zone)."""

    impl = DateTime(timezone=True)
    cache_ok = True

    def process_bind_param(self, value: datetime | None, dialect: Dialect) -> datetime | None:
        if value is None:
            return None
        if value.tzinfo is None:
            raise ValueError("naive datetime given to the database; podium stores aware UTC times")
        return value.astimezone(UTC)

    def process_result_value(self, value: Any, dialect: Dialect) -> datetime | None:
        if value is None:
            return None
        return value.replace(tzinfo=UTC) if value.tzinfo is None else value.astimezone(UTC)


metadata = MetaData()

contests = Table(  # the contests the server serves: one row per contest file (podium.service.contests)
    "contests",
    metadata,
    Column("id", String(64), primary_key=True),  # the contest file's id
    Column("path", Text, nullable=False),  # the contest file, resolved
    Column("added", UTCDateTime, nullable=False),
    Column("withdrawn", Boolean, nullable=False, default=False),  # no longer served (its rows are kept)
)

settings = Table(  # one row per contest and key: the scoring round, when the private split was revealed; contest '': the site's
    "settings",
    metadata,
    Column("contest", String(64), primary_key=True, default=""),
    Column("key", String(64), primary_key=True),
    Column("value", Text, nullable=False),
)

board_versions = Table(  # per contest: bumped by the database's triggers whenever what its boards show changes (0010)
    "board_versions",
    metadata,
    Column("contest", String(64), primary_key=True),
    Column("version", Integer, nullable=False),
)

teams = Table(
    "teams",
    metadata,
    Column("id", Integer, primary_key=True),
    Column("name", String(64), nullable=False),  # unique within its contest, whatever the case
    Column("created", UTCDateTime, nullable=False),
    Column("contest", String(64), nullable=False),  # the contest's id ('': made before the database served any)
    Column(
        "invitation", String(32), nullable=True
    ),  # the code that lets a new member join (podium.service.invitations)
    Column("invitation_expires", UTCDateTime, nullable=True),  # when the code stops working (0009)
    Column("invitation_revoked", Boolean, nullable=False, server_default=false()),  # an organizer ended the code (0009)
    # the columns of 0008 have the database's defaults (server_default): an insert that names only older columns still works
    Column(
        "banned", Boolean, nullable=False, server_default=false()
    ),  # refused at log-in, upload and API; off the board
    Column(
        "approved", Boolean, nullable=False, server_default=true()
    ),  # False: registered where [service] approval is on, waiting for an organizer
    Index("ix_teams_invitation", "invitation", unique=True),
    Index("ix_teams_contest_name", "contest", "name", unique=True),
)

users = Table(
    "users",
    metadata,
    Column("id", Integer, primary_key=True),
    Column("name", String(64), nullable=False, unique=True),
    Column("admin", Boolean, nullable=False, default=False),  # the site's administrator: an organizer of every contest
    Column("password_hash", String(256), nullable=False),
    Column("created", UTCDateTime, nullable=False),
    Column("email", String(254), nullable=True),  # where notifications go (None: no mail)
    Column(
        "email_confirmed", Boolean, nullable=False, default=False
    ),  # mail other than its confirmation goes only to a confirmed address
    Column(
        "email_check", String(64), nullable=True
    ),  # the SHA-256 of the address's confirmation token, until it is confirmed
    Column(
        "mail_off", String(256), nullable=False, default=""
    ),  # the kinds of notification turned off, comma separated (podium.service.mail.KINDS)
    Column("banned", Boolean, nullable=False, server_default=false()),  # refused at log-in and on every request (0008)
)

# names differing only in case are one name (migration 0009): users over the server, teams within their contest
Index("ix_users_name_lower", func.lower(users.c.name), unique=True)
Index("ix_teams_contest_name_lower", teams.c.contest, func.lower(teams.c.name), unique=True)

memberships = Table(  # a user's team in a contest: at most one per contest
    "memberships",
    metadata,
    Column("id", Integer, primary_key=True),
    Column("user_id", Integer, ForeignKey("users.id"), nullable=False),
    Column("team_id", Integer, ForeignKey("teams.id"), nullable=False),
    Column(
        "contest", String(64), nullable=False
    ),  # the team's, repeated so that the database enforces one team per contest
    UniqueConstraint("user_id", "contest", name="uq_memberships_user_contest"),
    Index("ix_memberships_team_id", "team_id"),
)

organizers = Table(  # who organizes which contest (a site administrator, users.admin, organizes every one)
    "organizers",
    metadata,
    Column("user_id", Integer, ForeignKey("users.id"), primary_key=True),
    Column("contest", String(64), primary_key=True),
)

tokens = Table(
    "tokens",
    metadata,
    Column("id", Integer, primary_key=True),
    Column("digest", String(64), nullable=False, unique=True),  # SHA-256 of the token; the token itself is never stored
    Column("team_id", Integer, ForeignKey("teams.id"), nullable=True),
    Column("organizer", Boolean, nullable=False, default=False),
    Column("label", String(128), nullable=False),
    Column("created", UTCDateTime, nullable=False),
    Column("expires", UTCDateTime, nullable=True),  # None: until revoked; a web session's ends SESSION after its log-in
    Column(
        "user_id", Integer, ForeignKey("users.id"), nullable=True
    ),  # the user whose log-in made it (None: made by a command)
    Column("session", Boolean, nullable=False, default=False),  # a web page session: a cookie, never an API token
    Column(
        "contest", String(64), nullable=True
    ),  # the contest it serves: its team's, or an organizer's (None: the whole site, an administrator's)
)

attempts = Table(  # log-ins and registrations lately tried, per client address (podium.service.limiter); older rows are deleted
    "attempts",
    metadata,
    Column("id", Integer, primary_key=True),
    Column("kind", String(16), nullable=False),  # login | register | reset
    Column("address", String(64), nullable=False),
    Column("user", String(64), nullable=False),
    Column("at", UTCDateTime, nullable=False),
    Index("ix_attempts_kind_address_at", "kind", "address", "at"),
    Index("ix_attempts_at", "at"),
)

submissions = Table(
    "submissions",
    metadata,
    Column("id", Integer, primary_key=True),
    Column("team_id", Integer, ForeignKey("teams.id"), nullable=False),
    Column("phase", String(64), nullable=False),
    Column(
        "track", String(64), nullable=False
    ),  # the contest's track: a [[track]]'s id, or the contest's own when it has none
    Column("kind", String(16), nullable=False),  # files | programs
    Column("filename", String(255), nullable=False),
    Column("size", Integer, nullable=False),
    Column("sha256", String(64), nullable=False),
    Column("target", String(1024), nullable=False),  # what is scored or run, relative to the submission's folder
    Column("entry", String(255), nullable=True),  # programs: the entry point in the target folder, or docker:IMAGE
    Column("created", UTCDateTime, nullable=False),
    Column("status", String(16), nullable=False),
    Column("reason", Text, nullable=True),  # why it was rejected or failed, in one line
    Column("problems", JSON, nullable=True),  # the checks' warnings and errors: [{code, message, file, line}]
    Column("started", UTCDateTime, nullable=True),
    Column("finished", UTCDateTime, nullable=True),
    Column("selected", Boolean, nullable=False, default=False),
    Column("method", String(100), nullable=True),  # the team's name for its method (migration 0007)
    Column("description", Text, nullable=True),  # plain text, at most podium.service.methods.MAX_DESCRIPTION characters
    Column("paper_url", String(500), nullable=True),  # http(s) only
    Column("code_url", String(500), nullable=True),
    Column(
        "method_shown", Boolean, nullable=False, server_default=false()
    ),  # the team lets the board show it after the reveal
    Index("ix_submissions_team_created", "team_id", "created"),
    Index("ix_submissions_track_created", "track", "created"),  # the dashboard: per day, active teams (0008)
    Index("ix_submissions_track_finished", "track", "finished"),  # the dashboard: the last hour's waits and runs (0008)
    Index("ix_submissions_track_team_created", "track", "team_id", "created"),
)

jobs = Table(
    "jobs",
    metadata,
    Column("id", Integer, primary_key=True),
    Column("submission_id", Integer, ForeignKey("submissions.id"), nullable=False),
    Column("round", Integer, nullable=False),  # the scoring round: 1, then one more per rescore
    Column("state", String(16), nullable=False),
    Column("attempts", Integer, nullable=False, default=0),
    Column("lease", String(32), nullable=True),  # the holder's random lease id
    Column("lease_until", UTCDateTime, nullable=True),
    Column("worker", String(128), nullable=True),
    Column("error", Text, nullable=True),  # podium's own failure in the last attempt
    Column("created", UTCDateTime, nullable=False),
    Column(
        "notify", Boolean, nullable=False, server_default=false()
    ),  # an organizer's re-run: its result is mailed to the team as a first one is (a rescore's are not; 0008)
    UniqueConstraint("submission_id", "round", name="uq_jobs_submission_round"),
    Index("ix_jobs_state_id", "state", "id"),
)

results = Table(
    "results",
    metadata,
    Column("id", Integer, primary_key=True),
    Column("submission_id", Integer, ForeignKey("submissions.id"), nullable=False),
    Column("round", Integer, nullable=False),
    Column("status", String(16), nullable=False),  # the result document's: scored | rejected
    Column("public_scores", JSON, nullable=False),  # the public split's (the whole test set's without a split)
    Column("private_scores", JSON, nullable=False),  # the private split's (the whole test set's without a split)
    Column("document", JSON, nullable=False),  # the full result document, signature included
    Column("public_document", JSON, nullable=False),  # what the team sees before the reveal
    Column("created", UTCDateTime, nullable=False),
    UniqueConstraint("submission_id", "round", name="uq_results_submission_round"),  # scoring is idempotent
)

resets = (
    Table(  # one-time password-reset links (podium.service.resets): the SHA-256 of the link's token, never the token
        "resets",
        metadata,
        Column("id", Integer, primary_key=True),
        Column("digest", String(64), nullable=False, unique=True),
        Column("user_id", Integer, ForeignKey("users.id"), nullable=False),
        Column("created", UTCDateTime, nullable=False),
        Column("expires", UTCDateTime, nullable=False),
    )
)

outbox = Table(  # e-mail waiting to be sent, or sent (podium.service.mail): written in the transaction of its event, sent by the mailer
    "outbox",
    metadata,
    Column("id", Integer, primary_key=True),
    Column("user_id", Integer, ForeignKey("users.id"), nullable=True),
    Column("address", String(254), nullable=False),
    Column("kind", String(16), nullable=False),
    Column("subject", String(256), nullable=False),
    Column("body", Text, nullable=False),
    Column("created", UTCDateTime, nullable=False),
    Column("tries", Integer, nullable=False, default=0),
    Column("next_try", UTCDateTime, nullable=False),
    Column("sent", UTCDateTime, nullable=True),
    Column("error", Text, nullable=True),  # the last failure to send
    Index("ix_outbox_sent_next_try", "sent", "next_try"),
)

announcements = (
    Table(  # what organizers post on the contest page, newest first (Markdown, rendered with HTML off; 0008)
        "announcements",
        metadata,
        Column("id", Integer, primary_key=True),
        Column("contest", String(64), nullable=False),  # the contest's id: each contest its own announcements
        Column("text", Text, nullable=False),
        Column("author", String(64), nullable=True),  # the organizer's user name (None: a command)
        Column("created", UTCDateTime, nullable=False),
        Index("ix_announcements_contest_created", "contest", "created"),
    )
)
