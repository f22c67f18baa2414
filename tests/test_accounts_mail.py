"""Sign-up, invitation codes, password change and reset links through the API; e-mail notifications sent to a real SMTP server.

The SMTP server is aiosmtpd's, started on 127.0.0.1 in the test: what it
receives is what a mail server would get. The outbox is drained by
:func:`podium.service.mail.drain` step by step, as the mailer thread does.
"""

from __future__ import annotations

import http.cookiejar
import json
import logging
import shutil
import socket
import ssl
import subprocess
import time
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Iterator
from datetime import timedelta
from email import message_from_bytes
from pathlib import Path
from typing import Any

import pytest
from aiosmtpd.controller import Controller
from aiosmtpd.smtp import AuthResult

from conftest import require
from podium.core.errors import UsageError
from podium.service import accounts, mail, state
from podium.service.client import packed
from podium.service.database import connect, reading, writing
from podium.service.rescore import rescore
from podium.service.tables import outbox
from podium.service.urls import parse_public_url
from podium.service.worker import Worker
from served import Serve, podium
from service_helpers import Clock, LiveServer, at, set_up, write_contest

PASSWORD = "correct horse battery"


class Inbox:
    """What the SMTP server received: (recipients, message) pairs."""

    def __init__(self) -> None:
        self.received: list[tuple[list[str], Any]] = []

    async def handle_DATA(self, server: object, session: object, envelope: Any) -> str:
        self.received.append((list(envelope.rcpt_tos), message_from_bytes(envelope.content)))
        return "250 OK"

    def take(self) -> list[tuple[str, str, str]]:
        """(recipient, subject, body) of every message received since the last take, sorted."""
        got = sorted((",".join(to), m["Subject"], m.get_payload(decode=True).decode()) for to, m in self.received)
        self.received.clear()
        return got


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


class Server:
    """aiosmtpd's SMTP server on a loopback port, which a test can stop and start again."""

    def __init__(self, inbox: Inbox) -> None:
        self.inbox, self.port = inbox, _free_port()
        self.running: Controller | None = None

    def start(self) -> None:
        self.running = Controller(self.inbox, hostname="127.0.0.1", port=self.port)
        self.running.start()

    def stop(self) -> None:
        if self.running is not None:
            self.running.stop()
            self.running = None


@pytest.fixture
def smtp() -> Iterator[tuple[mail.Smtp, Inbox, Server]]:
    inbox = Inbox()
    server = Server(inbox)
    server.start()
    try:
        yield mail.Smtp("127.0.0.1", server.port, "contest@podium.test", timeout_s=5), inbox, server
    finally:
        server.stop()


def _user(
    service: Any,
    name: str,
    team: str | None,
    email: str | None,
    off: frozenset[str] = frozenset(),
    confirmed: bool = True,
) -> None:
    with writing(service.engine) as connection:
        team_id = None if team is None else accounts.team_id(connection, team)
        user_id = accounts.add_user(connection, name, PASSWORD, team_id, team is None, service.clock())
        mail.set_mail(connection, user_id, email, set(off), confirmed=confirmed)


