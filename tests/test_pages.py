"""The service's pages over HTTP (no browser): sessions that expire, CSRF, the log-in limit, who sees what."""

from __future__ import annotations

import http.client
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import timedelta
from http.cookies import SimpleCookie
from pathlib import Path
from urllib.parse import urlsplit

from podium.service import accounts
from podium.service.database import writing
from podium.service.limiter import BUDGETS, LOGIN
from podium.service.pages import COOKIE, LOGIN_COOKIE
from service_helpers import Clock, LiveServer, at, set_up, write_contest


class Client:
    """HTTP to the live server, keeping the session cookie, following no redirect."""

    def __init__(self, url: str) -> None:
        self.netloc = urlsplit(url).netloc
        self.cookies: dict[str, str] = {}
        self.body = b""

    def call(self, method: str, path: str, content: bytes | str = b"", headers: dict[str, str] | None = None) -> int:
        connection = http.client.HTTPConnection(self.netloc, timeout=30)
        sent = dict(headers or {})
        if self.cookies:
            sent["Cookie"] = "; ".join(f"{k}={v}" for k, v in self.cookies.items())
        connection.request(method, path, body=content if isinstance(content, bytes) else content.encode(), headers=sent)
        response = connection.getresponse()
        self.body = response.read()  # the last answer's
        for header in response.headers.get_all("set-cookie") or []:
            for name, morsel in SimpleCookie(header).items():
                if morsel.value and morsel["max-age"] != "0":
                    self.cookies[name] = morsel.value
                else:
                    self.cookies.pop(name, None)
        connection.close()
        return response.status

    def get(self, path: str) -> int:
        return self.call("GET", path)

    def post(self, path: str, content: bytes | str = b"", headers: dict[str, str] | None = None) -> int:
        return self.call("POST", path, content, headers)


@contextmanager
def _client(tmp_path: Path) -> Iterator[tuple[Client, Clock]]:
    contest = write_contest(tmp_path / "contest")
    clock = Clock(at("2026-03-10T12:00:00Z"))
    service, _ = set_up(f"sqlite:///{tmp_path / 'podium.db'}", contest, tmp_path / "data", ("alpha", "beta"), clock)
    with writing(service.engine) as connection:
        accounts.add_user(connection, "ann", "ann-password-1", 1, False, clock())
    with LiveServer(service) as live:
        yield Client(live.url), clock


def _log_in(client: Client, user: str = "ann", password: str = "ann-password-1") -> int:
    """The log-in page, then its form sent with the form's token."""
    assert client.get("/login") == 200
    form = f"user={user}&password={password}&next=/submissions&login_csrf={client.cookies[LOGIN_COOKIE]}"
    return client.post("/login", form, {"Content-Type": "application/x-www-form-urlencoded"})


def test_sessions_expire_and_forms_need_their_token(tmp_path: Path) -> None:
    with _client(tmp_path) as (client, clock):
        _sessions(client, clock)


def _sessions(client: Client, clock: Clock) -> None:
    assert client.get("/submissions") == 303  # to the log-in page
    assert _log_in(client, password="wrong") == 401
    assert _log_in(client) == 303
    cookie = client.cookies[COOKIE]
    assert client.get("/submissions") == 200
    assert client.get("/organizer") == 403  # a team member is no organizer
    form = {"Content-Type": "application/x-www-form-urlencoded"}
    assert client.post("/logout", "csrf=forged", form) == 403
    assert client.post("/submissions/upload?filename=a.txt", b"x") == 403  # no CSRF header
    clock.now += accounts.SESSION - timedelta(seconds=1)
    assert client.get("/submissions") == 200
    clock.now += timedelta(seconds=2)
    assert client.get("/submissions") == 303  # expired
    clock.now -= timedelta(seconds=2)
    assert client.post("/logout", f"csrf={accounts.csrf_token(cookie)}", form) == 303
    client.cookies[COOKIE] = cookie
    assert client.get("/submissions") == 303  # ended with the log-out


def test_log_ins_are_limited(tmp_path: Path) -> None:
    with _client(tmp_path) as (client, _):
        tries = BUDGETS[LOGIN].per_user
        codes = [_log_in(client, password="wrong") for _ in range(tries)]
        assert codes == [401] * tries
        assert _log_in(client) == 429  # even the right password, until the window has passed


def test_static_files_are_named(tmp_path: Path) -> None:
    with _client(tmp_path) as (client, _):
        assert client.get("/static/htmx.min.js") == 200
        assert client.get("/static/vega-lite.min.js") == 200
        assert client.get("/static/..%2Fpages.py") == 404
        assert client.get("/static/contest.toml") == 404
