"""The boards of a web process drawn at its start, before any reader asks (podium.service.board_warm)."""

from __future__ import annotations

import gc
import shutil
import time
from pathlib import Path

import pytest

from podium.challenges import get
from podium.service.app import Service
from podium.service.board_warm import board_paths
from service_helpers import Clock, LiveServer, at, set_up, write_contest

TRACKS = Path(__file__).resolve().parents[1] / "examples" / "contests" / "ilsvrc2012-tasks" / "contest.toml"


def _warmed(contest: Path, tmp_path: Path, clock: Clock, monkeypatch: pytest.MonkeyPatch) -> tuple[Service, int]:
    """A service of ``contest`` drawing its boards at start-up, served until it froze its heap (at most 20 s); how many
    times it froze (``gc.freeze`` recorded: this test process is not frozen)."""
    frozen: list[int] = []
    monkeypatch.setattr(gc, "freeze", lambda: frozen.append(1))
    first, _ = set_up(f"sqlite:///{tmp_path / 'podium.sqlite3'}", contest, tmp_path / "data", ("alpha",), clock)
    service = Service(first.engine, first.data, clock, board_warm=True, board_pages_behind=True)
    with LiveServer(service):
        for _ in range(400):  # bounded: 20 s
            if frozen:
                break
            time.sleep(0.05)
    return service, len(frozen)


def test_the_boards_are_drawn_at_start_up_before_any_reader_then_the_heap_frozen(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    contest = write_contest(tmp_path / "contest")
    service, frozen = _warmed(contest, tmp_path, Clock(at("2026-03-10T12:00:00Z")), monkeypatch)
    assert service.boards.computed == 1 and len(service.pages._drawn) == 2  # the board, its page and table
    assert frozen == 1  # once the boards are drawn
    assert board_paths({"a": []}) == ["/api/leaderboard", "/leaderboard", "/leaderboard/table"]
    assert board_paths({"a": [], "b": []})[3:] == [
        "/api/contests/b/leaderboard",
        "/c/b/leaderboard",
        "/c/b/leaderboard/table",
    ]
    assert board_paths({"a": ["x", "y"]})[3:] == [
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