def test_notifications_reach_the_team_only_each_kind_as_chosen_and_survive_a_server_down(
    smtp: Any, database_url: str, tmp_path: Path, caplog: Any
) -> None:
    settings, inbox, server = smtp
    contest = write_contest(tmp_path / "contest")
    clock = Clock(at("2026-02-28T23:00:00Z"))  # before the phase opens
    service, token = set_up(database_url, contest, tmp_path / "data", ("alpha", "beta"), clock)
    _user(service, "ann", "alpha", "ann@alpha.test")
    _user(service, "abe", "alpha", "abe@alpha.test", {"scored"})
    _user(service, "bea", "beta", "bea@beta.test", {"revealed"})
    _user(service, "olga", None, "olga@org.test")
    _user(service, "noa", "beta", None)
    _user(service, "amy", "alpha", "amy@alpha.test", confirmed=False)  # an address not confirmed gets nothing
    with writing(service.engine) as connection:  # before mail is turned on, an event writes nothing
        assert mail.announce(connection, service.contests.get(), clock()) == 0
    mailer = mail.Mailer(
        service.engine, settings, "https://contest.test", service.contests, clock
    )  # turns mail on; driven by hand here
    drain = lambda: mail.drain(service.engine, settings, "https://contest.test", clock)

    def announce() -> int:
        with writing(service.engine) as connection:
            return mail.announce(connection, service.contests.get(), clock())

    assert announce() == 0 and drain() == 0 and inbox.take() == []
    clock.now = at("2026-03-01T00:10:00Z")  # the phase opens: everyone with an address hears it, once
    assert announce() == 4 and announce() == 0 and drain() == 4
    assert [(to, subject) for to, subject, _ in inbox.take()] == [
        (f"{who}", "first is open") for who in ("abe@alpha.test", "ann@alpha.test", "bea@beta.test", "olga@org.test")
    ]

    demo = contest.parent / "demo"
    worker = Worker(service.engine, service.data, clock=clock)
    with LiveServer(service) as live:
        sent = live.call(
            "POST",
            "/api/submissions",
            token["alpha"],
            body=packed(demo / "submission", tmp_path).read_bytes(),
            query={"filename": "good.tar.gz"},
        )
        assert sent.status == 201 and drain() == 0  # queued: nothing yet
        assert worker.work_once()
        bad = live.call(
            "POST", "/api/submissions", token["beta"], body=b"not a png", query={"filename": "testA_1_seg.png"}
        )
        assert bad.status == 422
    assert drain() == 2
    got = inbox.take()
    assert [(to, subject) for to, subject, _ in got] == [
        ("ann@alpha.test", f"Submission {sent.body['id']} is scored"),
        ("bea@beta.test", f"Submission {bad.body['id']} was rejected"),
    ]
    assert (
        f"https://contest.test/submissions/{sent.body['id']}" in got[0][2]
        and "Public scores:" in got[0][2]
        and "beta" not in got[0][2]
    )
    assert "alpha" not in got[1][2] and "Why: " in got[1][2]

    server.stop()  # the SMTP server is down: the message waits, the failure is logged, and it is sent once the server is back
    with writing(service.engine) as connection:
        state.put(connection, state.REVEALED, clock().isoformat(), state.only_contest(connection))
    assert announce() == 3
    with caplog.at_level(logging.WARNING, "podium.mail"):
        assert drain() == 0
    assert "not sent (try 1 of 5)" in caplog.text
    clock.now += timedelta(seconds=59)
    assert drain() == 0  # not due yet: the next try is a minute later
    server.start()
    clock.now += timedelta(seconds=2)
    assert drain() == 3
    assert [(to, subject) for to, subject, _ in inbox.take()] == [
        (who, "The final results are revealed") for who in ("abe@alpha.test", "ann@alpha.test", "olga@org.test")
    ]
    with reading(service.engine) as connection:
        assert mail.pending(connection) == []

    rescore(service.engine)  # round 2: the rescored submission mails no one, a new one scored in round 2 mails its team
    with LiveServer(service) as live:
        later = live.call(
            "POST",
            "/api/submissions",
            token["alpha"],
            body=packed(demo / "submission", tmp_path).read_bytes(),
            query={"filename": "later.tar.gz"},
        )
    while worker.work_once():
        pass
    assert drain() == 1 and [(to, subject) for to, subject, _ in inbox.take()] == [
        ("ann@alpha.test", f"Submission {later.body['id']} is scored")
    ]
    del mailer


def test_a_send_that_keeps_failing_is_given_up_after_max_tries(tmp_path: Path, caplog: Any) -> None:
    contest = write_contest(tmp_path / "contest")
    clock = Clock(at("2026-03-10T12:00:00Z"))
    service, _ = set_up(f"sqlite:///{tmp_path / 'db.sqlite3'}", contest, tmp_path / "data", ("alpha",), clock)
    _user(service, "ann", "alpha", "ann@alpha.test")
    nowhere = mail.Smtp("127.0.0.1", _free_port(), "contest@podium.test", timeout_s=2)  # nothing listens there
    mail.Mailer(service.engine, nowhere, "http://x", service.contests, clock)
    with writing(service.engine) as connection:
        assert (
            mail.announce(connection, service.contests.get(), clock()) == 0
        )  # the phase opened days ago: not announced now
        state.put(connection, state.REVEALED, clock().isoformat(), state.only_contest(connection))
        assert mail.announce(connection, service.contests.get(), clock()) == 1
    with caplog.at_level(logging.WARNING, "podium.mail"):
        for _ in range(mail.MAX_TRIES + 2):
            assert mail.drain(service.engine, nowhere, "http://x", clock) == 0
            clock.now += timedelta(hours=1)
    assert "gave up after 5 tries" in caplog.text and caplog.text.count("not sent") == mail.MAX_TRIES
    with reading(service.engine) as connection:
        row = connection.execute(outbox.select()).one()
    assert row.tries == mail.MAX_TRIES and row.sent is None and row.error
    clock.now += mail.KEEP
    mail.drain(service.engine, nowhere, "http://x", clock)
    with reading(service.engine) as connection:
        assert connection.execute(outbox.select()).first() is None  # kept 30 days, then deleted


