"""A team without a scored submission has no rank: the API board, the page, ``podium leaderboard`` and the CSV agree.

The only team of a new contest was shown "rank 1" with "none (1)" before anything was scored (the last rank of a
board of one). Kaggle and Codabench rank only teams with a score; podium lists the others after the ranked teams, by
name, without a rank. One live server (uvicorn, SQLite: the ranking is podium's, not the database's) walks the
moments: no submission, one scored, a tie, and a team whose only submission failed.
"""

from __future__ import annotations

import csv
import io
import shutil
import urllib.request
from datetime import timedelta
from pathlib import Path
from typing import Any

from click.testing import CliRunner

from podium.cli import cli
from podium.service import accounts
from podium.service.database import writing
from podium.service.intake import submission_folder
from podium.service.pages import COOKIE
from podium.service.worker import Worker
from service_helpers import Clock, LiveServer, at, demo_archive, set_up, write_contest


def _seen(live: LiveServer) -> dict[str, Any]:
    """Each way of reading the board: (team, rank, status) rows of the API, the CSV's, the command's table, the page."""
    board = live.call("GET", "/api/leaderboard").body
    api = [(t["team"], t["rank"], t["status"]) for t in board["teams"]]
    exported = live.call("GET", "/api/leaderboard.csv")
    rows = list(
        csv.DictReader(io.StringIO(exported.body if isinstance(exported.body, str) else exported.body.decode()))
    )
    table = CliRunner().invoke(cli, ["leaderboard", "--server", live.url])
    assert table.exit_code == 0, table.output
    lines = {
        line.split("│")[2].strip(): line.split("│")[1].strip()
        for line in table.output.splitlines()
        if line.count("│") > 3
    }
    page = live.call("GET", "/leaderboard").body
    return {
        "api": api,
        "csv": [(r["team"], int(r["rank"]) if r["rank"] else None, r["status"]) for r in rows],
        "command": lines,
        "page": page,
    }


def _agree(live: LiveServer, expected: list[tuple[str, int | None, str]]) -> str:
    seen = _seen(live)
    assert seen["api"] == expected
    assert seen["csv"] == expected
    assert seen["command"] == {team: "" if rank is None else str(rank) for team, rank, _ in expected}
    unranked = sum(rank is None for _, rank, _ in expected)
    assert seen["page"].count('<span class="sr">not ranked</span>') == unranked, seen["page"]
    return str(seen["page"])


def test_only_teams_with_a_score_are_ranked_at_every_moment(tmp_path: Path) -> None:
    contest = write_contest(tmp_path / "contest", extra="")
    clock = Clock(at("2026-03-10T12:00:00Z"))
    service, tokens = set_up(
        f"sqlite:///{tmp_path / 'podium.db'}", contest, tmp_path / "data", ("alpha", "beta", "gamma"), clock
    )
    archive = demo_archive(contest, tmp_path / "packed").read_bytes()
    worker = Worker(service.engine, service.data, clock=clock)

    def send(team: str) -> int:
        sent = live.call("POST", "/api/submissions", tokens[team], body=archive, query={"filename": "s.tar.gz"})
        assert sent.status == 201, sent.body
        return int(sent.body["id"])

    with LiveServer(service) as live:
        _agree(live, [("alpha", None, "none"), ("beta", None, "none"), ("gamma", None, "none")])  # rank 1 before

        send("alpha")
        while worker.work_once():
            pass
        _agree(live, [("alpha", 1, "scored"), ("beta", None, "none"), ("gamma", None, "none")])

        send("beta")  # the same files: a tie, both first
        while worker.work_once():
            pass
        _agree(live, [("alpha", 1, "scored"), ("beta", 1, "scored"), ("gamma", None, "none")])

        failed = send("gamma")  # its files gone before a worker reads them: podium gives up on it
        shutil.rmtree(submission_folder(service.data, failed))
        while worker.work_once():
            pass
        assert live.call("GET", f"/api/submissions/{failed}", tokens["gamma"]).body["status"] != "scored"
        _agree(live, [("alpha", 1, "scored"), ("beta", 1, "scored"), ("gamma", None, "no scored submission")])

        with writing(service.engine) as connection:  # a member of gamma, signed in: the page names the team's place
            member = accounts.add_user(
                connection, "gil", "a long password 7", accounts.team_id(connection, "gamma"), False, clock()
            )
            session = accounts.new_token(
                connection,
                None,
                False,
                "test",
                clock(),
                user_id=member,
                session=True,
                expires=clock() + timedelta(hours=1),
            )
        asked = urllib.request.Request(live.url + "/leaderboard", headers={"Cookie": f"{COOKIE}={session}"})
        with urllib.request.urlopen(asked, timeout=30) as answer:
            assert "Your team, gamma: not ranked yet (no scored submission)" in answer.read().decode()
    service.engine.dispose()


def test_the_page_of_unranked_teams_is_accessible(tmp_path: Path) -> None:
    """Chromium at 375 px: the board of teams with no rank yet passes axe-core."""
    from conftest import require
    from test_pages_browser import _problem, _shot, launch

    require("chromium", _problem())
    from playwright.sync_api import sync_playwright

    contest = write_contest(tmp_path / "contest", extra="")
    clock = Clock(at("2026-03-10T12:00:00Z"))
    service, _tokens = set_up(f"sqlite:///{tmp_path / 'podium.db'}", contest, tmp_path / "data", ("alpha",), clock)
    with LiveServer(service) as live, sync_playwright() as playwright:
        browser = launch(playwright)  # the pages' policy violations kept for assert_accessible
        page = browser.new_page(viewport={"width": 375, "height": 800})
        page.goto(live.url + "/leaderboard")
        assert page.inner_text("table.board tbody tr td:first-child").split() == ["–", "not", "ranked"]
        _shot(page, "leaderboard-unranked")
        browser.close()
    service.engine.dispose()
