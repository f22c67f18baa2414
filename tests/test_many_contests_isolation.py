"""Two contests in one server, both with a track ``main``: what a team, a user or an organizer of one sees of the other.

One live server (uvicorn) for the module serves a folder of two contest files, ``spring`` and ``autumn``, whose
tracks share their id. A team of each submits, a worker scores both. Then every page and API route under
``/c/autumn/`` and ``/api/contests/autumn/`` is called with the session, the API tokens and the ids of ``spring``'s
team, user and organizer: none answers a success about spring's submission, and no answer names anything of
spring's (its team, its file, its announcement). A positive control shows each marker where it belongs.
"""

from __future__ import annotations

import json
import re
import urllib.error
import urllib.request
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest
from starlette.routing import Route

from browser_wait import wait_until
from conftest import require
from podium.challenges import get
from podium.service import accounts
from podium.service.app import API, API_PREFIX, PAGES, PAGES_PREFIX, Service
from podium.service.client import packed
from podium.service.database import connect, migrate, writing
from podium.service.scoring import Runtime
from podium.service.server import read_folder, serve_folder
from podium.service.statuses import utc_now
from podium.service.worker import Worker
from service_helpers import LiveServer

PASSWORD = "a long password 7"
CONTEST = """
id = "{id}"
title = "{id} contest"
timezone = "UTC"

[[phase]]
name = "open"
start = 2026-01-01T00:00:00Z
end = 2099-01-01T00:00:00Z
submissions = "files"

[[track]]
id = "main"
title = "The main track"
challenge = "glas"
truth = "{truth}"

[service]
self_registration = true
"""
SPRING = ("springteam", "spring-secret", "spring-news")  # what must never show in autumn's answers


@dataclass
class Site:
    server: LiveServer
    service: Service
    api: dict[
        str, str
    ]  # API tokens: "team" (spring's team), "ann" (its member), "olga" (spring's organizer), "root", "autumn"
    sessions: dict[str, str]  # web sessions: "ann", "olga", "root"
    ids: dict[str, int]  # spring's submission, token and announcement ids; autumn's submission


def _call(site: Site, method: str, path: str, token: str | None = None, session: str | None = None) -> tuple[int, str]:
    """One request, redirects not followed; the status and the body as text."""
    headers = {"Accept": "application/json"}
    if token is not None:
        headers["Authorization"] = f"Bearer {token}"
    if session is not None:
        headers["Cookie"] = f"podium_session={session}"
        headers["X-CSRF-Token"] = accounts.csrf_token(session)
    data = b"" if method in ("POST", "PUT", "DELETE") else None
    call = urllib.request.Request(site.server.url + path, data=data, headers=headers, method=method)

    class Stay(urllib.request.HTTPRedirectHandler):
        def redirect_request(self, *_: Any) -> None:
            return None

    try:
        with urllib.request.build_opener(Stay).open(call, timeout=30) as answer:
            return answer.status, answer.read().decode("utf-8", "replace")
    except urllib.error.HTTPError as error:
        return error.code, error.read().decode("utf-8", "replace")


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Site]:
    root = tmp_path_factory.mktemp("two-contests")
    demo = get("glas").write_demo(root / "demo")
    folder = root / "contests"
    for name in ("spring", "autumn"):
        (folder / name).mkdir(parents=True)
        (folder / name / "contest.toml").write_text(CONTEST.format(id=name, truth=demo.truth))
    engine = connect(f"sqlite:///{root / 'podium.db'}")
    migrate(engine)
    served, problems = read_folder(folder)
    assert problems == [] and [c.id for c in served] == ["autumn", "spring"]
    serve_folder(engine, folder, served)
    now = utc_now()
    api, sessions = {}, {}
    with writing(engine) as connection:
        spring_team = accounts.add_team(connection, SPRING[0], now, "spring")
        autumn_team = accounts.add_team(connection, "autumnteam", now, "autumn")
        users = {
            "ann": accounts.add_user(connection, "ann", PASSWORD, spring_team, False, now),
            "olga": accounts.add_user(connection, "olga", PASSWORD, None, True, now, contest="spring"),
            "root": accounts.add_user(connection, "root", PASSWORD, None, False, now, admin=True),
        }
        walker = accounts.add_user(connection, "walker", PASSWORD, None, False, now)  # a team in each contest
        for contest in ("spring", "autumn"):
            accounts.join(connection, walker, accounts.add_team(connection, f"walk{contest}", now, contest))
        api["team"] = accounts.new_token(connection, spring_team, False, "test", now)
        api["autumn"] = accounts.new_token(connection, autumn_team, False, "test", now)
        for name, user in users.items():
            api[name] = accounts.new_token(connection, None, False, "test", now, user_id=user)
            sessions[name] = accounts.new_token(
                connection, None, False, "test", now, user_id=user, session=True, expires=now + timedelta(days=1)
            )
    service = Service(engine, root / "data")
    (root / "packed").mkdir()
    archive = packed(demo.submission, root / "packed")
    with LiveServer(service) as server:
        site = Site(server, service, api, sessions, {})
        for contest, token, filename in (("spring", "team", SPRING[1]), ("autumn", "autumn", "autumn-file")):
            sent = server.call(
                "POST",
                f"/api/contests/{contest}/submissions",
                api[token],
                body=archive,
                query={"filename": filename + ".tar.gz", "track": "main"},
            )
            assert sent.status == 201, sent.body
            site.ids[contest] = sent.body["id"]
        worker = Worker(engine, root / "data", Runtime(sandbox="none"))
        assert worker.work_once() and worker.work_once() and not worker.work_once()  # one worker scores both contests
        news = server.call("POST", "/api/contests/spring/announcements", api["olga"], json_body={"text": SPRING[2]})
        assert news.status == 201, news.body
        site.ids["announcement"] = news.body["id"]
        site.ids["token"] = server.call("GET", "/api/contests/spring/tokens", api["team"]).body[0]["id"]
        yield site
    engine.dispose()


