"""Submission management and the richer board in Chromium, at 375 px: what a team does from its pages, and what another team cannot.

A team uploads through the page with a method and edits it, cancels a queued submission, selects its
final one, downloads its file, result and logs links, finds its own row on the
leaderboard, downloads the board as CSV and JSON and sees the chart drawn;
another team gets 404 for each of the first team's downloads, and sees the
first team's method only after the reveal. axe-core checks
every page visited (``_shot``), whose screenshots go to ``test-artifacts/pages``.
"""

from __future__ import annotations

import json
from pathlib import Path

from browser_wait import wait_until
from podium.service import accounts
from podium.service.client import packed
from podium.service.database import writing
from podium.service.worker import Worker
from service_helpers import Clock, LiveServer, at, set_up, write_contest
from test_pages_browser import _logged_in, _rendered_charts, _shot, browser  # noqa: F401 (browser: the fixture)

WIDTH = 375


def _narrow(page: object) -> None:
    assert page.evaluate("document.documentElement.scrollWidth") <= WIDTH + 1  # type: ignore[attr-defined]


def test_a_team_manages_its_submissions_and_reads_the_board(browser: object, tmp_path: Path) -> None:  # noqa: F811
    contest = write_contest(
        tmp_path / "contest", "ilsvrc2012-cls", quota="per_day = 5", ranking='final = "selected"\nmax_selected = 1'
    )
    clock = Clock(at("2026-03-10T12:00:00Z"))
    service, _ = set_up(f"sqlite:///{tmp_path / 'podium.db'}", contest, tmp_path / "data", ("alpha", "beta"), clock)
    with writing(service.engine) as connection:
        accounts.add_user(connection, "ann", "ann-password-1", 1, False, clock())
        accounts.add_user(connection, "bob", "bob-password-1", 2, False, clock())
    good = packed(contest.parent / "demo" / "submission", tmp_path)
    worker = Worker(service.engine, service.data, clock=clock)
    with LiveServer(service) as live:
        page = _logged_in(browser, live.url, "ann", "/submissions")
        page.set_viewport_size({"width": WIDTH, "height": 800})  # type: ignore[attr-defined]
        # upload with a method, scored; a second one stays queued and is cancelled with the keyboard
        page.set_input_files("#file", str(good))
        page.click("text=Describe the method")
        page.fill("#method", "Page net")
        page.fill("#code_url", "https://example.org/code")
        page.check("input[name=shown]")
        page.click("#upload button[type=submit]")
        wait_until(page, "document.getElementById('upload-result').className === 'done'", timeout=20_000)
        assert worker.work_once()
        page.wait_for_selector("#rows td.st-scored", timeout=30_000)
        page.set_input_files("#file", str(good))
        page.click("#upload button[type=submit]")
        page.wait_for_selector("text=Cancel #2", timeout=20_000)
        page.focus("text=Cancel #2")
        page.keyboard.press("Enter")
        page.wait_for_selector("p.done", timeout=20_000)
        assert "submission 2 is cancelled" in page.inner_text("p.done")
        assert page.inner_text("#rows td.st-cancelled") == "cancelled"
        # the final choice
        page.click("text=Select #1")
        page.wait_for_selector("text=Unselect #1", timeout=20_000)
        assert "selected for the final ranking" in page.inner_text("p.done") and "at most 1" in page.inner_text("main")
        _narrow(page)
        _shot(page, "submissions-managed")
        # the report: the method given, edited; the downloads
        page.goto(live.url + "/submissions/1")
        assert "Page net" in page.inner_text("main") and "shown on the leaderboard after the reveal" in page.inner_text(
            "main"
        )
        page.click("text=Edit the method")
        page.fill("#description", "A small net.\nTrained twice.")
        page.click("text=Save the method")
        page.wait_for_selector("p.done", timeout=20_000)
        assert "A small net." in page.inner_text("p.description")
        with page.expect_download() as sent:
            page.click("text=the file as uploaded")
        assert Path(sent.value.path()).read_bytes() == good.read_bytes() and sent.value.suggested_filename == good.name
        with page.expect_download() as result:
            page.click("text=the result document")
        assert json.loads(Path(result.value.path()).read_text())["view"] == "public"
        _shot(page, "report-downloads")
        # the board: the team's row marked and reached by its link, the files, the chart
        page.goto(live.url + "/leaderboard")
        page.click("text=Your team, alpha: rank 1")
        assert page.url.endswith("#mine") and "(your team)" in page.inner_text("#mine")
        assert page.request.get(live.url + "/leaderboard.csv").text().startswith("rank,team,status,entries,last")
        assert page.request.get(live.url + "/leaderboard.json").json()["teams"][0]["entries"] == 1
        assert [m > 0 for m in _rendered_charts(page)] == [True]
        _narrow(page)
        _shot(page, "leaderboard-richer")
        # another team: none of alpha's downloads, whatever the kind
        bob = _logged_in(browser, live.url, "bob", "/submissions")
        bob.set_viewport_size({"width": WIDTH, "height": 800})  # type: ignore[attr-defined]
        for kind in ("file", "result", "logs"):
            assert bob.goto(f"{live.url}/submissions/1/{kind}").status == 404
        assert "No submission 1 of yours" in bob.inner_text("main")
        _shot(bob, "download-not-yours")
        bob.goto(live.url + "/leaderboard")
        assert "Your team, beta: not ranked yet (no scored submission)" in bob.inner_text(
            "main"
        ) and "nothing sent" in bob.inner_text("#mine")
        assert "Page net" not in bob.content()  # before the reveal: nobody else's method
        _shot(bob, "leaderboard-other-team")
        clock.now = at("2026-06-01T00:00:00Z")  # the last phase ends: the final ranking, the methods shown
        bob = _logged_in(browser, live.url, "bob", "/leaderboard")
        bob.set_viewport_size({"width": WIDTH, "height": 800})  # type: ignore[attr-defined]
        assert (
            "Page net" in bob.inner_text("table.board")
            and bob.get_attribute("text=code", "href") == "https://example.org/code"
        )
        bob.click("table.board summary")
        assert "Trained twice." in bob.inner_text("table.board")
        _narrow(bob)
        _shot(bob, "leaderboard-revealed-methods")