def test_sign_up_join_by_invitation_change_and_reset_passwords(smtp: Any, tmp_path: Path) -> None:
    settings, inbox, _ = smtp
    contest = write_contest(tmp_path / "contest")
    clock = Clock(at("2026-03-10T12:00:00Z"))
    service, _ = set_up(f"sqlite:///{tmp_path / 'db.sqlite3'}", contest, tmp_path / "data", (), clock)
    _user(service, "olga", None, None)
    mail.Mailer(service.engine, settings, "https://contest.test", service.contests, clock)
    with LiveServer(service) as live:
        new = live.call(
            "POST",
            "/api/register",
            json_body={"team": "gamma", "user": "gil", "password": PASSWORD, "email": "gil@gamma.test"},
        )
        assert new.status == 201 and new.body["team"] == "gamma"
        gil = new.body["token"]
        assert live.call("GET", "/api/account", gil).body == {
            "user": "gil",
            "team": "gamma",
            "email": "gil@gamma.test",
            "email_confirmed": False,
            "notifications": dict.fromkeys(mail.KINDS, True),
        }
        off = live.call(
            "PUT", "/api/account", gil, json_body={"notifications": {"phase": False}}
        )  # the address again: a new confirmation link
        assert (
            off.status == 200 and off.body["notifications"]["phase"] is False and off.body["email"] == "gil@gamma.test"
        )
        assert live.call("PUT", "/api/account", gil, json_body={"email": "not an address"}).status == 422
        assert mail.drain(service.engine, settings, "https://contest.test", clock) == 2
        links = [
            (to, body.split("https://contest.test/account/confirm/", 1)[1].split()[0]) for to, _, body in inbox.take()
        ]
        assert [to for to, _ in links] == ["gil@gamma.test"] * 2
        confirmed = sorted(
            live.call("POST", "/api/account/confirm", json_body={"token": token}).status for _, token in links
        )
        assert confirmed == [200, 404]  # the newer link confirms; the first was replaced by it
        assert live.call("GET", "/api/account", gil).body["email_confirmed"] is True
        assert live.call("POST", "/api/account/confirm", json_body={"token": links[0][1]}).status == 404  # spent
        code = live.call("GET", "/api/team/invitation", gil).body["invitation"]
        assert live.call("GET", "/api/team/invitation", gil).body["invitation"] == code

        # a teammate joins by the code; a wrong code, or a team and a code at once, are refused
        assert (
            live.call(
                "POST", "/api/register", json_body={"invitation": "x" * 20, "user": "gus", "password": PASSWORD}
            ).status
            == 404
        )
        assert (
            live.call(
                "POST",
                "/api/register",
                json_body={"team": "t", "invitation": code, "user": "gus", "password": PASSWORD},
            ).status
            == 422
        )
        joined = live.call("POST", "/api/register", json_body={"invitation": code, "user": "gus", "password": PASSWORD})
        assert joined.status == 201 and joined.body["team"] == "gamma"
        renewed = live.call("POST", "/api/team/invitation", joined.body["token"]).body["invitation"]
        assert renewed != code
        assert (
            live.call(
                "POST", "/api/register", json_body={"invitation": code, "user": "gwen", "password": PASSWORD}
            ).status
            == 404
        )

        # password change: the current one is checked; every token ends; the new one logs in
        assert (
            live.call(
                "POST",
                "/api/account/password",
                gil,
                json_body={"current": "wrong password!", "password": "a new long secret"},
            ).status
            == 401
        )
        changed = live.call(
            "POST", "/api/account/password", gil, json_body={"current": PASSWORD, "password": "a new long secret"}
        )
        assert changed.status == 200 and live.call("GET", "/api/account", gil).status == 401
        assert live.call("GET", "/api/account", changed.body["token"]).status == 200

        # an organizer's reset link: once, for an hour; only organizers make one
        assert live.call("POST", "/api/users/gil/reset", changed.body["token"]).status == 403
        olga = live.call("POST", "/api/tokens", json_body={"user": "olga", "password": PASSWORD}).body["token"]
        assert live.call("POST", "/api/users/nobody/reset", olga).status == 404
        link = live.call("POST", "/api/users/gil/reset", olga).body
        assert link["expires_in_s"] == 3600 and link["link"].startswith(live.url + "/reset/")
        secret = link["link"].rsplit("/", 1)[1]
        assert live.call("POST", "/api/reset", json_body={"token": secret, "password": "short"}).status == 422
        assert live.call("POST", "/api/reset", json_body={"token": secret, "password": "reset by olga 1"}).status == 200
        assert (
            live.call("POST", "/api/reset", json_body={"token": secret, "password": "reset by olga 2"}).status == 404
        )  # used
        assert live.call("GET", "/api/account", changed.body["token"]).status == 401  # the reset ended gil's tokens
        late = live.call("POST", "/api/users/gil/reset", olga).body["link"].rsplit("/", 1)[1]
        clock.now += timedelta(hours=1, seconds=1)
        assert live.call("POST", "/api/reset", json_body={"token": late, "password": "too late for it"}).status == 404
        assert live.call("GET", f"/reset/{late}").status == 404

        # a reset link by mail: the same answer for a user without an address, or none; the link works
        for name in ("gil", "gus", "nobody"):
            assert live.call("POST", "/api/reset/request", json_body={"user": name}).status == 202
        assert mail.drain(service.engine, settings, "https://contest.test", clock) == 1
        [(to, subject, body)] = inbox.take()
        assert to == "gil@gamma.test" and subject == "Your password-reset link"
        mailed = body.split("https://contest.test/reset/", 1)[1].split()[0]
        assert live.call("POST", "/api/reset", json_body={"token": mailed, "password": "reset by mail 1"}).status == 200
        assert live.call("POST", "/api/tokens", json_body={"user": "gil", "password": "reset by mail 1"}).status == 201
        limited = [live.call("POST", "/api/reset/request", json_body={"user": "gil"}).status for _ in range(3)]
        assert limited[-1] == 429  # three requests for one name per hour and address

        service.public_url = parse_public_url(
            "https://contest.example/c/"
        )  # behind a proxy: the link is the one users reach
        assert (
            live.call("POST", "/api/users/gil/reset", olga).body["link"].startswith("https://contest.example/c/reset/")
        )

        assert {
            "/api/register",
            "/api/account",
            "/api/account/password",
            "/api/team/invitation",
            "/api/users/{name}/reset",
            "/api/reset",
            "/api/reset/request",
            "/api/account/confirm",
        } <= set(live.call("GET", "/openapi.json").body["paths"])


