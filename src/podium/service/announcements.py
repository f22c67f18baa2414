"""Announcements: what organizers post on the contest page, newest first, in Markdown rendered safely.

The text is CommonMark with raw HTML off: a ``<script>`` or a form in it is
shown as text, and markdown-it refuses ``javascript:``, ``vbscript:`` and
``data:`` links. An announcement is mailed to every user who keeps the
``news`` notification on (:data:`podium.service.mail.KINDS`) when the server
sends mail. An organizer can remove one.
"""

from __future__ import annotations

from datetime import datetime
from functools import cache
from typing import Any

from markdown_it import MarkdownIt
from sqlalchemy import Connection, delete, insert, select

from podium.core.errors import UsageError
from podium.service import mail
from podium.service.tables import announcements

MAX_TEXT = 20_000  # characters of one announcement
SHOWN = 20  # the newest shown on the contest page and in the API


@cache
def _markdown() -> MarkdownIt:
    return MarkdownIt("commonmark", {"html": False})


def html(text: str) -> str:
    """The announcement's Markdown as HTML, raw HTML escaped.

    >>> html("**Deadline** moved <script>alert(1)</script>")
    '<p><strong>Deadline</strong> moved &lt;script&gt;alert(1)&lt;/script&gt;</p>\\n'
    """
    return _markdown().render(text)


def post(connection: Connection, contest: str, text: str, author: str | None, now: datetime) -> dict[str, Any]:
    """Post an announcement of the contest ``contest`` (its id) and mail it (when mail is on); the announcement as :func:`newest` shows it."""
    text = text.strip()
    if not text:
        raise UsageError("the announcement is empty")
    if len(text) > MAX_TEXT:
        raise UsageError(f"the announcement has {len(text):,} characters; at most {MAX_TEXT:,}")
    values = {"contest": contest, "text": text, "author": author, "created": now}
    announcement_id = int(connection.execute(insert(announcements).values(**values)).inserted_primary_key[0])  # type: ignore[index]
    mail.news(connection, contest, text, now)
    return _shown(announcement_id, text, author, now)


def remove(connection: Connection, contest: str, announcement_id: int) -> bool:
    """Remove an announcement of ``contest``; whether there was one."""
    mine = (announcements.c.id == announcement_id, announcements.c.contest == contest)
    return connection.execute(delete(announcements).where(*mine)).rowcount > 0


def newest(connection: Connection, contest: str, limit: int = SHOWN) -> list[dict[str, Any]]:
    """The newest announcements of ``contest`` first, each with its HTML."""
    query = (
        select(announcements)
        .where(announcements.c.contest == contest)
        .order_by(announcements.c.created.desc(), announcements.c.id.desc())
        .limit(limit)
    )
    return [_shown(r.id, r.text, r.author, r.created) for r in connection.execute(query)]


def _shown(announcement_id: int, text: str, author: str | None, created: datetime) -> dict[str, Any]:
    return {"id": announcement_id, "text": text, "html": html(text), "author": author, "created": created.isoformat()}
