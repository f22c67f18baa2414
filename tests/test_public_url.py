"""The service under a path prefix (``podium serve --public-url https://HOST/contest/``), on real uvicorn with its ``root_path``.

uvicorn puts the root path in front of every request's path, as it does
behind a proxy that strips the prefix: every link, form, script, htmx URL
and redirect of the pages must stay under ``/contest/``, cookies must carry
``Path=/contest/`` and ``Secure``, and the API must take uploads and answer
JSON there. The same, through nginx and a browser: ``tests/test_proxy.py``.
"""

from __future__ import annotations

import http.client
from collections.abc import Iterator
from html.parser import HTMLParser
from http.cookies import SimpleCookie
from pathlib import Path
from urllib.parse import urljoin, urlsplit

import pytest

from podium.core.errors import UsageError
from podium.service import accounts
from podium.service.bodies import SMALL_BODY
from podium.service.database import writing
from podium.service.pages import COOKIE, LOGIN_COOKIE
from podium.service.urls import parse_public_url
from service_helpers import Clock, LiveServer, at, demo_archive, set_up, write_contest

PUBLIC = "https://contest.example/contest/"
FORM = {"Content-Type": "application/x-www-form-urlencoded"}


class Links(HTMLParser):
    """Every address a page links to, loads or sends a form to."""

    ATTRIBUTES = ("href", "src", "action", "hx-get", "hx-post", "data-rows")

    def __init__(self) -> None:
        super().__init__()
        self.found: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.found += [value for name, value in attrs if name in self.ATTRIBUTES and value]


class Browser:
    """HTTP to the live server as a proxy passes it on (``/contest`` stripped), keeping cookies by name, following no redirect."""

    def __init__(self, live: LiveServer) -> None:
        self.netloc = urlsplit(live.url).netloc
        self.cookies: dict[str, str] = {}
        self.set_cookies: dict[str, SimpleCookie] = {}

    def call(
        self, method: str, path: str, body: bytes | str = b"", headers: dict[str, str] | None = None
    ) -> tuple[int, str, str]:
        """The status, the ``Location`` and the body."""
        connection = http.client.HTTPConnection(self.netloc, timeout=30)
        sent = {"Cookie": "; ".join(f"{k}={v}" for k, v in self.cookies.items())} if self.cookies else {}
        assert path.startswith("/contest/"), path
        connection.request(
            method,
            path.removeprefix("/contest"),
            body=body.encode() if isinstance(body, str) else body,
            headers=sent | (headers or {}),
        )
        response = connection.getresponse()
        text = response.read().decode("utf-8", "replace")
        for header in response.headers.get_all("set-cookie") or []:
            cookie = SimpleCookie(header)
            for name, morsel in cookie.items():
                self.set_cookies[name] = cookie
                if morsel.value and morsel["max-age"] != "0":
                    self.cookies[name] = morsel.value
                else:
                    self.cookies.pop(name, None)
        connection.close()
        return response.status, response.headers.get("location", ""), text

    def page(self, path: str) -> str:
        """The page at ``path`` (200), every address in it checked to stay under the prefix."""
        status, _, html = self.call("GET", path)
        assert status == 200, (path, status, html[:300])
        links = Links()
        links.feed(html)
        assert links.found, path
        for link in links.found:
            if link.startswith(("#", "data:")):
                continue
            assert urlsplit(urljoin("https://contest.example" + path, link)).path.startswith("/contest/"), (path, link)
        return html

    def log_in(self, user: str) -> None:
        self.page("/contest/login")
        form = f"user={user}&password={user}-password-1&next=/submissions&login_csrf={self.cookies[LOGIN_COOKIE]}"
        assert self.call("POST", "/contest/login", form, FORM)[:2] == (303, "/contest/submissions")


@pytest.fixture
def behind(tmp_path: Path) -> Iterator[tuple[LiveServer, str, Path]]:
    """The contest served under ``/contest`` with ``--public-url`` :data:`PUBLIC`; a team's token and the demo archive."""
    contest = write_contest(tmp_path / "contest")
    clock = Clock(at("2026-03-10T12:00:00Z"))
    service, tokens = set_up(f"sqlite:///{tmp_path / 'podium.db'}", contest, tmp_path / "data", ("alpha",), clock)
    service.public_url = parse_public_url(PUBLIC)
    with writing(service.engine) as connection:
        accounts.add_user(connection, "ann", "ann-password-1", 1, False, clock())
        accounts.add_user(connection, "org", "org-password-1", None, True, clock())
    with LiveServer(service, root_path="/contest") as live:
        yield live, tokens["alpha"], demo_archive(contest, tmp_path / "upload")


