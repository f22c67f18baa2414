"""The service's pages in a real browser: Debian's Chromium driven by Playwright (never ``playwright install``).

One walk through the contest as a team and as an organizer: log in, upload a
good and a bad submission through the page, see the problems, see the
leaderboard update with its intervals, open a report and check every chart
rendered (an SVG with marks), at 375 px wide and with the keyboard. Screenshots
of each page go to ``test-artifacts/pages`` (or ``$PODIUM_ARTIFACTS``).
"""

from __future__ import annotations

import os
import shutil
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

import page_policy
from accessibility import assert_accessible
from browser_wait import wait_until
from conftest import require
from podium.service import accounts
from podium.service.client import packed
from podium.service.database import writing
from podium.service.worker import Worker
from service_helpers import Clock, LiveServer, at, set_up, worse_copy, write_contest

CHROMIUM = "/usr/bin/chromium"
FLAGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--no-first-run",
    "--disable-sync",
    "--disable-quic",
]
ARTIFACTS = Path(os.environ.get("PODIUM_ARTIFACTS", Path(__file__).parent.parent / "test-artifacts")) / "pages"


def launch(playwright: Any) -> Any:
    """Debian's Chromium, every context of which keeps its pages' policy violations (checked by ``assert_accessible``)."""
    return page_policy.watch(playwright.chromium.launch(executable_path=CHROMIUM, args=FLAGS))


def _problem() -> str | None:
    if not Path(CHROMIUM).exists():
        return f"{CHROMIUM} is missing (Debian package chromium; make test installs it as root)"
    try:
        import playwright.sync_api  # noqa: F401
    except ImportError:
        return "the playwright package is not installed (pip install -e '.[test]')"
    return None


@pytest.fixture(scope="module")
def browser() -> Iterator[object]:
    require("chromium", _problem())
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        chromium = launch(playwright)
        yield chromium
        chromium.close()


class Scorer:
    """A worker scoring in the background while the browser waits, stopped at the end (bounded)."""

    def __init__(self, worker: Worker) -> None:
        self.worker, self.stop = worker, threading.Event()
        self.thread = threading.Thread(target=self.run, daemon=True)

    def run(self) -> None:
        while not self.stop.is_set():
            if not self.worker.work_once():
                self.stop.wait(0.2)

    def __enter__(self) -> Scorer:
        self.thread.start()
        return self

    def __exit__(self, *_: object) -> None:
        self.stop.set()
        self.thread.join(timeout=60)


def _shot(page: object, name: str) -> None:
    """A full-page screenshot to the artifacts, after axe-core finds the page accessible."""
    assert_accessible(page, name)
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(ARTIFACTS / f"{name}.png"), full_page=True)  # type: ignore[attr-defined]


def _rendered_charts(page: object) -> list[int]:
    """The number of drawn marks of each chart, once every chart has rendered or failed."""
    wait_until(
        page,
        "[...document.querySelectorAll('div.vega')].every(e => e.dataset.rendered === 'true' || e.dataset.rendered === 'error')",
        timeout=20_000,
    )
    return page.eval_on_selector_all(  # type: ignore[attr-defined]
        "div.vega",
        "els => els.map(e => e.dataset.rendered === 'true' ? e.querySelectorAll('svg g.mark-rect path, svg g.mark-line path, svg g.mark-tick path, svg g.mark-symbol path').length : -1)",
    )


def _logged_in(browser: object, url: str, user: str, target: str) -> object:
    """A new browser context's page, logged in as ``user`` (password ``USER-password-1``) and sent on to ``target``."""
    page = browser.new_context().new_page()  # type: ignore[attr-defined]
    page.goto(f"{url}/login?next={target}")
    page.fill("#user", user)
    page.fill("#password", f"{user}-password-1")
    page.click("form.stack button")
    page.wait_for_url("**" + target)
    return page


