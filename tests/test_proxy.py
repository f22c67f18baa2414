"""docs/deployment.md's recipe run for real: nginx with a self-signed certificate in front of ``podium serve`` under ``/contest/``.

The nginx configuration is the one the page gives (read from it, its
certificate paths and ports changed); nginx runs unprivileged from a prefix
folder in a temporary directory, podium serves with ``--public-url`` and
``--trusted-proxy 127.0.0.1`` as the page says. Chromium (Playwright) walks
every page as a team and as an organizer, following every link and sending
every form, logs in, uploads and sees the board, and no request of the
browser leaves ``/contest/``; ``podium submit``, ``status`` and
``leaderboard`` work through the proxy, trusting its certificate by
``SSL_CERT_FILE``. Skipped without nginx (failed in CI).
"""

from __future__ import annotations

import http.client
import json
import os
import re
import shutil
import socket
import ssl
import subprocess
import sys
import time
import urllib.request
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import pytest

from browser_wait import wait_until
from conftest import require
from podium.service import accounts
from podium.service.client import packed
from podium.service.database import database_url, writing
from podium.service.pages import COOKIE
from service_helpers import Clock, set_up, write_contest
from test_pages_browser import browser  # noqa: F401  (the fixture: Debian's Chromium)

DEPLOYMENT = Path(__file__).parent.parent / "docs" / "deployment.md"
PREFIX = "/contest/"
START_S = 90  # podium serve and nginx starting on a loaded machine
WALK_PAGES = 80  # a bound on the pages one walk opens


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def recipe() -> str:
    """The nginx configuration of docs/deployment.md (its one ``nginx`` block)."""
    blocks = re.findall(r"```nginx\n(.*?)```", DEPLOYMENT.read_text(), re.DOTALL)
    assert len(blocks) == 1, "docs/deployment.md gives one nginx block"
    return str(blocks[0])


def nginx_conf(folder: Path, port: int, http_port: int, upstream: int, certificate: Path, key: Path) -> str:
    """The recipe on this machine's ports and certificate, in a configuration nginx runs unprivileged from ``folder``."""
    site = recipe()
    for said, here in {
        "listen 443 ssl;": f"listen 127.0.0.1:{port} ssl;",
        "listen 80;": f"listen 127.0.0.1:{http_port};",
        "/etc/letsencrypt/live/example.org/fullchain.pem": str(certificate),
        "/etc/letsencrypt/live/example.org/privkey.pem": str(key),
        "proxy_pass http://127.0.0.1:8000/;": f"proxy_pass http://127.0.0.1:{upstream}/;",
    }.items():
        assert site.count(said) == 1, f"docs/deployment.md's nginx block no longer says {said!r} once"
        site = site.replace(said, here)
    temporary = "\n".join(
        f"    {kind}_temp_path {folder / kind};" for kind in ("client_body", "proxy", "fastcgi", "uwsgi", "scgi")
    )
    user = (
        "user root;\n" if os.geteuid() == 0 else ""
    )  # run as root, nginx's workers would be nobody, who cannot write in ``folder``
    return (
        f"{user}daemon off;\nworker_processes 1;\npid {folder / 'nginx.pid'};\nerror_log {folder / 'error.log'} warn;\n"
        f"events {{ worker_connections 256; }}\nhttp {{\n    access_log {folder / 'access.log'};\n{temporary}\n{site}}}\n"
    )


def certificate(folder: Path) -> tuple[Path, Path]:
    """A self-signed certificate for 127.0.0.1, made by openssl as the page says."""
    key, cert = folder / "key.pem", folder / "cert.pem"
    subprocess.run(
        [
            "openssl",
            "req",
            "-x509",
            "-newkey",
            "rsa:2048",
            "-nodes",
            "-days",
            "2",
            "-subj",
            "/CN=127.0.0.1",
            "-addext",
            "subjectAltName=IP:127.0.0.1",
            "-keyout",
            str(key),
            "-out",
            str(cert),
        ],
        check=True,
        capture_output=True,
        timeout=60,
    )
    return cert, key