def with_terms(tmp_path: Path, terms: str) -> tuple[Path, Any, Clock]:
    """A contest open to sign-up whose terms are ``terms`` (Markdown in terms.md beside it), served from a new database: the contest file, the service, its clock."""
    contest = write_contest(tmp_path / "contest")
    (contest.parent / "terms.md").write_text(terms)
    contest.write_text(
        contest.read_text().replace("self_registration = true", 'self_registration = true\nterms = "terms.md"')
    )
    clock = Clock(at("2026-03-10T12:00:00Z"))
    service, _ = set_up(f"sqlite:///{tmp_path / 'db.sqlite3'}", contest, tmp_path / "data", (), clock)
    return contest, service, clock


def test_the_terms_page_is_markdown_without_html(tmp_path: Path) -> None:
    _, service, _ = with_terms(
        tmp_path, "# Rules\n\nBe *fair*.\n\n<script>alert(1)</script>\n\n[click](javascript:alert(1))\n"
    )
    with LiveServer(service) as live:
        page = live.call("GET", "/terms").body
        register = live.call("GET", "/register").body
    assert "<h2>Rules</h2>" in page and page.count("<h1") == 1  # a heading of the terms is below the page's title
    assert "<em>fair</em>" in page
    assert "<script>alert" not in page and "&lt;script&gt;" in page and 'href="javascript' not in page
    assert 'name="terms"' in register and "the contest's terms" in register


