"""A submission's method: its name, a description, links to its paper and code, and whether the board may show it.

Given with the upload (the API's query, the page's form, ``podium submit
--method``) or later (``PUT /api/submissions/N/method``, the report page's
form) by the submission's team, until its phase ends. The description is plain
text (shown escaped, line breaks kept: no Markdown, so nothing in it is ever
markup); links are ``http`` or ``https`` only. Before the reveal only the team
sees it; after it, the board shows the method of each team's ranked
submission if the team chose so (``shown``).
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any
from urllib.parse import urlsplit

from sqlalchemy import Connection, select, update

from podium.contest import Contest
from podium.service import accounts
from podium.service.intake import Refused
from podium.service.tables import MAX_ID, submissions

MAX_METHOD = 100
MAX_DESCRIPTION = 4000
MAX_URL = 500
METHOD_COLUMNS = ("method", "description", "paper_url", "code_url", "method_shown")


@dataclass(frozen=True)
class Method:
    """What a team says of a submission's method; every field may be empty."""

    method: str | None = None
    description: str | None = None
    paper_url: str | None = None
    code_url: str | None = None
    method_shown: bool = False

    def columns(self) -> dict[str, Any]:
        """The submission's columns (:data:`podium.service.tables.submissions`)."""
        return dict(self.__dict__)


def checked(method: str | None, description: str | None, paper: str | None, code: str | None, shown: bool) -> Method:
    """The fields, trimmed and checked: a :class:`Refused` (422) naming the first one that is too long or not a web link."""
    name = " ".join((method or "").split()) or None  # one line: no control character, no run of spaces
    if name is not None and len(name) > MAX_METHOD:
        raise Refused(422, f"the method's name has {len(name)} characters; at most {MAX_METHOD}")
    text = (description or "").replace("\r\n", "\n").strip() or None
    if text is not None and len(text) > MAX_DESCRIPTION:
        raise Refused(422, f"the description has {len(text):,} characters; at most {MAX_DESCRIPTION:,}")
    if text is not None and any(ord(c) < 32 and c not in "\n\t" for c in text):
        raise Refused(422, "the description holds a control character; write plain text")
    return Method(name, text, _link("paper", paper), _link("code", code), bool(shown))


def _link(what: str, url: str | None) -> str | None:
    url = (url or "").strip()
    if not url:
        return None
    if len(url) > MAX_URL:
        raise Refused(422, f"the {what} link has {len(url)} characters; at most {MAX_URL}")
    try:
        parts = urlsplit(url)
    except ValueError:
        parts = None
    if parts is None or parts.scheme not in ("http", "https") or not parts.netloc or any(c.isspace() for c in url):
        raise Refused(422, f"the {what} link {url[:80]!r} is not an http:// or https:// address")
    return url


def describe(
    connection: Connection,
    contest: Contest,
    team_id: int,
    submission_id: int,
    method: Method,
    now: datetime,
    user: int | None = None,
) -> None:
    """Set the method of the team's submission (404 for another's), until the submission's phase ends (409 after).

    The team's row is held first (:func:`~podium.service.accounts.lock_team`): a team banned, or ``user`` (the caller,
    when a user) banned or out of the team since their form was read, is refused (403)."""
    refused = accounts.lock_team(connection, team_id, user)
    if refused is not None:
        raise Refused(403, refused)
    row = (
        None
        if not 0 < submission_id <= MAX_ID
        else connection.execute(
            select(submissions.c.phase).where(submissions.c.id == submission_id, submissions.c.team_id == team_id)
        ).first()
    )
    if row is None:
        raise Refused(404, f"no submission {submission_id} of yours")
    end = next((p.end for p in contest.phases if p.name == row.phase), contest.phases[-1].end)
    if now >= end:
        raise Refused(409, f"phase {row.phase} ended at {end.isoformat()}; its submissions' methods are final")
    connection.execute(update(submissions).where(submissions.c.id == submission_id).values(**method.columns()))


def method_view(row: Any) -> dict[str, Any]:
    """The method's fields of a submission's row (or a :class:`Method`), as the API and the pages show them."""
    return {
        "method": row.method,
        "description": row.description,
        "paper_url": row.paper_url,
        "code_url": row.code_url,
        "shown": bool(row.method_shown),
    }
