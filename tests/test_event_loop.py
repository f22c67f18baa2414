"""``podium serve`` on uvloop and httptools where they are installed, and on asyncio and h11 where they are not.

A real ``podium serve`` (uvicorn) logs the event loop and the HTTP parser it
runs on (``--log-format json``); with both modules made unimportable (first on
``PYTHONPATH``, as on a platform without their wheels) it serves as well, in
each of its web processes.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from conftest import require
from podium.service.statuses import utc_now
from served import Serve, open_contest
from service_helpers import Clock, set_up, write_contest


def _chosen(server: Serve) -> list[str]:
    """The messages naming the event loop, one per process running the app."""
    records = [json.loads(line) for line in server.err.read_text().splitlines() if line.strip()]
    return [r["message"] for r in records if r["message"].startswith("event loop ")]


def test_serve_runs_on_uvloop_when_present_and_without_it(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    missing = [name for name in ("uvloop", "httptools") if not _importable(name)]
    require("uvloop and httptools", f"{', '.join(missing)} not installed" if missing else None)
    contest = open_contest(write_contest(tmp_path / "contest"))
    data = tmp_path / "data"
    data.mkdir()
    service, _ = set_up(f"sqlite:///{data / 'podium.sqlite3'}", contest, data, ("alpha",), Clock(utc_now()))
    service.engine.dispose()
    with Serve(contest, data, None, "--log-format", "json", workers=0) as server:
        assert server.call("GET", "/api/leaderboard").status == 200
    assert _chosen(server) == ["event loop uvloop, HTTP parser httptools"]
    hidden = tmp_path / "hidden"
    hidden.mkdir()
    for name in ("uvloop", "httptools"):
        (hidden / f"{name}.py").write_text("raise ImportError('no wheel here')\n")
    monkeypatch.setenv("PYTHONPATH", str(hidden))
    with Serve(contest, data, None, "--log-format", "json", "--web-processes", "2", workers=0) as server:
        assert all(server.call("GET", "/api/leaderboard").status == 200 for _ in range(4))
    assert _chosen(server) == ["event loop asyncio, HTTP parser h11"] * 2


def _importable(name: str) -> bool:
    try:
        __import__(name)
    except ImportError:
        return False
    return True