def test_podium_serve_mails_through_smtp_and_the_commands_make_links_and_codes(smtp: Any, tmp_path: Path) -> None:
    settings, inbox, _ = smtp
    contest = write_contest(tmp_path / "contest", timezone="UTC")
    contest.write_text(
        contest.read_text().replace("2026-06-01T00:00:00Z", "2036-06-01T00:00:00Z")
    )  # open now, for the real clock
    data = tmp_path / "data"
    assert podium("team", "add", "alpha", "--contest", str(contest), "--data", str(data)).returncode == 0
    bad = podium(
        "user",
        "add",
        "ann",
        "--team",
        "alpha",
        "--email",
        "ann at alpha",
        "--password-stdin",
        "--data",
        str(data),
        stdin=PASSWORD + "\n",
    )
    assert (
        bad.returncode == 2
        and "'ann at alpha' is not an e-mail address" in bad.stderr
        and "Traceback" not in bad.stderr
    )
    added = podium(
        "user",
        "add",
        "ann",
        "--team",
        "alpha",
        "--email",
        "ann@alpha.test",
        "--password-stdin",
        "--data",
        str(data),
        stdin=PASSWORD + "\n",
    )
    assert added.returncode == 0, added.stderr
    code = podium("team", "invitation", "alpha", "--data", str(data)).stdout.strip()
    assert len(code) == 20 and podium("team", "invitation", "alpha", "--data", str(data)).stdout.strip() == code
    assert podium("team", "invitation", "alpha", "--renew", "--data", str(data)).stdout.strip() != code
    unknown = podium("user", "reset", "nobody", "--data", str(data))
    assert unknown.returncode == 2 and "no user 'nobody'" in unknown.stderr
    for wrong, said in (
        (("--smtp", "nohost"), "give HOST:PORT"),
        (("--smtp", f"127.0.0.1:{settings.port}"), "needs --mail-from"),
        (  # mailed links would name the address listened on, which nobody else reaches
            ("--host", "0.0.0.0", "--smtp", f"127.0.0.1:{settings.port}", "--mail-from", "contest@podium.test"),
            "give --public-url URL",
        ),
    ):
        refused = podium("serve", "--contest", str(contest), "--data", str(data), *wrong)
        assert refused.returncode == 2 and said in refused.stderr and "Traceback" not in refused.stderr
    with Serve(
        contest, data, None, "--smtp", f"127.0.0.1:{settings.port}", "--mail-from", "contest@podium.test", workers=0
    ) as served:
        link = podium("user", "reset", "ann", "--public-url", served.url, "--data", str(data)).stdout.strip()
        assert link.startswith(served.url + "/reset/")
        assert (
            served.call(
                "POST", "/api/reset", json_body={"token": link.rsplit("/", 1)[1], "password": "reset by a command"}
            ).status
            == 200
        )
        assert served.call("POST", "/api/reset/request", json_body={"user": "ann"}).status == 202
        for _ in range(100):  # bounded: 20 s for the mailer thread's round
            if inbox.received:
                break
            time.sleep(0.2)
        [(to, subject, body)] = inbox.take()
        ann = served.call("POST", "/api/tokens", json_body={"user": "ann", "password": "reset by a command"}).body[
            "token"
        ]
        client = ("--server", served.url, "--token", ann)
        changed = podium("account", *client, "--email", "ann@new.test", "--notify", "phase=off", "--json")
        assert changed.returncode == 0, changed.stderr
        shown = json.loads(changed.stdout)
        assert (
            shown["email"] == "ann@new.test"
            and shown["notifications"]["phase"] is False
            and shown["notifications"]["scored"] is True
        )
        renewed = podium("account", *client, "--renew-invitation")
        assert (
            renewed.returncode == 0
            and "of team alpha; mail to ann@new.test" in renewed.stdout
            and shown["invitation"] not in renewed.stdout
        )
        for wrong, said in (
            (("--notify", "phase"), "give KIND=on or KIND=off"),
            (("--email", "nope"), "'nope' is not an e-mail address"),
        ):
            refused = podium("account", *client, *wrong)
            assert refused.returncode == 2 and said in refused.stderr and "Traceback" not in refused.stderr
    assert to == "ann@alpha.test" and subject == "Your password-reset link" and f"{served.url}/reset/" in body


def test_starttls_and_log_in_to_the_smtp_server(tmp_path: Path, caplog: Any) -> None:
    """aiosmtpd requiring STARTTLS and a log-in, with a certificate made for the test; a wrong password is logged, not raised."""
    require("openssl", None if shutil.which("openssl") else "the openssl command is missing (Debian package openssl)")
    key, cert = tmp_path / "key.pem", tmp_path / "cert.pem"
    subprocess.run(
        [
            "openssl",
            "req",
            "-x509",
            "-newkey",
            "rsa:2048",
            "-nodes",
            "-keyout",
            str(key),
            "-out",
            str(cert),
            "-days",
            "1",
            "-subj",
            "/CN=127.0.0.1",
            "-addext",
            "subjectAltName=IP:127.0.0.1",
        ],
        check=True,
        capture_output=True,
        timeout=60,
    )
    tls = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    tls.load_cert_chain(cert, key)
    inbox = Inbox()
    login = lambda server, session, envelope, mechanism, auth: AuthResult(
        success=(auth.login, auth.password) == (b"podium", b"s3cret")
    )
    controller = Controller(
        inbox,
        hostname="127.0.0.1",
        port=_free_port(),
        tls_context=tls,
        require_starttls=True,
        auth_required=True,
        authenticator=login,
    )
    controller.start()
    try:
        contest = write_contest(tmp_path / "contest")
        clock = Clock(at("2026-03-10T12:00:00Z"))
        service, _ = set_up(f"sqlite:///{tmp_path / 'db.sqlite3'}", contest, tmp_path / "data", ("alpha",), clock)
        _user(service, "ann", "alpha", "ann@alpha.test")
        plain = mail.Smtp(
            "127.0.0.1", controller.port, "contest@podium.test", "podium", "s3cret", starttls=False, timeout_s=5
        )
        wrong = mail.Smtp(
            "127.0.0.1",
            controller.port,
            "contest@podium.test",
            "podium",
            "wrong",
            starttls=True,
            cafile=str(cert),
            timeout_s=5,
        )
        right = mail.Smtp(
            "127.0.0.1",
            controller.port,
            "contest@podium.test",
            "podium",
            "s3cret",
            starttls=True,
            cafile=str(cert),
            timeout_s=5,
        )
        mail.Mailer(service.engine, right, "http://x", service.contests, clock)
        with writing(service.engine) as connection:
            state.put(connection, state.REVEALED, clock().isoformat(), state.only_contest(connection))
            assert mail.announce(connection, service.contests.get(), clock()) == 1
        with caplog.at_level(logging.WARNING, "podium.mail"):
            for settings in (plain, wrong):
                assert mail.drain(service.engine, settings, "http://x", clock) == 0
                clock.now += timedelta(minutes=10)
        assert (
            caplog.text.count("not sent") == 2 and "SMTP AUTH extension not supported" in caplog.text
        )  # no log-in in the clear
        assert mail.drain(service.engine, right, "http://x", clock) == 1
        assert [(to, subject) for to, subject, _ in inbox.take()] == [
            ("ann@alpha.test", "The final results are revealed")
        ]
    finally:
        controller.stop()
    with pytest.raises(UsageError, match="only with --smtp-starttls"):
        mail.parse_smtp("127.0.0.1:25", "contest@podium.test", "podium", "s3cret", starttls=False)