def test_team_and_organizer_in_chromium(browser: object, tmp_path: Path) -> None:
    contest = write_contest(tmp_path / "contest", quota="per_day = 5")
    clock = Clock(at("2026-03-10T12:00:00Z"))
    service, _ = set_up(f"sqlite:///{tmp_path / 'podium.db'}", contest, tmp_path / "data", ("alpha", "beta"), clock)
    with writing(service.engine) as connection:
        accounts.add_user(connection, "ann", "ann-password-1", 1, False, clock())
        accounts.add_user(connection, "bob", "bob-password-1", 2, False, clock())
        accounts.add_user(connection, "org", "org-password-1", None, True, clock())
    demo = contest.parent / "demo"
    (tmp_path / "good").mkdir()
    (tmp_path / "worse").mkdir()
    good = packed(demo / "submission", tmp_path / "good")
    worse = packed(worse_copy(demo / "submission", tmp_path / "worse-folder"), tmp_path / "worse")
    bad = tmp_path / "bad.txt"
    bad.write_text("not a submission\n")
    worker = Worker(service.engine, service.data, clock=clock)
    with LiveServer(service) as live, Scorer(worker):
        context = browser.new_context(viewport={"width": 375, "height": 800})  # type: ignore[attr-defined]
        page = context.new_page()
        page.goto(live.url + "/")
        assert "first is open" in page.inner_text("main")
        assert "your time" in page.inner_text("main")  # the phase's dates also in the viewer's time zone
        _shot(page, "contest")
        assert page.evaluate("document.documentElement.scrollWidth") <= 375 + 1  # no sideways scrolling at 375 px

        # log in with the keyboard only
        page.goto(live.url + "/login")
        page.keyboard.press("Tab")  # the skip link
        page.focus("#user")
        page.keyboard.type("ann")
        page.keyboard.press("Tab")
        page.keyboard.type("ann-password-1")
        page.keyboard.press("Enter")
        page.wait_for_url("**/submissions")
        assert "Submissions of alpha" in page.inner_text("h1")

        # a bad upload: rejected at once, the problem shown
        page.set_input_files("#file", str(bad))
        page.click("#upload button")
        wait_until(page, "document.getElementById('upload-result').className === 'error'", timeout=20_000)
        assert "rejected" in page.inner_text("#upload-result") and "label images" in page.inner_text("#upload-result")
        # a good upload: queued, then scored while the page waits (live status)
        page.set_input_files("#file", str(good))
        page.click("#upload button")
        wait_until(page, "document.getElementById('upload-result').className === 'done'", timeout=20_000)
        page.wait_for_selector("#rows td.st-scored", timeout=60_000)
        rows = page.inner_text("#rows")
        assert "rejected" in rows and "scored" in rows and "F1" in rows
        _shot(page, "submissions")

        # the report of the scored submission: every chart rendered with marks
        page.click("#rows td.st-scored >> xpath=.. >> a")
        marks = _rendered_charts(page)
        assert len(marks) == 4 and all(m > 0 for m in marks), marks
        assert "public view" in page.inner_text("main")
        _shot(page, "report")

        # another team's submission is not found
        other = context.new_page()
        bob = _logged_in(browser, live.url, "bob", "/submissions")
        bob.set_input_files("#file", str(worse))
        bob.click("#upload button")
        bob.wait_for_selector("#rows td.st-scored", timeout=60_000)
        assert bob.goto(live.url + "/submissions/1").status == 404
        other.close()

        # the leaderboard: both teams, alpha first, with intervals
        page.goto(live.url + "/leaderboard")
        board = page.inner_text("table.board")
        assert board.index("alpha") < board.index("beta") and "%" in board
        _shot(page, "leaderboard")
        page.click("text=object Hausdorff")
        assert "sort=object_hausdorff" in page.url

        # a form without its CSRF token is refused
        assert page.request.post(live.url + "/organizer/reveal", form={"csrf": "wrong"}).status == 403

        # the organizer reveals; the board turns to the private split
        org = _logged_in(browser, live.url, "org", "/organizer")
        assert "alpha" in org.inner_text("main") and "beta" in org.inner_text("main")
        _shot(org, "organizer")
        org.click("text=Reveal the private split")
        org.wait_for_selector("p.done")
        org.goto(live.url + "/leaderboard")
        assert "Final ranking on the private split" in org.inner_text("main")
        context.close()
    shutil.rmtree(tmp_path / "data", ignore_errors=True)