def _wait(port: int, process: subprocess.Popen[bytes], what: str, output: Path) -> None:
    """Until ``process`` listens on ``port`` of 127.0.0.1, bounded; its ``output`` if it ended."""
    deadline = time.monotonic() + START_S
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise AssertionError(f"{what} ended ({process.returncode}): {output.read_text()[-3000:]}")
        try:
            socket.create_connection(("127.0.0.1", port), timeout=5).close()
            return
        except OSError:
            time.sleep(0.2)
    raise AssertionError(f"{what} did not listen on port {port} within {START_S} s")


def _stop(process: subprocess.Popen[bytes]) -> None:
    process.terminate()
    try:
        process.wait(timeout=30)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait(timeout=30)


@dataclass(frozen=True)
class Deployed:
    url: str  # https://127.0.0.1:PORT/contest
    http_port: int  # nginx's port 80, which sends browsers to https
    certificate: Path
    token: str
    submission: Path


@pytest.fixture(scope="module")
def deployed(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Deployed]:
    nginx = shutil.which("nginx") or shutil.which("/usr/sbin/nginx")
    require("nginx", None if nginx else "nginx is missing (Debian package nginx; make test installs it as root)")
    assert nginx is not None
    require("openssl", None if shutil.which("openssl") else "openssl is missing (Debian package openssl)")
    folder = tmp_path_factory.mktemp("proxy")
    contest = write_contest(folder / "contest", quota="per_day = 10")
    contest.write_text(
        contest.read_text().replace("end = 2026-06-01T00:00:00Z", "end = 2099-01-01T00:00:00Z")
    )  # open now, on the real clock
    data = folder / "data"
    data.mkdir()
    service, tokens = set_up(database_url(None, data), contest, data, ("alpha",), Clock(datetime.now(UTC)))
    with writing(service.engine) as connection:
        accounts.add_user(connection, "ann", "ann-password-1", 1, False, service.clock())
        accounts.add_user(connection, "org", "org-password-1", None, True, service.clock())
    service.engine.dispose()
    cert, key = certificate(folder)
    port, http_port, upstream = _free_port(), _free_port(), _free_port()
    url = f"https://127.0.0.1:{port}{PREFIX.rstrip('/')}"
    assert f"--public-url https://example.org{PREFIX} --trusted-proxy 127.0.0.1" in DEPLOYMENT.read_text()
    (folder / "nginx").mkdir()
    (folder / "nginx" / "nginx.conf").write_text(nginx_conf(folder / "nginx", port, http_port, upstream, cert, key))
    with (folder / "serve.log").open("wb") as serve_log, (folder / "nginx.log").open("wb") as nginx_log:
        serve = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "podium",
                "serve",
                "--contest",
                str(contest),
                "--data",
                str(data),
                "--port",
                str(upstream),
                "--workers",
                "1",
                "--public-url",
                url + "/",
                "--trusted-proxy",
                "127.0.0.1",
            ],
            stdout=serve_log,
            stderr=subprocess.STDOUT,
            env={**os.environ, "NO_COLOR": "1"},
        )
        proxy = subprocess.Popen(
            [
                nginx,
                "-p",
                str(folder / "nginx"),
                "-c",
                str(folder / "nginx" / "nginx.conf"),
                "-e",
                str(folder / "nginx" / "error.log"),
            ],
            stdout=nginx_log,
            stderr=subprocess.STDOUT,
        )
        try:
            _wait(upstream, serve, "podium serve", folder / "serve.log")
            _wait(port, proxy, "nginx", folder / "nginx.log")
            banner = (folder / "serve.log").read_text()
            assert f"at {url}/ " in banner and f"leaderboard --server {url}\n" in banner, (
                banner
            )  # the addresses it prints are the public ones
            assert f"podium listens on http://127.0.0.1:{upstream}; the proxy at {url}/ passes" in banner, banner
            yield Deployed(url, http_port, cert, tokens["alpha"], contest.parent / "demo" / "submission")
        finally:
            _stop(proxy)
            _stop(serve)