class Browser:
    """Plain HTTP form posts with cookies, as a browser without JavaScript sends them (redirects not followed)."""

    def __init__(self, url: str) -> None:
        self.url, self.jar = url, http.cookiejar.CookieJar()
        self.opener = urllib.request.build_opener(urllib.request.HTTPCookieProcessor(self.jar), NoRedirect())

    def go(self, path: str, form: dict[str, str] | None = None, origin: str | None = None) -> tuple[int, str, str]:
        """(status, body, Location) of a GET, or of a POST of ``form``."""
        data = None if form is None else urllib.parse.urlencode(form).encode()
        sent = urllib.request.Request(self.url + path, data=data, headers={"Origin": origin} if origin else {})
        try:
            with self.opener.open(sent, timeout=30) as answer:
                return answer.status, answer.read().decode(), answer.headers.get("Location", "")
        except urllib.error.HTTPError as answer:
            return answer.code, answer.read().decode(), answer.headers.get("Location", "")

    def token(self, body: str, name: str) -> str:
        return body.split(f'name="{name}" value="', 1)[1].split('"', 1)[0]


class NoRedirect(urllib.request.HTTPRedirectHandler):
    def redirect_request(self, *_: Any) -> None:
        return None


def test_the_forms_without_javascript_refuse_what_is_wrong_with_a_message(tmp_path: Path) -> None:
    contest, service, _ = with_terms(tmp_path, "Be fair.\n")
    with LiveServer(service) as live:
        web = Browser(live.url)
        status, page, _ = web.go("/register")
        form = {
            "form_csrf": web.token(page, "form_csrf"),
            "user": "dana",
            "password": PASSWORD,
            "password2": PASSWORD,
            "team": "delta",
            "terms": "accepted",
        }
        assert web.go("/register", form, origin="https://evil.test")[0] == 403
        for change, code, said in (
            ({"form_csrf": "forged"}, 403, "the form had expired"),
            ({"terms": ""}, 422, "accept the contest&#39;s terms"),
            ({"password2": "something else"}, 422, "the two passwords differ"),
            ({"invitation": "some-code"}, 422, "not both"),
            ({"user": "dana\\n"}, 422, "user name"),
        ):
            status, page, _ = web.go("/register", form | change)
            assert status == code and said in page, (change, status, page[-600:])
            assert 'value="delta"' in page and PASSWORD not in page  # what was typed stays, but never a password
        status, _, location = web.go("/register", form)
        assert status == 303 and location.startswith("/account?done=")
        status, page, _ = web.go("/account")
        csrf = web.token(page, "csrf")
        code = page.split('id="invitation-code">', 1)[1].split("<", 1)[0]
        assert (
            f"/register?invitation={code}" in page
            and f'value="{code}"' in Browser(live.url).go(f"/register?invitation={code}")[1]
        )
        assert web.go("/account/mail", {"csrf": "forged", "email": "dana@delta.test"})[0] == 403
        assert web.go("/account/mail", {"csrf": csrf, "email": "not an address"})[0] == 422
        assert web.go("/account/mail", {"csrf": csrf, "email": "dana@delta.test", "scored": "on"})[0] == 303
        with reading(service.engine) as connection:
            assert mail.kinds_off(accounts.user_row(connection, "dana")) == {"failed", "news", "phase", "revealed"}
        assert web.go("/account/invitation", {"csrf": csrf})[0] == 303
        assert code not in web.go("/account")[1]
        assert web.go("/account/reset-link", {"csrf": csrf, "user": "dana"})[0] == 403  # organizers only

        other = Browser(live.url)
        _, page, _ = other.go("/register")
        assert (
            other.go(
                "/register",
                form | {"form_csrf": other.token(page, "form_csrf"), "user": "dan", "team": "", "invitation": code},
            )[0]
            == 404
        )
        assert other.go("/reset/" + "x" * 43)[0] == 404
        contest.write_text(contest.read_text().replace("self_registration = true", "self_registration = false"))
        with writing(service.engine) as connection:
            state.put(connection, state.ROUND, "2", state.only_contest(connection))  # the contest file is read again
        assert other.go("/register")[0] == 404 and "Sign up" not in other.go("/login")[1]


