"""``podium serve --log-format json``: every line its processes write on stderr is one JSON object, with the request's or the job's id."""

from __future__ import annotations

import json
import time
import urllib.request
from pathlib import Path

from podium.service.statuses import SCORED, utc_now
from served import Serve, open_contest
from service_helpers import Clock, demo_archive, set_up, write_contest


def test_json_logs_carry_the_request_and_the_job(tmp_path: Path) -> None:
    contest = open_contest(write_contest(tmp_path / "contest"))
    data = tmp_path / "data"
    data.mkdir()
    service, tokens = set_up(f"sqlite:///{data / 'podium.sqlite3'}", contest, data, ("alpha",), Clock(utc_now()))
    service.engine.dispose()
    with Serve(contest, data, None, "--log-format", "json") as server:
        asked = urllib.request.Request(server.url + "/api/contest", headers={"X-Request-ID": "proxy-7f3a"})
        with urllib.request.urlopen(asked, timeout=30) as answer:
            assert answer.headers["X-Request-ID"] == "proxy-7f3a"
        forged = urllib.request.Request(server.url + "/api/contest", headers={"X-Request-ID": 'x" injected'})
        with urllib.request.urlopen(forged, timeout=30) as answer:
            made = answer.headers["X-Request-ID"]
        assert len(made) == 32 and made != 'x" injected'
        archive = demo_archive(contest, tmp_path / "good")
        assert (
            server.call(
                "POST", "/api/submissions", tokens["alpha"], body=archive, query={"filename": "good.tar.gz"}
            ).status
            == 201
        )
        assert [s["status"] for s in server.settled(tokens["alpha"], 1)] == [SCORED]
        deadline = time.monotonic() + 30  # bounded: the worker logs the outcome just after it records it
        while f"submission 1 {SCORED}" not in server.err.read_text() and time.monotonic() < deadline:
            time.sleep(0.05)
    lines = [line for line in server.err.read_text().splitlines() if line.strip()]
    records = [json.loads(line) for line in lines]  # every line is JSON
    assert all({"time", "level", "logger", "message"} <= set(r) for r in records)
    access = [r for r in records if r["logger"] == "uvicorn.access"]
    assert {"request_id": "proxy-7f3a", "method": "GET", "path": "/api/contest", "status": 200}.items() <= next(
        r for r in access if r.get("request_id") == "proxy-7f3a"
    ).items()
    assert any(r.get("request_id") == made for r in access)
    upload = next(r for r in access if r["method"] == "POST")
    assert upload["status"] == 201 and len(upload["request_id"]) == 32 and upload["path"].startswith("/api/submissions")
    worker = [r for r in records if r["logger"] == "podium.worker"]
    assert worker[0]["message"] == "files scored at niceness 10"  # at the worker's start: serve's --worker-nice default
    jobs = worker[1:]
    assert [r["message"] for r in jobs] == ["scoring submission 1 (job 1, attempt 1)", f"submission 1 {SCORED}"], jobs
    assert all(r["job_id"] == 1 and r["submission_id"] == 1 and r["round"] == 1 for r in jobs)