def test_each_contest_scores_and_shows_its_own_team(site: Site) -> None:
    """The positive control: each board and each organizer's list holds its own contest's team, never the other's."""
    for contest, mine, other in (("spring", SPRING[0], "autumnteam"), ("autumn", "autumnteam", SPRING[0])):
        board = site.server.call("GET", f"/api/contests/{contest}/leaderboard?track=main").body
        assert [row["team"] for row in board["teams"]] == [mine, f"walk{contest}"]  # scored; not submitted yet
        assert [row["status"] for row in board["teams"]] == ["scored", "none"]
        listed = site.server.call("GET", f"/api/contests/{contest}/submissions", site.api["root"]).body
        assert [row["team"] for row in listed] == [mine]
        page = _call(site, "GET", f"/c/{contest}/submissions", session=site.sessions["root"])[1]
        assert mine in page and other not in page
    assert SPRING[2] in _call(site, "GET", "/c/spring/")[1]
    assert _call(site, "GET", f"/api/contests/spring/submissions/{site.ids['spring']}", site.api["team"])[0] == 200


def _autumn_paths(site: Site) -> Iterator[tuple[str, str]]:
    """Every route of the app under autumn's prefixes, with spring's ids in its path: (method, path)."""
    values = {
        "contest_id": "autumn",
        "submission_id": str(site.ids["spring"]),
        "announcement_id": str(site.ids["announcement"]),
        "token_id": str(site.ids["token"]),
        "name": SPRING[0],
        "kind": "file",
        "page_id": "terms",
        "action": "reveal",
        "token": "x" * 43,
    }
    routes = [(PAGES_PREFIX, route) for router in PAGES for route in router.routes]
    routes += [(API_PREFIX, route) for router in API for route in router.routes]
    for prefix, route in routes:
        assert isinstance(route, Route)
        path = re.sub(r"\{(\w+)(:path)?\}", lambda found: values.get(found.group(1), "x"), prefix + route.path)
        for method in sorted(route.methods or ()):
            if method != "HEAD" and not path.endswith(("/logout", "/login")):  # the site's own: not a contest's
                yield method, path


