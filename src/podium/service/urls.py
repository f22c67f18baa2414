"""The site's addresses behind a reverse proxy: the public base URL, and every link, redirect and cookie path built from it.

``podium serve --public-url https://example.org/contest/`` (or
``PODIUM_PUBLIC_URL``) says where browsers and clients reach the contest: its
scheme, host and path prefix. The proxy strips the prefix and podium serves
under the ASGI ``root_path`` (uvicorn's ``--root-path``); every page link,
form action, asset, htmx URL and redirect is the root path plus the path in
the app, built by :func:`site_url` (the templates' ``url()``). Session cookies
carry ``Path=`` the prefix, and ``Secure`` when the public URL is https.

>>> public = parse_public_url("https://example.org/contest/")
>>> public.base, public.prefix, public.origin
('https://example.org/contest', '/contest', 'https://example.org')
>>> prefixed("/contest", "/static/pages.css")
'/contest/static/pages.css'
>>> route_path({"path": "/contest/leaderboard", "root_path": "/contest"})
'/leaderboard'
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit

import jinja2
from starlette.requests import HTTPConnection, Request
from starlette.types import Scope

from podium.core.errors import UsageError
from podium.service.proxies import is_https

_SEGMENT = re.compile(
    r"[A-Za-z0-9._~-]+"
)  # a path segment that needs no quoting anywhere: in HTML, in a cookie's Path, in nginx's location


@dataclass(frozen=True)
class PublicUrl:
    """Where the contest is reached: ``https://example.org/contest/`` is scheme ``https``, host ``example.org``, prefix ``/contest``."""

    scheme: str
    netloc: str
    prefix: str  # "" or "/a/b": no trailing slash

    @property
    def origin(self) -> str:
        return f"{self.scheme}://{self.netloc}"

    @property
    def base(self) -> str:
        """The URL the site's paths are appended to (no trailing slash): what ``podium submit --server`` takes."""
        return self.origin + self.prefix

    @property
    def secure(self) -> bool:
        return self.scheme == "https"


def parse_public_url(text: str) -> PublicUrl:
    """``http(s)://HOST[:PORT][/PREFIX/]``; a clear error for anything else (a query, a password, a path with odd characters)."""
    wrong = f"--public-url {text[:200]!r}: "
    try:
        parts = urlsplit(text.strip())
        parts.port  # noqa: B018  (raises on a port that is not a number)
    except ValueError:
        raise UsageError(wrong + "give the contest's address such as https://example.org/contest/") from None
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise UsageError(
            wrong + "give the contest's address with its scheme and host, such as https://example.org/contest/"
        )
    if parts.query or parts.fragment or parts.username is not None or parts.password is not None:
        raise UsageError(wrong + "give the address alone: no query, fragment or user name")
    segments = [s for s in parts.path.split("/") if s]
    if any(not _SEGMENT.fullmatch(s) or s in (".", "..") for s in segments):
        raise UsageError(wrong + "the path prefix may hold letters, digits and . _ ~ - between its slashes")
    return PublicUrl(parts.scheme, parts.netloc.lower(), "".join("/" + s for s in segments))


def prefixed(root_path: str, path: str) -> str:
    """The site's URL of ``path`` (an absolute path in the app, query allowed) under ``root_path``."""
    if not path.startswith("/"):
        raise ValueError(f"a path in the app starts with '/': {path!r}")
    return root_path.rstrip("/") + path


SITE_PATHS = (
    "/static/",
    "/login",
    "/logout",
    "/account",
    "/reset",
    "/docs",
    "/openapi.json",
    "/api/tokens",
)  # the site's own paths, one for every contest it serves: never under a contest's prefix


def contest_prefix(contest_id: str | None) -> str:
    """The prefix of a contest's pages, ``/c/ID``; ``""`` for the unprefixed ones (``None``: the request named no contest)."""
    return "" if contest_id is None else f"/c/{contest_id}"


