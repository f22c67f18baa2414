"""The organizers' dashboard in Chromium (Debian's, driven by Playwright): at 375 px, by keyboard, checked by axe-core.

The organizer opens the dashboard (its chart drawn, its figures in tables),
bans a team and posts an announcement with the keyboard only, opens a team's page, adds a member
and makes a member's password-reset link; an anonymous
visitor then sees the announcement, its HTML shown as text. Screenshots go to
``test-artifacts/pages`` beside the other pages'.
"""

from __future__ import annotations

from datetime import timedelta
from pathlib import Path

from browser_wait import wait_until
from podium.service import accounts, heartbeats
from podium.service.database import writing
from podium.service.worker import Worker
from service_helpers import Clock, LiveServer, at, demo_archive, set_up, write_contest
from test_pages_browser import _logged_in, _rendered_charts, _shot, browser  # noqa: F401  (browser: the fixture)


def _focus_by_tab(page: object, selector: str, presses: int = 120) -> None:
    """Press Tab until the element ``selector`` names has the focus (at most ``presses`` times)."""
    for _ in range(presses):
        page.keyboard.press("Tab")  # type: ignore[attr-defined]
        if page.evaluate(f"document.activeElement === document.querySelector({selector!r})"):  # type: ignore[attr-defined]
            return
    raise AssertionError(f"{selector} never took the focus by Tab")


def test_the_dashboard_at_375_px_by_keyboard(browser: object, tmp_path: Path) -> None:  # noqa: F811
    contest = write_contest(tmp_path / "contest", quota="per_day = 5")
    clock = Clock(at("2026-03-10T12:00:00Z"))
    service, tokens = set_up(
        f"sqlite:///{tmp_path / 'podium.db'}", contest, tmp_path / "data", ("alpha", "beta"), clock
    )
    with writing(service.engine) as connection:
        accounts.add_user(connection, "org", "org-password-1", None, True, clock())
        accounts.add_user(connection, "cid", "cid-password-1", None, False, clock())  # in no team yet
    heartbeats.beat(service.engine, "scorer-1:4242:1", clock() - timedelta(seconds=3))
    with LiveServer(service) as live:
        archive = demo_archive(contest, tmp_path / "packed")
        for team in ("alpha", "beta"):
            live.call("POST", "/api/submissions", tokens[team], body=archive, query={"filename": "good.tar.gz"})
        live.call("POST", "/api/submissions", tokens["beta"], body=b"not a png", query={"filename": "testA_1_seg.png"})
        while Worker(service.engine, service.data, clock=clock).work_once():
            pass

        page = _logged_in(browser, live.url, "org", "/organizer")
        page.set_viewport_size({"width": 375, "height": 800})  # type: ignore[attr-defined]
        page.reload()  # type: ignore[attr-defined]
        marks = _rendered_charts(page)
        assert marks == [30], marks  # a bar a day, drawn
        main = page.inner_text("main")  # type: ignore[attr-defined]
        assert "Active teams: 2" in main and "scorer-1" in main and "rejected by the checks" in main
        assert page.evaluate("document.documentElement.scrollWidth") <= 375 + 1  # type: ignore[attr-defined]
        _shot(page, "dashboard")
        assert page.get_attribute("#figures", "hx-trigger") == "every 15s"  # type: ignore[attr-defined]
        heartbeats.beat(service.engine, "scorer-2:77:1", clock() - timedelta(seconds=1))  # a worker starts
        page.evaluate(  # type: ignore[attr-defined]
            "() => { const el = document.querySelector('#figures');"
            " return htmx.ajax('GET', el.getAttribute('hx-get'), {target: el, swap: 'innerHTML'}); }"
        )  # what the poll does, without waiting 15 s for it
        wait_until(page, "document.querySelector('#figures').innerText.includes('scorer-2')")
        assert "scorer-1" in page.inner_text("#figures") and "Dashboard" in page.title()  # type: ignore[attr-defined]
        _shot(page, "dashboard-refreshed")

        _focus_by_tab(page, 'button[aria-label="Ban team beta"]')
        page.keyboard.press("Enter")  # type: ignore[attr-defined]
        page.wait_for_selector("p.done")  # type: ignore[attr-defined]
        assert "team beta is banned" in page.inner_text("p.done")  # type: ignore[attr-defined]
        assert "banned" in page.inner_text("table.teams")  # type: ignore[attr-defined]

        _focus_by_tab(page, "#news-text")
        page.keyboard.type("Fixed **truth** <script>alert(1)</script>")  # type: ignore[attr-defined]
        page.keyboard.press("Tab")  # type: ignore[attr-defined]
        page.keyboard.press("Enter")  # type: ignore[attr-defined]
        page.wait_for_selector("article.news")  # type: ignore[attr-defined]
        _shot(page, "dashboard-after-actions")

        page.click("table.teams a:text-is('alpha')")  # the team's page
        page.wait_for_selector("h1:text-is('Team alpha')")  # type: ignore[attr-defined]
        assert "cannot be removed. Ban it instead" in page.inner_text("main")  # type: ignore[attr-defined]
        _focus_by_tab(page, "#member-user")
        page.keyboard.type("cid")  # type: ignore[attr-defined]
        page.keyboard.press("Enter")  # type: ignore[attr-defined]
        page.wait_for_selector("p.done")  # type: ignore[attr-defined]
        assert "cid is a member of team alpha" in page.inner_text("p.done")  # type: ignore[attr-defined]
        assert page.evaluate("document.documentElement.scrollWidth") <= 375 + 1  # type: ignore[attr-defined]
        _shot(page, "organizer-team")
        _focus_by_tab(page, 'button[aria-label="Make a password-reset link for cid"]')
        page.keyboard.press("Enter")  # type: ignore[attr-defined]
        page.wait_for_selector("#reset-link")  # type: ignore[attr-defined]
        assert "/reset/" in page.inner_text("#reset-link")  # type: ignore[attr-defined]
        _shot(page, "organizer-reset-link")

        visitor = browser.new_context(viewport={"width": 375, "height": 800}).new_page()  # type: ignore[attr-defined]
        visitor.goto(live.url + "/")
        news = visitor.inner_text("article.news")
        assert "Fixed truth <script>alert(1)</script>" in news  # the tag shown as text
        assert visitor.inner_html("article.news strong") == "truth"
        _shot(visitor, "contest-announcement")
        board = visitor.goto(live.url + "/api/leaderboard").json()
        assert [row["team"] for row in board["teams"]] == ["alpha"]
