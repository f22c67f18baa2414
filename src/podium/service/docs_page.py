"""The API's documentation page, made from the OpenAPI description on the server: no script, no CDN, works offline."""

from __future__ import annotations

from functools import cache
from typing import Any

from jinja2 import Environment, PackageLoader, select_autoescape


@cache
def _environment() -> Environment:
    return Environment(loader=PackageLoader("podium.service", "templates"), autoescape=select_autoescape(["html"]))


def render(openapi: dict[str, Any]) -> str:
    template = _environment().get_template("docs.html")
    return template.render(info=openapi["info"], paths=openapi.get("paths", {}), schemas=openapi.get("components", {}).get("schemas", {}))
