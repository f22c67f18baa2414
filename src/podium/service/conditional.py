"""Answers a client may keep and ask for again: a strong ``ETag``, ``Cache-Control: no-cache``, ``304 Not Modified``.

The board (``/api/leaderboard``) and the leaderboard pages an anonymous visitor
gets are the same bytes for everyone until the board changes; a browser
polling the board's table, or a script polling the API, that sends the
``ETag`` back in ``If-None-Match`` gets an empty ``304`` while nothing changed.
``no-cache`` lets a browser or proxy keep the answer but never use it
without asking; ``Vary: Cookie`` keeps a proxy from giving an anonymous page
to a logged-in visitor (whose page names their team and is never kept).
"""

from __future__ import annotations

from starlette.requests import Request
from starlette.responses import Response


def matches(if_none_match: str | None, etag: str) -> bool:
    """Whether ``If-None-Match`` names ``etag`` (a list, ``*``, weak ``W/`` forms compared weakly, as RFC 9110 says)."""
    if not if_none_match:
        return False
    tags = [tag.strip().removeprefix("W/") for tag in if_none_match.split(",")]
    return "*" in tags or etag in tags


def kept_response(request: Request, body: bytes, etag: str, media_type: str) -> Response:
    """``body`` with its ``etag``, or ``304`` with no body when the request's ``If-None-Match`` holds it."""
    headers = {"ETag": etag, "Cache-Control": "no-cache", "Vary": "Cookie"}
    if matches(request.headers.get("if-none-match"), etag):
        return Response(status_code=304, headers=headers)
    return Response(body, media_type=media_type, headers=headers)
