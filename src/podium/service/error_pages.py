"""Errors as a browser or an API client expects them: an HTML page with the site's navigation, or JSON.

A request for a page (any path outside the API's, ``/api/...``, ``/healthz``
and ``/openapi.json``) that ends in an error (403, 404, 422, a 500 of podium's own)
gets ``error.html``; the API, and a page's script that accepts JSON and not
HTML (the upload's live status), keep FastAPI's JSON ``{"detail": ...}``. A
redirect raised as an exception (303 to the log-in page) stays a redirect.
A 500's page says nothing of the failure: the traceback goes to the server's
log only (Starlette raises the exception again once the page is sent).
"""

from __future__ import annotations

import logging
from http import HTTPStatus

from fastapi import FastAPI, Request
from fastapi.exception_handlers import http_exception_handler, request_validation_exception_handler
from fastapi.exceptions import RequestValidationError
from fastapi.responses import PlainTextResponse, Response
from starlette.exceptions import HTTPException
from starlette.requests import ClientDisconnect

from podium.service.deps import Service
from podium.service.pages import render_page, render_site_page
from podium.service.urls import route_path

API_PATHS = ("/api/", "/healthz", "/openapi.json")
log = logging.getLogger("podium.service")


def is_page(request: Request) -> bool:
    """Whether ``request`` asks for a page (HTML errors) rather than JSON: an API path, or a script that accepts JSON and not HTML."""
    accept = request.headers.get("accept", "")
    return not route_path(request.scope).startswith(API_PATHS) and not (
        "application/json" in accept and "text/html" not in accept
    )


def error_page(service: Service, request: Request, code: int, detail: str) -> Response:
    """``error.html`` for ``code``, or plain text if even the page cannot be drawn (the contest file is gone)."""
    title = HTTPStatus(code).phrase if code in HTTPStatus._value2member_map_ else "Error"
    try:
        return render_page(service, request, "error.html", code=code, status=code, title=title, detail=detail)
    except HTTPException:  # the address names a contest this server does not serve (/c/NAME/...): the site's page
        return render_site_page(request, "error.html", code, code=code, status=code, title=title, detail=detail)
    except Exception:  # the page itself failed: say so plainly, never with a traceback
        log.exception("the error page for %s could not be drawn", request.url.path)
        return PlainTextResponse(f"{code} {title}", status_code=code)


async def http_error(request: Request, exc: Exception) -> Response:
    """An error a route raised: ``error.html`` for a page, FastAPI's JSON for the API; a redirect stays one."""
    assert isinstance(exc, HTTPException)
    if exc.status_code < 400 or not is_page(request):
        return await http_exception_handler(request, exc)
    response = error_page(request.app.state.service, request, exc.status_code, str(exc.detail))
    response.headers.update({k: v for k, v in (exc.headers or {}).items() if k.lower() != "content-type"})
    return response


async def invalid(request: Request, exc: Exception) -> Response:
    """A page's address that does not parse (``/submissions/abc``) names no page: 404; a bad query: 422; the API keeps FastAPI's JSON."""
    assert isinstance(exc, RequestValidationError)
    if not is_page(request):
        return await request_validation_exception_handler(request, exc)
    if any(error.get("loc", ("",))[0] == "path" for error in exc.errors()):
        return error_page(request.app.state.service, request, 404, f"there is no page {request.url.path}")
    return error_page(
        request.app.state.service,
        request,
        422,
        "this page's address has a value it cannot take; follow a link of the site",
    )


async def crash(request: Request, exc: Exception) -> Response:
    """A failure of podium's own: a page that says nothing of it, or plain text (Starlette raises it again after the answer: the server logs it)."""
    if not is_page(request):
        return PlainTextResponse("Internal Server Error", status_code=500)
    return error_page(
        request.app.state.service,
        request,
        500,
        "podium failed on this page; the organizers can read why in the server's log",
    )


async def gone(request: Request, exc: Exception) -> Response:
    """The client went away while its body was read (a form, an upload): nobody reads the answer, and it is no failure
    of podium's to log with a traceback."""
    return Response(status_code=400)


def install(app: FastAPI) -> None:
    """Answer errors of pages with ``error.html``, of the API with JSON; a client gone mid-body with nothing."""
    app.add_exception_handler(ClientDisconnect, gone)
    app.add_exception_handler(HTTPException, http_error)
    app.add_exception_handler(RequestValidationError, invalid)
    app.add_exception_handler(Exception, crash)
