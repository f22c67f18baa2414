"""The service's logs: as text (the default), or one JSON object per line (``--log-format json``).

A JSON line holds ``time`` (UTC, ISO 8601), ``level``, ``logger``,
``message``, and what the record is about: ``request_id`` for everything
logged while a request is answered (uvicorn's access log included, with
``client``, ``method``, ``path`` and ``status``), ``job_id`` and
``submission_id`` for a worker's jobs, ``exception`` with the traceback. A
request's id is its ``X-Request-ID`` header when it sends a plain one (a proxy's),
else a new random one; the answer carries it back in ``X-Request-ID``.
"""

from __future__ import annotations

import json
import logging
import re
import sys
import uuid
from contextvars import ContextVar
from datetime import UTC, datetime
from typing import Any

from starlette.types import ASGIApp, Message, Receive, Scope, Send

FORMATS = ("text", "json")
REQUEST_ID: ContextVar[str | None] = ContextVar("podium_request_id", default=None)
PLAIN_ID = re.compile(r"[A-Za-z0-9._-]{1,64}")
ABOUT = ("job_id", "submission_id", "worker", "round")  # what a worker's records may carry, as ``extra``
ACCESS_FIELDS = ("client", "method", "path", "http_version", "status")  # uvicorn.access's arguments, in order


class JsonLines(logging.Formatter):
    """A record as one JSON object on one line."""

    def format(self, record: logging.LogRecord) -> str:
        line: dict[str, Any] = {
            "time": datetime.fromtimestamp(record.created, UTC).isoformat(timespec="milliseconds"),
            "level": record.levelname.lower(),
            "logger": record.name,
        }
        if (
            record.name == "uvicorn.access"
            and isinstance(record.args, tuple)
            and len(record.args) == len(ACCESS_FIELDS)
        ):
            line |= dict(zip(ACCESS_FIELDS, record.args, strict=True))
            line["message"] = f"{line['method']} {line['path']} {line['status']}"
        else:
            line["message"] = record.getMessage()
        request_id = REQUEST_ID.get()
        if request_id is not None:
            line["request_id"] = request_id
        line |= {key: getattr(record, key) for key in ABOUT if hasattr(record, key)}
        if record.exc_info:
            line["exception"] = self.formatException(record.exc_info)
        return json.dumps(line, default=str, ensure_ascii=False)


def configure(log_format: str) -> None:
    """In JSON, every record at INFO and above (podium's, uvicorn's, the libraries') to stderr as one line each.

    In text nothing is set up: warnings and errors reach stderr as their bare
    message (and traceback), as Python prints them by default.
    """
    if log_format == "json":
        handler = logging.StreamHandler(sys.stderr)
        handler.setFormatter(JsonLines())
        logging.basicConfig(level=logging.INFO, handlers=[handler], force=True)


def uvicorn_config(log_format: str) -> dict[str, Any]:
    """uvicorn's ``log_config`` and ``log_level``: in JSON, its records (the access log too) go to the root handler."""
    if log_format != "json":
        return {"log_level": "warning"}
    config = {
        "version": 1,
        "disable_existing_loggers": False,
        "loggers": {
            name: {"handlers": [], "propagate": True, "level": "INFO"}
            for name in ("uvicorn", "uvicorn.error", "uvicorn.access")
        },
    }
    return {"log_config": config, "log_level": "info"}


class RequestIds:
    """ASGI middleware: each request's id in :data:`REQUEST_ID` while it is answered, and in the answer's ``X-Request-ID``."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        given = dict(scope["headers"]).get(b"x-request-id", b"").decode("latin-1")
        request_id = given if PLAIN_ID.fullmatch(given) else uuid.uuid4().hex
        token = REQUEST_ID.set(request_id)

        async def tagged(message: Message) -> None:
            if message["type"] == "http.response.start":
                message["headers"] = [*message.get("headers", []), (b"x-request-id", request_id.encode())]
            await send(message)

        try:
            await self.app(scope, receive, tagged)
        finally:
            REQUEST_ID.reset(token)