def _podium(deployed: Deployed, *arguments: str, trusted: bool = True) -> tuple[int, str]:
    """A client command of podium through the proxy (trusting its certificate by ``SSL_CERT_FILE``, or not): exit code and output."""
    environment = {k: v for k, v in os.environ.items() if k not in ("SSL_CERT_FILE", "SSL_CERT_DIR")} | {
        "NO_COLOR": "1",
        "COLUMNS": "200",
    }
    if trusted:
        environment["SSL_CERT_FILE"] = str(deployed.certificate)
    done = subprocess.run(
        [sys.executable, "-m", "podium", *arguments], capture_output=True, text=True, timeout=300, env=environment
    )
    return done.returncode, done.stdout + done.stderr


def test_podium_submit_status_and_leaderboard_through_the_proxy(deployed: Deployed) -> None:
    code, said = _podium(
        deployed,
        "submit",
        "--server",
        deployed.url,
        "--token",
        deployed.token,
        str(deployed.submission),
        "--wait",
        "120",
    )
    assert code == 0 and "scored" in said, said
    code, said = _podium(deployed, "status", "--server", deployed.url, "--token", deployed.token)
    assert code == 0 and "scored" in said, said
    code, said = _podium(deployed, "leaderboard", "--server", deployed.url)
    assert code == 0 and "alpha" in said, said
    code, said = _podium(deployed, "leaderboard", "--server", deployed.url, trusted=False)
    assert (
        code != 0
        and "certificate verify failed" in said
        and "name it in SSL_CERT_FILE" in said
        and "Traceback" not in said
    ), said


def test_the_documents_and_port_80_through_the_proxy(deployed: Deployed) -> None:
    trusting = ssl.create_default_context(cafile=str(deployed.certificate))
    with urllib.request.urlopen(deployed.url + "/openapi.json", context=trusting, timeout=30) as answer:
        assert json.load(answer)["servers"][0]["url"] == deployed.url
    secured = http.client.HTTPSConnection(urlsplit(deployed.url).netloc, timeout=30, context=trusting)
    secured.request("GET", PREFIX.rstrip("/"))  # the prefix without its slash: nginx sends the browser to the contest
    answer = secured.getresponse()
    assert (answer.status, answer.headers["location"]) == (301, deployed.url + "/")
    secured.close()
    plain = http.client.HTTPConnection("127.0.0.1", deployed.http_port, timeout=30)
    plain.request("GET", PREFIX)
    answer = plain.getresponse()
    assert (
        answer.status == 301
        and answer.headers["location"].startswith("https://127.0.0.1")
        and answer.headers["location"].endswith(PREFIX)
    )
    plain.close()


def _at(path: str) -> Callable[[str], bool]:
    """Whether a URL is the page ``path`` (whatever its query)."""
    return lambda url: urlsplit(url).path == path


