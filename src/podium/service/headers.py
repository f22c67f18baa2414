"""Security headers on every answer of ``podium serve``.

Pages may load scripts, styles and images from the site itself only, and
may not run text as code (no ``'unsafe-eval'``: Vega's chart expressions are
interpreted by the vendored vega-interpreter, not compiled with ``Function``)
nor inline styles (no ``'unsafe-inline'``: every style is in the site's
stylesheets, htmx's indicator styles are off by the pages' ``htmx-config``,
Vega draws its SVG without a ``style`` attribute), may not be framed, and
send no referrer to other sites.
Nothing but the static files may be cached: pages and API answers hold
scores, submissions or a session's form token. The public board (the API's,
and the pages of a visitor not logged in) may be kept but is asked for again
each time (``no-cache`` with an ``ETag``: :mod:`podium.service.conditional`).
"""

from __future__ import annotations

from starlette.types import ASGIApp, Message, Receive, Scope, Send

CSP = (
    "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; "
    "object-src 'none'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'"
)
HEADERS = {
    b"content-security-policy": CSP.encode(),
    b"x-frame-options": b"DENY",
    b"x-content-type-options": b"nosniff",
    b"referrer-policy": b"same-origin",
}


class SecurityHeaders:
    """ASGI middleware: adds :data:`HEADERS`, and ``Cache-Control: no-store`` where the app set no ``Cache-Control``."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return

        async def send_with_headers(message: Message) -> None:
            if message["type"] == "http.response.start":
                headers = list(message.get("headers", []))
                present = {name.lower() for name, _ in headers}
                headers += [(name, value) for name, value in HEADERS.items() if name not in present]
                if b"cache-control" not in present:
                    headers.append((b"cache-control", b"no-store"))
                message = {**message, "headers": headers}
            await send(message)

        await self.app(scope, receive, send_with_headers)
