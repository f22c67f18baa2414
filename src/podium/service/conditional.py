"""Answers a client may keep and ask for again: a strong ``ETag``, ``Cache-Control: no-cache``, ``304 Not Modified``.

The board (``/api/leaderboard``) and the leaderboard pages an anonymous visitor
gets are the same bytes for everyone until the board changes; a browser
polling the board's table, or a script polling the API, that sends the
``ETag`` back in ``If-None-Match`` gets an empty ``304`` while nothing changed.
``no-cache`` lets a browser or proxy keep the answer but never use it
without asking; ``Vary: Cookie`` keeps a proxy from giving an anonymous page
to a logged-in visitor (whose page names their team and is never kept).

A client that takes gzip (``Accept-Encoding``; every browser does) gets the
same bytes compressed, once per board (:func:`gzipped`): a page of 30 teams
goes from 7.3 to 1.0 KB, their API board from 4.8 to 0.4 KB, for no work per
request beyond the headers. The compressed answer has an ETag of its own (``"...-gzip"``), as a
strong validator names one representation.
"""

from __future__ import annotations

import functools
import gzip

from starlette.requests import Request
from starlette.responses import Response

GZIP_MIN = 1024  # bytes: a smaller body is sent as it is


def matches(if_none_match: str | None, etag: str) -> bool:
    """Whether ``If-None-Match`` names ``etag`` (a list, ``*``, weak ``W/`` forms compared weakly, as RFC 9110 says)."""
    if not if_none_match:
        return False
    tags = [tag.strip().removeprefix("W/") for tag in if_none_match.split(",")]
    return "*" in tags or etag in tags


def accepts_gzip(accept_encoding: str | None) -> bool:
    """Whether ``Accept-Encoding`` takes gzip: named with a weight above 0, else ``*`` so (RFC 9110, 12.5.3: ``*`` stands
    for the codings not named, so ``*, gzip;q=0`` refuses gzip)."""
    weights: dict[str, bool] = {}
    for part in (accept_encoding or "").split(","):
        coding, _, weight = part.partition(";")
        name, _, value = weight.strip().partition("=")
        try:
            weights.setdefault(coding.strip().lower(), name.strip().lower() != "q" or float(value) > 0)
        except ValueError:
            weights.setdefault(coding.strip().lower(), False)
    return weights.get("gzip", weights.get("*", False))


@functools.lru_cache(maxsize=64)
def gzipped(body: bytes) -> bytes:
    """``body`` compressed once (the bodies kept are the same ``bytes`` each request, their hash computed once)."""
    return gzip.compress(body, compresslevel=6, mtime=0)


def kept_response(request: Request, body: bytes, etag: str, media_type: str) -> Response:
    """``body`` with its ``etag`` (gzip'd, with an ETag of its own, when the client takes it and it is worth it),
    or ``304`` with no body when the request's ``If-None-Match`` holds that ETag."""
    headers = {"ETag": etag, "Cache-Control": "no-cache", "Vary": "Cookie, Accept-Encoding"}
    if len(body) >= GZIP_MIN and accepts_gzip(request.headers.get("accept-encoding")):
        body, etag = gzipped(body), f'{etag[:-1]}-gzip"'
        headers |= {"ETag": etag, "Content-Encoding": "gzip"}
    if matches(request.headers.get("if-none-match"), etag):
        return Response(status_code=304, headers=headers)
    return Response(body, media_type=media_type, headers=headers)