def test_every_page_link_redirect_and_cookie_stays_under_the_prefix(behind: tuple[LiveServer, str, Path]) -> None:
    live, token, archive = behind
    team = Browser(live)
    assert team.call("GET", "/contest/submissions")[:2] == (303, "/contest/login?next=/submissions")
    for path in ("/contest/", "/contest/leaderboard", "/contest/leaderboard/table", "/contest/docs"):
        team.page(path)
    team.log_in("ann")
    session = team.set_cookies[COOKIE][COOKIE]
    assert (session["path"], session["secure"], session["httponly"]) == ("/contest/", True, True)
    assert team.set_cookies[LOGIN_COOKIE][LOGIN_COOKIE]["path"] == "/contest/login"
    status, _, sent = team.call(
        "POST",
        "/contest/api/submissions?filename=submission.tar.gz",
        archive.read_bytes(),
        {"Authorization": f"Bearer {token}"},
    )
    assert status == 201, sent
    html = team.page("/contest/submissions")
    assert 'hx-get="/contest/submissions/rows"' in html and 'href="/contest/submissions/1"' in html
    team.page("/contest/submissions/rows")
    team.page("/contest/submissions/1")
    boundary = "podium-form"
    form = (
        f'--{boundary}\r\nContent-Disposition: form-data; name="csrf"\r\n\r\n{accounts.csrf_token(team.cookies[COOKIE])}\r\n'
        f'--{boundary}\r\nContent-Disposition: form-data; name="file"; filename="submission.tar.gz"\r\nContent-Type: application/gzip\r\n\r\n'
    ).encode()
    form += archive.read_bytes() + f"\r\n--{boundary}--\r\n".encode()
    sent_by_form = team.call(
        "POST", "/contest/submissions/upload", form, {"Content-Type": f"multipart/form-data; boundary={boundary}"}
    )
    assert sent_by_form[:2] == (303, "/contest/submissions?sent=2"), sent_by_form  # the form posted without JavaScript
    status, _, missing = team.call("GET", "/contest/no-such-page")
    assert status == 404 and 'href="/contest/leaderboard"' in missing
    csrf = accounts.csrf_token(team.cookies[COOKIE])
    assert team.call("POST", "/contest/logout", f"csrf={csrf}", FORM)[:2] == (303, "/contest/")
    assert team.set_cookies[COOKIE][COOKIE]["path"] == "/contest/" and COOKIE not in team.cookies

    organizer = Browser(live)
    organizer.log_in("org")
    organizer.page("/contest/organizer")
    csrf = accounts.csrf_token(organizer.cookies[COOKIE])
    status, location, _ = organizer.call("POST", "/contest/organizer/rescore", f"csrf={csrf}", FORM)
    assert status == 303 and location.startswith("/contest/organizer?done=")


def test_the_api_and_its_documents_under_the_prefix(behind: tuple[LiveServer, str, Path]) -> None:
    live, token, _ = behind
    client = Browser(live)
    status, _, document = client.call("GET", "/contest/openapi.json")
    assert status == 200 and '"servers":[{"url":"https://contest.example/contest"' in document
    docs = client.page("/contest/docs")
    assert 'href="/contest/openapi.json"' in docs and "podium submit --server https://contest.example/contest" in docs
    # an upload under the prefix is an upload (capped by upload_mb), not a small body (64 KiB)
    status, _, answer = client.call(
        "POST",
        "/contest/api/submissions?filename=big.bin",
        b"\0" * (SMALL_BODY + 1),
        {"Authorization": f"Bearer {token}"},
    )
    assert status == 422 and '"id":' in answer, answer
    status, _, answer = client.call("GET", "/contest/api/submissions/99", headers={"Authorization": f"Bearer {token}"})
    assert (status, answer) == (404, '{"detail":"no submission 99 of yours"}')  # JSON, not the error page


def test_a_log_in_from_the_public_origin_is_taken(behind: tuple[LiveServer, str, Path]) -> None:
    live, _, _ = behind
    client = Browser(live)
    client.page("/contest/login")
    form = f"user=ann&password=ann-password-1&next=/submissions&login_csrf={client.cookies[LOGIN_COOKIE]}"
    assert client.call("POST", "/contest/login", form, FORM | {"Origin": "https://elsewhere.example"})[0] == 403
    assert client.call("POST", "/contest/login", form, FORM | {"Origin": "https://contest.example"})[:2] == (
        303,
        "/contest/submissions",
    )


@pytest.mark.parametrize(
    ("text", "said"),
    [
        ("example.org/contest", "with its scheme and host"),
        ("ftp://example.org/", "with its scheme and host"),
        ("https://example.org/contest/?x=1", "no query, fragment or user name"),
        ("https://user:pw@example.org/", "no query, fragment or user name"),
        ("https://example.org:port/", "such as https://example.org/contest/"),
        ("https://example.org/a b/", "letters, digits and"),
        ("https://example.org/../x/", "letters, digits and"),
    ],
)
def test_a_public_url_that_is_not_one_is_named(text: str, said: str) -> None:
    with pytest.raises(UsageError, match="--public-url") as refused:
        parse_public_url(text)
    assert said in str(refused.value)


def test_a_public_url_is_scheme_host_and_prefix() -> None:
    assert parse_public_url("https://Example.org:8443/a/b/").base == "https://example.org:8443/a/b"
    assert parse_public_url("http://example.org").prefix == ""
    assert not parse_public_url("http://example.org/").secure
