"""Chromium walks a real ``podium serve --contests``: two users who signed up in one contest make and join a team in another.

Ann and Bob each signed up in ``spring`` with a team of their own. Logged in once, at 375 px, by keyboard where a
person types, Ann follows her account page's link to ``autumn``'s join page, creates a team there (accepting its
terms) and uploads; Bob joins it with the code Ann's account page shows in autumn, and uploads too. Every page is
checked by axe-core (``_shot``); the home page then says which contests each has joined. Maples has sent
submissions, so autumn's account page tells Bob its members are final; he leaves his own spring team, which sent
nothing, by keyboard.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from browser_wait import wait_until
from conftest import require
from podium.challenges import get
from podium.service.client import packed
from served import Serve
from test_joining_teams import CONTEST

PASSWORD = "a long password 7"


def _log_in(page: Any, url: str, user: str) -> None:
    page.goto(url + "/login?next=/account")
    page.focus("#user")
    page.keyboard.type(user)
    page.keyboard.press("Tab")
    page.keyboard.type(PASSWORD)
    page.keyboard.press("Enter")
    page.wait_for_url(url + "/account")  # the whole URL, not the log-in page's next=


def _upload(page: Any, archive: Path) -> None:
    page.set_input_files("#file", str(archive))
    page.click("#upload button")
    wait_until(page, "document.getElementById('upload-result').className === 'done'", timeout=30_000)


def test_a_user_of_spring_creates_a_team_in_autumn_and_another_joins_it(tmp_path: Path) -> None:
    from test_pages_browser import _problem, _shot, launch  # Debian's Chromium, axe-core, the screenshots

    require("chromium", _problem())
    from playwright.sync_api import sync_playwright

    demo = get("glas").write_demo(tmp_path / "demo")
    folder = tmp_path / "contests"
    for name, extra in (("spring", ""), ("autumn", '\nterms = "terms.md"\nmax_team_size = 3')):
        (folder / name).mkdir(parents=True)
        (folder / name / "contest.toml").write_text(
            CONTEST.format(id=name, truth=demo.truth, service="self_registration = true" + extra)
        )
    (folder / "autumn" / "terms.md").write_text("# Terms\n\nPlay fair.\n")
    (tmp_path / "packed").mkdir()
    archive = packed(demo.submission, tmp_path / "packed")
    with Serve(folder, tmp_path / "data", None, option="--contests") as server:
        for user in ("ann", "bob"):
            body = {"user": user, "password": PASSWORD, "team": f"{user}spring"}
            signed = server.call("POST", "/api/contests/spring/register", json_body=body)
            assert signed.status == 201, signed.body
        with sync_playwright() as playwright:
            chromium = launch(playwright)
            size = {"width": 375, "height": 800}
            ann = chromium.new_context(viewport=size).new_page()
            _log_in(ann, server.url, "ann")
            assert "join or create a team in autumn contest" in ann.inner_text("main")
            _shot(ann, "join-account")
            ann.click("text=join or create a team in autumn contest")
            ann.wait_for_url(server.url + "/c/autumn/join")
            _shot(ann, "join-page")
            ann.focus("#team")
            ann.keyboard.type("Maples")
            ann.keyboard.press("Tab")
            ann.keyboard.press("Space")  # the terms accepted
            ann.keyboard.press("Tab")  # past the terms link
            ann.keyboard.press("Tab")
            ann.keyboard.press("Enter")
            ann.wait_for_url("**/c/autumn/submissions?done=*")
            assert "you created team Maples" in ann.inner_text("main")
            assert "Submissions of Maples" in ann.inner_text("h1")
            _upload(ann, archive)
            _shot(ann, "join-created-submissions")
            ann.goto(server.url + "/c/autumn/account")
            code = ann.inner_text("#invitation-code")
            _shot(ann, "join-invitation")

            bob = chromium.new_context(viewport=size).new_page()
            _log_in(bob, server.url, "bob")
            bob.goto(server.url + "/c/autumn/join")
            bob.focus("#invitation")
            bob.keyboard.type(code)
            bob.keyboard.press("Tab")
            bob.keyboard.press("Space")
            bob.keyboard.press("Tab")  # past the terms link
            bob.keyboard.press("Tab")
            bob.keyboard.press("Enter")
            bob.wait_for_url("**/c/autumn/submissions?done=*")
            assert "you joined team Maples" in bob.inner_text("main")
            _upload(bob, archive)
            _shot(bob, "join-joined-submissions")
            bob.goto(server.url + "/c/autumn/join")  # again: he is in a team of autumn now
            assert "You are in team Maples in this contest" in bob.inner_text("main")
            _shot(bob, "join-member")
            bob.goto(server.url + "/")
            item = bob.inner_text("main li:has-text('autumn contest')")
            assert "joined: team Maples" in item, item
            assert "joined: team bobspring" in bob.inner_text("main li:has-text('spring contest')")
            _shot(bob, "join-home")
            assert bob.evaluate("document.documentElement.scrollWidth") <= 375 + 1  # no sideways scrolling
            bob.goto(server.url + "/c/autumn/account")  # Maples has sent submissions: its members are final
            assert "its members are final" in bob.inner_text("main")
            assert bob.locator("input[name=confirm]").count() == 0
            _shot(bob, "leave-final")
            bob.goto(server.url + "/c/spring/account")  # bobspring has sent nothing: bob leaves it, by keyboard
            _shot(bob, "leave-account")
            bob.focus("input[name=confirm]")
            bob.keyboard.press("Space")  # confirmed
            bob.keyboard.press("Tab")
            bob.keyboard.press("Enter")
            bob.wait_for_url("**/account?done=*")
            assert "you left team bobspring" in bob.inner_text("main")
            assert "join or create a team in spring contest" in bob.inner_text("main")  # he may join another
            _shot(bob, "leave-done")
            chromium.close()
        token = server.call("POST", "/api/tokens", json_body={"user": "ann", "password": PASSWORD}).body["token"]
        sent = server.call("GET", "/api/contests/autumn/submissions", token).body
        assert len(sent) == 2 and {row["team"] for row in sent} == {"Maples"}, sent
        assert server.call("GET", "/api/contests/spring/submissions", token).body == []
        roster = server.call("GET", "/api/contests/autumn/account", token).body
        assert roster["team"] == "Maples"