def test_spring_sees_nothing_of_autumn_and_autumn_nothing_of_spring(site: Site) -> None:
    swept = 0
    for method, path in _autumn_paths(site):
        for who in ("team", "ann", "olga"):
            for status, body in (
                _call(site, method, path, token=site.api[who]),
                *([_call(site, method, path, session=site.sessions[who])] if who in site.sessions else []),
            ):
                swept += 1
                said = f"{method} {path} as {who}: {status} {body[:300]}"
                assert not any(marker in body for marker in SPRING), said
                if str(site.ids["spring"]) in path.split("/"):
                    assert status in (303, 401, 403, 404, 405, 422), said  # never spring's submission under autumn
                if "organizer" in path or path.endswith(("/dashboard", "/archive", "/ban", "/approve", "/unban")):
                    assert status in (303, 401, 403, 404, 405, 422), said
    assert swept > 300
    # spring's team token is no caller in autumn; spring's organizer is no organizer of autumn; the administrator is
    assert _call(site, "GET", "/api/contests/autumn/submissions", site.api["team"])[0] == 403  # naming its contest
    assert _call(site, "GET", "/api/contests/autumn/dashboard", site.api["olga"])[0] == 403
    assert _call(site, "GET", "/c/autumn/organizer", session=site.sessions["olga"])[0] == 403
    for contest in ("spring", "autumn"):
        assert _call(site, "GET", f"/api/contests/{contest}/dashboard", site.api["root"])[0] == 200
        assert _call(site, "GET", f"/c/{contest}/organizer", session=site.sessions["root"])[0] == 200
    # ann, of spring's team, logs in once: in autumn she is a user of no team, who sees no submission
    assert json.loads(_call(site, "GET", "/api/contests/autumn/submissions", site.api["ann"])[1]) == []
    assert _call(site, "GET", "/api/contests/spring/submissions", site.api["ann"])[0] == 200


def test_the_single_contest_addresses_name_a_contest_when_several_are_served(site: Site) -> None:
    assert _call(site, "GET", "/leaderboard")[0] == 303  # to the home page, which lists the contests
    status, body = _call(site, "GET", "/api/contest")
    assert status == 404 and "/api/contests/ID/" in body
    home = _call(site, "GET", "/")[1]
    assert 'href="/c/spring/"' in home and 'href="/c/autumn/leaderboard"' in home
    assert [c["id"] for c in json.loads(_call(site, "GET", "/api/contests")[1])] == ["autumn", "spring"]
    assert _call(site, "GET", "/c/winter/")[0] == 404 and _call(site, "GET", "/api/contests/winter/contest")[0] == 404


