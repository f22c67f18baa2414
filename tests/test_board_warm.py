"""The boards of a web process drawn at its start, before any reader asks (podium.service.board_warm)."""

from __future__ import annotations

import gc
import shutil
import time
from collections.abc import Callable
from pathlib import Path

import pytest

from podium.challenges import get
from podium.contest import load
from podium.service import board_warm
from podium.service.app import Service
from podium.service.board_warm import board_paths
from podium.service.server import register_contest
from service_helpers import Clock, LiveServer, at, set_up, worse_copy, write_contest
from test_phase_data import CONTEST as PHASES
from test_phase_data import DEV, FINAL

TRACKS = Path(__file__).resolve().parents[1] / "examples" / "contests" / "ilsvrc2012-tasks" / "contest.toml"


def _warmed(
    contest: Path,
    tmp_path: Path,
    clock: Clock,
    monkeypatch: pytest.MonkeyPatch,
    then: Callable[[Service], None] = lambda _service: None,
) -> tuple[Service, int]:
    """A service of ``contest`` drawing its boards at start-up, served until it froze its heap (at most 20 s), then
    while ``then(service)`` runs; how many times it froze (``gc.freeze`` recorded: this test process is not frozen)."""
    frozen: list[int] = []
    monkeypatch.setattr(gc, "freeze", lambda: frozen.append(1))
    monkeypatch.setattr(board_warm, "WATCH_S", 0.1)
    first, _ = set_up(f"sqlite:///{tmp_path / 'podium.sqlite3'}", contest, tmp_path / "data", ("alpha",), clock)
    service = Service(first.engine, first.data, clock, board_warm=True, board_pages_behind=True)
    with LiveServer(service):
        for _ in range(400):  # bounded: 20 s
            if frozen:
                break
            time.sleep(0.05)
        then(service)
    return service, len(frozen)


def _until(done: Callable[[], bool]) -> bool:
    """Whether ``done()`` holds within 20 s, no reader asking meanwhile."""
    for _ in range(400):  # bounded: 20 s
        if done():
            return True
        time.sleep(0.05)
    return False


def test_the_boards_are_drawn_at_start_up_before_any_reader_then_the_heap_frozen(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    contest = write_contest(tmp_path / "contest")
    service, frozen = _warmed(contest, tmp_path, Clock(at("2026-03-10T12:00:00Z")), monkeypatch)
    assert service.boards.computed == 1 and len(service.pages._drawn) == 2  # the board, its page and table
    assert frozen == 1  # once the boards are drawn
    assert board_paths({"a": ("",)}, plain=True) == ["/api/leaderboard", "/leaderboard", "/leaderboard/table"]
    assert board_paths({"a": ("",), "b": ("",)}, plain=False)[3:] == [
        "/api/contests/b/leaderboard",
        "/c/b/leaderboard",
        "/c/b/leaderboard/table",
    ]
    assert board_paths({"a": ("track=x", "track=y")}, plain=True)[3:] == [
        "/api/leaderboard?track=y",
        "/leaderboard?track=y",
        "/leaderboard/table?track=y",
    ]


def test_each_track_of_a_contest_of_tracks_is_drawn(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The example of three tracks (ILSVRC's tasks): each track's board and pages, as its readers ask (``?track=``)."""
    for challenge in ("ilsvrc2012-cls", "ilsvrc2012-loc", "ilsvrc2012-fine"):
        get(challenge).write_demo(tmp_path / "demo-data" / challenge)
    contest = tmp_path / "examples" / "contests" / "ilsvrc2012-tasks" / "contest.toml"
    contest.parent.mkdir(parents=True)
    shutil.copyfile(TRACKS, contest)
    service, frozen = _warmed(contest, tmp_path, Clock(at("2026-03-02T10:00:00Z")), monkeypatch)
    assert service.boards.computed == 3 and len(service.pages._drawn) == 2 * 3  # each track's board, page and table
    assert sorted({key[3] for key in service.boards._boards}) == ["cls", "fine", "loc"] and frozen == 1


def test_every_phase_board_shown_is_drawn_at_start_up_and_a_phase_opening_draws_its_own(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Phases naming data of their own: in the final phase, the development phase's final board is drawn at start-up
    too (the contest page and the leaderboard's links show it); a service started in the development phase draws the
    final phase's board once the clock opens it, no reader asking."""
    demo = get("glas").write_demo(tmp_path / "demo")
    worse_copy(demo.truth, tmp_path / "final-truth")
    contest = tmp_path / "contest.toml"
    contest.write_text(PHASES)
    for run in ("final", "development"):
        (tmp_path / run).mkdir()
    service, frozen = _warmed(contest, tmp_path / "final", Clock(FINAL), monkeypatch)
    assert sorted(key[4] for key in service.boards._boards) == ["development", "final"] and frozen == 1
    assert len(service.pages._drawn) == 2 * 2  # each board's page and table

    def opening(service: Service) -> None:
        assert [key[4] for key in service.boards._boards] == ["development"]
        service.clock.now = FINAL  # type: ignore[attr-defined]
        assert _until(lambda: sorted(key[4] for key in service.boards._boards) == ["development", "final"])

    _warmed(contest, tmp_path / "development", Clock(DEV), monkeypatch, opening)


def test_a_contest_read_again_has_its_boards_drawn_again_no_reader_asking(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``podium contest reload`` serves a changed file (its read stamp, a setting, bumps the board's stamp): the boards
    are drawn again within the watch, with the new file's title."""
    contest = write_contest(tmp_path / "contest")

    def reloaded(service: Service) -> None:
        computed = service.boards.computed
        contest.write_text(contest.read_text().replace('title = "Test contest"', 'title = "Renamed contest"'))
        register_contest(service.engine, load(contest))  # what podium contest reload does for each file changed
        assert _until(lambda: service.boards.computed > computed)
        assert _until(lambda: any(b"Renamed contest" in page.body for page in service.pages._drawn.values()))

    _warmed(contest, tmp_path, Clock(at("2026-03-10T12:00:00Z")), monkeypatch, reloaded)
