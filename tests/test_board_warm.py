"""The boards of a web process drawn at its start, before any reader asks (podium.service.board_warm)."""

from __future__ import annotations

import gc
import time
from pathlib import Path

import pytest

from podium.service.app import Service
from podium.service.board_warm import board_paths
from service_helpers import Clock, LiveServer, at, set_up, write_contest


def test_the_boards_are_drawn_at_start_up_before_any_reader_then_the_heap_frozen(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    frozen: list[int] = []
    monkeypatch.setattr(gc, "freeze", lambda: frozen.append(1))  # recorded: this test process is not frozen
    contest = write_contest(tmp_path / "contest")
    clock = Clock(at("2026-03-10T12:00:00Z"))
    first, _ = set_up(f"sqlite:///{tmp_path / 'podium.sqlite3'}", contest, tmp_path / "data", ("alpha",), clock)
    service = Service(first.engine, first.data, clock, board_warm=True, board_pages_behind=True)
    with LiveServer(service):
        for _ in range(200):  # bounded: 10 s
            if frozen:
                break
            time.sleep(0.05)
        assert service.boards.computed == 1 and len(service.pages._drawn) == 2  # the board, its page and table
        assert frozen == [1]  # once the boards are drawn
    assert board_paths(["a"]) == ["/api/leaderboard", "/leaderboard", "/leaderboard/table"]
    assert board_paths(["a", "b"])[3:] == ["/api/contests/b/leaderboard", "/c/b/leaderboard", "/c/b/leaderboard/table"]