@pytest.mark.latency  # times requests: run alone (make test)
def test_a_smtp_server_that_never_answers_slows_no_request(tmp_path: Path) -> None:
    """The mailer waits on the silent server in its own thread; sign-ups, reset requests and uploads answer as fast as without mail."""
    contest = write_contest(tmp_path / "contest", timezone="UTC")
    contest.write_text(contest.read_text().replace("2026-06-01T00:00:00Z", "2036-06-01T00:00:00Z"))
    data = tmp_path / "data"
    with socket.socket() as silent:  # takes connections (the kernel's backlog) and never says a word
        silent.bind(("127.0.0.1", 0))
        silent.listen(16)
        with Serve(
            contest,
            data,
            None,
            "--smtp",
            f"127.0.0.1:{silent.getsockname()[1]}",
            "--mail-from",
            "contest@podium.test",
            workers=0,
        ) as served:
            slowest = 0.0
            for n in range(3):
                started = time.monotonic()
                joined = served.call(
                    "POST",
                    "/api/register",
                    json_body={"team": f"t{n}", "user": f"u{n}", "password": PASSWORD, "email": f"u{n}@t.test"},
                )
                asked = served.call("POST", "/api/reset/request", json_body={"user": f"u{n}"})
                sent = served.call(
                    "POST",
                    "/api/submissions",
                    joined.body["token"],
                    body=b"not a png",
                    query={"filename": "testA_1_seg.png"},
                )
                slowest = max(slowest, time.monotonic() - started)
                assert (joined.status, asked.status, sent.status) == (201, 202, 422)
            with reading(connect(f"sqlite:///{data / 'podium.sqlite3'}")) as connection:
                waiting = mail.pending(connection)
    assert (
        slowest < 5 and [m.kind for m in waiting] == ["confirm"] * 3
    )  # the addresses' confirmations, none sent: the server never answered


def test_an_invitation_code_ends_after_seven_days_or_when_an_organizer_revokes_it(tmp_path: Path) -> None:
    """A code works for 7 days, for every teammate; an organizer revokes it (API, command); a refused code says why,
    on the API and the page, and never names its team."""
    from click.testing import CliRunner

    from podium.cli import cli

    _, service, clock = with_terms(tmp_path, "Be fair.\n")
    _user(service, "olga", None, None)
    with LiveServer(service) as live:
        olga = live.call("POST", "/api/tokens", json_body={"user": "olga", "password": PASSWORD}).body["token"]
        gil = live.call("POST", "/api/register", json_body={"team": "gamma", "user": "gil", "password": PASSWORD})
        gil_token = gil.body["token"]
        first = live.call("GET", "/api/team/invitation", gil_token).body
        assert first["expires"] == "2026-03-17T12:00:00+00:00"

        def join(code: str, user: str) -> Any:
            return live.call(
                "POST", "/api/register", json_body={"invitation": code, "user": user, "password": PASSWORD}
            )

        clock.now += timedelta(days=7)
        expired = join(first["invitation"], "gus")
        assert expired.status == 410 and "expired on 2026-03-17 12:00 UTC" in expired.body["detail"]
        assert "gamma" not in json.dumps(expired.body)
        second = live.call("GET", "/api/team/invitation", gil_token).body  # a member's next look: a new code
        assert second["invitation"] != first["invitation"] and second["expires"] == "2026-03-24T12:00:00+00:00"
        assert [join(second["invitation"], user).status for user in ("gus", "gwen")] == [201, 201]  # not spent by a use

        assert live.call("DELETE", "/api/teams/gamma/invitation", gil_token).status == 403  # organizers only
        assert live.call("DELETE", "/api/teams/nobody/invitation", olga).status == 404
        revoked = live.call("DELETE", "/api/teams/gamma/invitation", olga)
        assert revoked.status == 200 and revoked.body == {"team": "gamma", "revoked": True}
        assert live.call("DELETE", "/api/teams/gamma/invitation", olga).body["revoked"] is False
        refused = join(second["invitation"], "gail")
        assert refused.status == 410 and "revoked by the organizers" in refused.body["detail"]
        unknown = join("x" * 20, "gail")
        assert unknown.status == 404 and "unknown" in unknown.body["detail"]

        clock.now += timedelta(hours=1)  # a new hour of the sign-up budget (5 an hour per address)
        web = Browser(live.url)  # the sign-up page says why, without JavaScript
        _, page, _ = web.go(f"/register?invitation={second['invitation']}")
        form = {
            "form_csrf": web.token(page, "form_csrf"),
            "user": "gail",
            "password": PASSWORD,
            "password2": PASSWORD,
            "invitation": second["invitation"],
            "terms": "accepted",
        }
        status, page, _ = web.go("/register", form)
        assert status == 410 and "revoked by the organizers" in page and "gamma" not in page

        third = live.call("GET", "/api/team/invitation", gil_token).body["invitation"]  # a new one after the revocation
        assert third != second["invitation"] and join(third, "gail").status == 201
        database = ["--data", str(tmp_path / "data"), "--database", f"sqlite:///{tmp_path / 'db.sqlite3'}"]
        said = CliRunner().invoke(cli, ["team", "invitation", "gamma", "--revoke", *database])
        assert said.exit_code == 0 and "invitation code revoked" in said.output
        assert join(third, "gina").status == 410
        both = CliRunner().invoke(cli, ["team", "invitation", "gamma", "--revoke", "--renew", *database])
        assert both.exit_code == 2 and "not both" in both.output
        assert "/api/teams/{name}/invitation" in live.call("GET", "/openapi.json").body["paths"]


