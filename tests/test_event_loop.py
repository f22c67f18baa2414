"""``podium serve`` on uvloop and httptools where they are installed, and on asyncio and h11 where they are not.

A real ``podium serve --web-processes 2`` (uvicorn) logs, in each web process,
the event loop and the HTTP parser it runs on (``--log-format json``); with
both modules unimportable (as on a platform without their wheels) the choice
falls back to asyncio and h11, which every in-process test server runs on.
"""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path

import pytest

from conftest import require
from podium.service.server import event_loop, importable
from podium.service.statuses import utc_now
from served import Serve, open_contest
from service_helpers import Clock, set_up, write_contest


def test_each_web_process_runs_on_uvloop_and_httptools(tmp_path: Path) -> None:
    missing = [name for name in ("uvloop", "httptools") if not importable(name)]
    require("uvloop and httptools", f"{', '.join(missing)} not installed" if missing else None)
    contest = open_contest(write_contest(tmp_path / "contest"))
    data = tmp_path / "data"
    data.mkdir()
    service, _ = set_up(f"sqlite:///{data / 'podium.sqlite3'}", contest, data, ("alpha",), Clock(utc_now()))
    service.engine.dispose()
    with Serve(contest, data, None, "--log-format", "json", "--web-processes", "2", workers=0) as server:
        assert all(server.call("GET", "/api/leaderboard").status == 200 for _ in range(4))
        deadline = time.monotonic() + 60  # the second web process may still be starting: bounded
        while len(_chosen(server)) < 2 and time.monotonic() < deadline:
            time.sleep(0.1)
    assert _chosen(server) == ["event loop uvloop, HTTP parser httptools"] * 2


def _chosen(server: Serve) -> list[str]:
    """The messages naming the event loop, one per web process started so far."""
    lines = server.err.read_text().split("\n")[:-1]  # whole lines: the last may be being written
    return [m for m in (json.loads(line)["message"] for line in lines if line.strip()) if m.startswith("event loop ")]


def test_without_them_asyncio_and_h11(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("uvloop", "httptools"):
        monkeypatch.setitem(sys.modules, name, None)  # import raises ImportError, as where no wheel is installed
    assert event_loop() == {"loop": "asyncio", "http": "h11"}