def in_contest(contest_id: str | None, path: str) -> str:
    """``path`` of the app, in the contest ``contest_id`` (``None``: as it is): a contest's page goes under ``/c/ID``,
    the site's own paths (:data:`SITE_PATHS`) stay at the root.

    >>> in_contest("lsvrc", "/leaderboard?track=loc"), in_contest("lsvrc", "/"), in_contest("lsvrc", "/login?next=/")
    ('/c/lsvrc/leaderboard?track=loc', '/c/lsvrc/', '/login?next=/')
    """
    if contest_id is None or path.startswith(SITE_PATHS):
        return path
    return contest_prefix(contest_id) + path


def named_contest(request: HTTPConnection) -> str | None:
    """The contest the request's path names (``/c/ID/...``, ``/api/contests/ID/...``), else ``None``."""
    found = request.scope.get("path_params", {}).get("contest_id")
    return None if found is None else str(found)


def site_url(request: HTTPConnection, path: str) -> str:
    """The URL a browser follows to reach ``path`` of this app, in the request's contest: what route redirects send (``Location``)."""
    return prefixed(request.scope.get("root_path", ""), in_contest(named_contest(request), path))


def root_url(request: HTTPConnection, path: str) -> str:
    """The URL of ``path`` at the site's root, whatever contest the request is in (a cookie's ``Path``)."""
    return prefixed(request.scope.get("root_path", ""), path)


@jinja2.pass_context
def template_url(context: jinja2.runtime.Context, path: str) -> str:
    """The templates' ``url('/leaderboard')``: :func:`site_url` for the page being drawn (its ``root_path``, its contest)."""
    return prefixed(context.get("root_path", ""), in_contest(context.get("contest_id"), path))


@jinja2.pass_context
def template_contest_url(context: jinja2.runtime.Context, contest_id: str, path: str) -> str:
    """The templates' ``contest_url(ID, '/leaderboard')``: ``path`` in the contest ``contest_id`` (the home page's links)."""
    return prefixed(context.get("root_path", ""), in_contest(contest_id, path))


_PREFIXED = re.compile(r"^(?:/c/[^/]+|/api/contests/[^/]+(?=/))")


def unprefixed_path(scope: Scope) -> str:
    """The path in the app without its contest's prefix: ``/c/ID/submissions`` is ``/submissions``,
    ``/api/contests/ID/submissions`` is ``/api/submissions`` (what the middleware and the pages' navigation compare).

    >>> unprefixed_path({"path": "/api/contests/a/submissions"}), unprefixed_path({"path": "/c/a/"})
    ('/api/submissions', '/')
    """
    path = route_path(scope)
    found = _PREFIXED.match(path)
    if found is None:
        return path
    rest = path[found.end() :]
    return ("/api" + rest) if path.startswith("/api/") else (rest or "/")


def route_path(scope: Scope) -> str:
    """The path in the app: the request's path without the root path (uvicorn puts the root path in front of it)."""
    path, root = scope.get("path", ""), scope.get("root_path", "").rstrip("/")
    if root and (path == root or path.startswith(root + "/")):
        return path[len(root) :] or "/"
    return path


def secure(request: Request, service: Any) -> bool:
    """Whether cookies carry ``Secure``: the public URL is https, or this request came over https (directly or through a trusted proxy)."""
    public = service.public_url
    return (public is not None and public.secure) or is_https(request, service.proxies)


def same_origin(request: HTTPConnection, origin: str, public: PublicUrl | None) -> bool:
    """Whether a form's ``Origin`` is this site: the request's ``Host``, or the public URL's host."""
    netloc = urlsplit(origin).netloc.lower()
    return netloc == request.headers.get("host", "").lower() or (public is not None and netloc == public.netloc)


def openapi_settings(public: PublicUrl | None) -> dict[str, Any]:
    """FastAPI's ``servers``: the public URL, when there is one; else FastAPI names the root path."""
    if public is None:
        return {}
    return {"servers": [{"url": public.base, "description": "this contest"}], "root_path_in_servers": False}