class Walk:
    """A browser context that records every request and every failed answer; ``pages`` follows every link from a start."""

    def __init__(self, chromium: Any, deployed: Deployed) -> None:
        self.context = chromium.new_context(ignore_https_errors=True)
        self.requests: list[str] = []
        self.failures: list[str] = []
        self.context.on("request", lambda sent: self.requests.append(sent.url))
        self.context.on(
            "response", lambda got: self.failures.append(f"{got.status} {got.url}") if got.status >= 400 else None
        )
        self.page = self.context.new_page()
        self.origin = urlsplit(deployed.url).netloc
        self.url = deployed.url

    def outside(self, target: str) -> bool:
        parts = urlsplit(target)
        return parts.scheme != "data" and (parts.netloc != self.origin or not parts.path.startswith(PREFIX))

    def log_in(self, user: str, then: str) -> None:
        self.page.goto(f"{self.url}{then}")  # the site sends the browser to its log-in page, under the prefix
        self.page.wait_for_url(_at(PREFIX + "login"))
        self.page.fill("#user", user)
        self.page.fill("#password", f"{user}-password-1")
        self.page.click("form.stack button")
        self.page.wait_for_url(_at(PREFIX.rstrip("/") + then))

    def pages(self, *starts: str) -> int:
        """Open every page reachable by links from ``starts`` (bounded); each link, form and htmx address checked to stay under the prefix."""
        todo, seen = [self.url + start for start in starts], set()
        while todo:
            url = todo.pop(0).split("#")[0]
            if url in seen:
                continue
            seen.add(url)
            assert len(seen) <= WALK_PAGES, f"more than {WALK_PAGES} pages from {starts}"
            answer = self.page.goto(url)
            assert answer is not None and answer.status == 200, (url, answer and answer.status)
            links = self.page.eval_on_selector_all("a[href]:not([download])", "els => els.map(e => e.href)")
            downloads = self.page.eval_on_selector_all("a[href][download]", "els => els.map(e => e.href)")
            for target in downloads:  # a file, not a page: fetched with the page's cookies, through the proxy
                if target not in seen and not self.outside(target):
                    seen.add(target)
                    assert self.page.context.request.get(target).status == 200, target
            # a field named "action" would hide the form's own (DOM clobbering): the page must not name one so
            sent = self.page.eval_on_selector_all(
                "form", "els => els.map(e => typeof e.action === 'string' ? e.action : 'data:clobbered')"
            )
            assert "data:clobbered" not in sent, (url, "a form field named action hides its form's action")
            fetched = self.page.eval_on_selector_all(
                "[hx-get]", "els => els.map(e => new URL(e.getAttribute('hx-get'), document.baseURI).href)"
            )
            assert not [t for t in links + downloads + sent + fetched if self.outside(t)], (
                url,
                [t for t in links + downloads + sent + fetched if self.outside(t)],
            )
            todo += links + fetched
        return len(seen)

    def send(self, action: str, then: str) -> None:
        """Send the page's form whose action ends in ``action``; the browser lands on the page ``then`` (a path of the site)."""
        self.page.click(f"form[action$='{action}'] button")
        self.page.wait_for_url(_at(PREFIX.rstrip("/") + then))

    def close(self) -> None:
        self.context.close()
        assert not [u for u in self.requests if self.outside(u)], [u for u in self.requests if self.outside(u)]
        assert not self.failures, self.failures


def test_a_team_and_an_organizer_in_chromium_stay_under_the_prefix(
    browser: Any,  # noqa: F811 (the fixture)
    deployed: Deployed,
    tmp_path: Path,
) -> None:
    anonymous = Walk(browser, deployed)
    assert anonymous.pages("/") >= 4  # the contest, the leaderboard, the log-in page, the API's documentation
    anonymous.close()

    team = Walk(browser, deployed)
    team.log_in("ann", "/submissions")
    session = next(c for c in team.context.cookies() if c["name"] == COOKIE)
    assert (session["secure"], session["path"], session["httpOnly"]) == (True, PREFIX, True)
    team.page.set_input_files("#file", str(packed(deployed.submission, tmp_path)))
    team.page.click("#upload button")
    wait_until(team.page, "document.getElementById('upload-result').className === 'done'", timeout=30_000)
    team.page.wait_for_selector(
        "#rows td.st-scored", timeout=120_000
    )  # scored by podium serve's worker, the rows live through htmx
    team.page.goto(deployed.url + "/leaderboard")
    assert "alpha" in team.page.inner_text("table.board")
    assert team.pages("/", "/submissions") >= 6  # and the report of the submission, its sortings, the board's
    team.page.goto(deployed.url + "/submissions")
    team.send("/logout", "/")
    team.close()

    organizer = Walk(browser, deployed)
    organizer.log_in("org", "/organizer")
    assert organizer.pages("/organizer") >= 5
    organizer.page.goto(deployed.url + "/organizer")
    organizer.send("/organizer/rescore", "/organizer")
    assert "queued again" in organizer.page.inner_text("main")
    organizer.send("/organizer/reveal", "/organizer")
    assert "revealed" in organizer.page.inner_text("main")
    organizer.send("/logout", "/")
    organizer.close()
