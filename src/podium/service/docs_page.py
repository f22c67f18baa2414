"""The API's documentation page, made from the OpenAPI description on the server: no script, no CDN, works offline."""

from __future__ import annotations

from functools import cache
from typing import Any

from jinja2 import Environment, PackageLoader, select_autoescape
from starlette.requests import Request

from podium.service.urls import template_url


@cache
def _environment() -> Environment:
    environment = Environment(
        loader=PackageLoader("podium.service", "templates"), autoescape=select_autoescape(["html"])
    )
    environment.globals["url"] = template_url
    return environment


def render(openapi: dict[str, Any], request: Request) -> str:
    """The page for ``request``: links under its root path, the paths shown under the public URL (the document's first server), else the site's."""
    servers = openapi.get("servers") or [{"url": str(request.base_url).rstrip("/")}]
    template = _environment().get_template("docs.html")
    return template.render(
        info=openapi["info"],
        paths=openapi.get("paths", {}),
        schemas=openapi.get("components", {}).get("schemas", {}),
        server=servers[0]["url"],
        root_path=request.scope.get("root_path", ""),
    )