def test_workers_on_other_machines_send_the_outbox_each_message_once(smtp: Any, tmp_path: Path) -> None:
    """``podium serve`` without --smtp, two ``podium worker --smtp`` processes: every message reaches aiosmtpd once."""
    import signal
    import sys

    from podium.service.database import database_url, migrate

    settings, inbox, _ = smtp
    contest = write_contest(tmp_path / "contest", timezone="UTC")
    contest.write_text(contest.read_text().replace("2026-06-01T00:00:00Z", "2036-06-01T00:00:00Z"))
    data = tmp_path / "data"
    assert podium("team", "add", "alpha", "--contest", str(contest), "--data", str(data)).returncode == 0
    engine = connect(database_url(None, data))
    migrate(engine)
    names = ("ann", "bea", "cid", "dan")
    with writing(engine) as connection:
        team = accounts.team_id(connection, "alpha")
        for name in names:
            user = accounts.add_user(
                connection, name, PASSWORD, team if name == "ann" else None, False, at("2026-03-01T00:00:00Z")
            )
            mail.set_mail(connection, user, f"{name}@alpha.test", set(), confirmed=True)
    alone = podium(
        "worker", "--data", str(data), "--smtp", f"127.0.0.1:{settings.port}", "--mail-from", "c@podium.test"
    )
    assert alone.returncode == 2 and "give --public-url URL" in alone.stderr and "Traceback" not in alone.stderr
    command = [sys.executable, "-m", "podium", "worker", "--data", str(data), "--sandbox", "none"]
    command += [
        "--smtp",
        f"127.0.0.1:{settings.port}",
        "--mail-from",
        "c@podium.test",
        "--public-url",
        "https://contest.test/",
    ]
    with Serve(contest, data, None, workers=0) as served:  # no --smtp: it sends nothing itself
        workers = [subprocess.Popen(command, start_new_session=True, stderr=subprocess.PIPE) for _ in range(2)]
        try:
            for _ in range(300):  # bounded: 30 s, until a worker's mailer has turned mail on
                with reading(engine) as connection:
                    if mail.enabled(connection):
                        break
                time.sleep(0.1)
            for name in names:
                assert served.call("POST", "/api/reset/request", json_body={"user": name}).status == 202
            for _ in range(300):  # bounded: 30 s
                if len(inbox.received) >= len(names):
                    break
                time.sleep(0.1)
            time.sleep(6)  # a round of each mailer more: nothing is sent twice
        finally:
            for worker in workers:
                worker.send_signal(signal.SIGTERM)
            for worker in workers:
                assert worker.wait(timeout=60) == 0, worker.stderr.read().decode()[-2000:] if worker.stderr else ""
    got = inbox.take()
    # each exactly once; the order is the two mailers' race (one may claim the first two, the other the rest)
    assert sorted(to for to, _, _ in got) == [f"{name}@alpha.test" for name in names], got
    assert all("https://contest.test/reset/" in body for _, _, body in got)
    with reading(engine) as connection:
        assert not mail.pending(connection)