def test_one_log_in_walks_two_contests_in_chromium(site: Site, tmp_path_factory: pytest.TempPathFactory) -> None:
    """A user in a team of each contest logs in once (keyboard only, 375 px wide) and walks both, every page accessible."""
    from test_pages_browser import _problem, _shot  # Debian's Chromium, axe-core, the screenshots

    require("chromium", _problem())
    from playwright.sync_api import sync_playwright

    from test_pages_browser import launch

    upload = packed(get("glas").write_demo(tmp_path_factory.mktemp("walk") / "demo").submission, site.service.data)
    with sync_playwright() as playwright:
        chromium = launch(playwright)
        page = chromium.new_context(viewport={"width": 375, "height": 800}).new_page()
        page.goto(site.server.url + "/")
        assert [h.inner_text() for h in page.query_selector_all("main h2")] == ["Open", "Upcoming", "Finished"]
        _shot(page, "many-home")
        page.goto(site.server.url + "/login?next=/account")
        page.focus("#user")
        page.keyboard.type("walker")
        page.keyboard.press("Tab")
        page.keyboard.type(PASSWORD)
        page.keyboard.press("Enter")
        # the whole URL: "**/account" matched /login?next=/account at once
        page.wait_for_url(site.server.url + "/account")
        assert "walkspring in spring" in page.inner_text("main") and "walkautumn in autumn" in page.inner_text("main")
        _shot(page, "many-account")
        for contest in ("spring", "autumn"):
            page.click(f"text=submissions of walk{contest} in {contest}")
            page.wait_for_url(f"**/c/{contest}/submissions")
            assert f"Submissions of walk{contest}" in page.inner_text("h1")
            page.set_input_files("#file", str(upload))
            page.click("#upload button")
            wait_until(page, "document.getElementById('upload-result').className === 'done'", timeout=20_000)
            _shot(page, f"many-{contest}-submissions")
            links = [a.get_attribute("href") for a in page.query_selector_all("header nav a")]
            assert f"/c/{contest}/leaderboard" in links and "/account" in links, links
            page.click("header nav >> text=Leaderboard")
            page.wait_for_url(f"**/c/{contest}/leaderboard")
            assert "walkspring" not in page.inner_text("main") or contest == "spring"
            _shot(page, f"many-{contest}-leaderboard")
            page.click(f"header nav >> text={contest} contest")
            page.wait_for_url(f"**/c/{contest}/")
            _shot(page, f"many-{contest}-contest")
            page.goto(site.server.url + "/account")
        assert page.evaluate("document.documentElement.scrollWidth") <= 375 + 1  # no sideways scrolling at 375 px
        chromium.close()
    rows = {
        c: site.server.call("GET", f"/api/contests/{c}/submissions", site.api["root"]).body
        for c in ("spring", "autumn")
    }
    assert {r["team"] for r in rows["spring"]} == {SPRING[0], "walkspring"}
    assert {r["team"] for r in rows["autumn"]} == {"autumnteam", "walkautumn"}


def test_an_organizer_bans_the_users_of_their_contest_only(site: Site) -> None:
    """A ban is the server's: spring's organizer bans ann (of spring only), not walker (also of autumn); the administrator may."""

    def ban(who: str, user: str, verb: str = "ban") -> int:
        return site.server.call("POST", f"/api/contests/spring/users/{user}/{verb}", site.api[who]).status

    assert ban("olga", "walker") == 403 and ban("olga", "root") == 403
    assert ban("olga", "ann") == 200 and ban("olga", "ann", "unban") == 200
    assert ban("root", "walker") == 200 and ban("root", "walker", "unban") == 200


def test_a_user_of_no_team_lists_and_revokes_no_token(tmp_path: Path) -> None:
    """One contest served: a server account in no team is no organizer (it listed and could revoke every token)."""
    from service_helpers import Clock, at, set_up, write_contest

    clock = Clock(at("2026-03-10T12:00:00Z"))
    service, tokens = set_up(
        f"sqlite:///{tmp_path / 'podium.db'}", write_contest(tmp_path / "c"), tmp_path / "data", ("alpha",), clock
    )
    with writing(service.engine) as connection:
        user = accounts.add_user(connection, "nobody", PASSWORD, None, False, clock())
        token = accounts.new_token(connection, None, False, "test", clock(), user_id=user)
    with LiveServer(service) as server:
        assert server.call("GET", "/api/tokens", token).status == 403  # "you are in no team of this contest"
        assert server.call("DELETE", "/api/tokens/1", token).status == 403
        assert server.call("GET", "/api/submissions", tokens["alpha"]).status == 200  # alpha's token still works


def test_an_invitation_code_admits_to_its_own_contest_only(site: Site) -> None:
    """Spring's team's invitation code signs nobody up into autumn (the same answer as an unknown code), and does in spring."""
    from podium.service import invitations

    with writing(site.service.engine) as connection:
        team = accounts.team_id(connection, SPRING[0], "spring")
        code = invitations.code_of(connection, team, site.service.clock()).code

    def sign_up(contest: str, user: str) -> Any:
        body = {"user": user, "password": PASSWORD + user, "invitation": code}
        return site.server.call("POST", f"/api/contests/{contest}/register", json_body=body)

    refused = sign_up("autumn", "intruder")
    assert refused.status == 404 and SPRING[0] not in str(refused.body), refused.body
    admitted = sign_up("spring", "newmate")
    assert admitted.status == 201 and admitted.body["team"] == SPRING[0], admitted.body
