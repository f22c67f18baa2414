"""podium serve end to end, over real HTTP on 127.0.0.1, on SQLite and on a real PostgreSQL server.

Two teams; good, bad and hostile uploads; privacy between teams; quota days in
a non-UTC time zone; the reveal; a rescore. Workers run in the test's process
(``Worker.work_once``) so each step is deterministic; test_service_faults.py
runs them as processes and kills them.
"""

from __future__ import annotations

import io
import json
import zipfile
from pathlib import Path

import pytest
from sqlalchemy import func, select

from podium.service import accounts, state
from podium.service.client import packed
from podium.service.database import reading, writing
from podium.service.rescore import rescore
from podium.service.tables import jobs, results
from podium.service.worker import Worker
from service_helpers import Clock, LiveServer, at, set_up, worse_copy, write_contest


def drain(worker: Worker) -> int:
    done = 0
    while worker.work_once():
        done += 1
        assert done < 100
    return done


@pytest.fixture
def contest(tmp_path: Path) -> Path:
    return write_contest(
        tmp_path / "contest",
        quota="per_day = 2\ntotal = 6",
        ranking='decimals = 3\nfinal = "selected"\nmax_selected = 1',
    )


def test_two_teams_uploads_privacy_quota_reveal_rescore(database_url: str, contest: Path, tmp_path: Path) -> None:
    clock = Clock(
        at("2026-03-10T23:30:00-04:00")
    )  # 03:30 UTC on the 11th; New York's day is the 10th (EDT from 8 March)
    service, token = set_up(database_url, contest, tmp_path / "data", ("alpha", "beta"), clock)
    worker = Worker(service.engine, service.data, clock=clock)
    demo = contest.parent / "demo"
    good = packed(demo / "submission", tmp_path).read_bytes()
    worse = packed(worse_copy(demo / "submission", tmp_path / "worse"), tmp_path).read_bytes()
    with LiveServer(service) as live:
        # a good upload of alpha's is queued, then scored
        first = live.call("POST", "/api/submissions", token["alpha"], body=good, query={"filename": "good.tar.gz"})
        assert first.status == 201 and first.body["status"] == "queued", first.body
        assert live.call("GET", f"/api/submissions/{first.body['id']}", token["alpha"]).body["status"] == "queued"
        assert drain(worker) == 1
        mine = live.call("GET", f"/api/submissions/{first.body['id']}", token["alpha"]).body
        assert mine["status"] == "scored" and mine["result"]["view"] == "public"
        assert set(mine["result"]["splits"]) == {"public"} and mine["result"]["scores"] == {}

        # a bad upload: every problem named, 422, and no quota used
        bad = live.call(
            "POST", "/api/submissions", token["alpha"], body=b"not a png", query={"filename": "testA_1_seg.png"}
        )
        assert bad.status == 422 and bad.body["status"] == "rejected" and bad.body["problems"], bad.body
        hostile = io.BytesIO()
        with zipfile.ZipFile(hostile, "w") as archive:
            archive.writestr("../../escape.txt", "x")
        refused = live.call(
            "POST", "/api/submissions", token["alpha"], body=hostile.getvalue(), query={"filename": "x.zip"}
        )
        assert refused.status == 422 and "'..'" in refused.body["reason"]
        assert not (tmp_path / "escape.txt").exists() and not (tmp_path / "data" / "escape.txt").exists()
        quota = live.call("GET", "/api/quota", token["alpha"]).body
        assert quota["today"] == 1 and quota["day_start"] == "2026-03-10T04:00:00+00:00"

        # a second accepted upload uses the day's quota; the third is refused before it is read
        second = live.call("POST", "/api/submissions", token["alpha"], body=worse, query={"filename": "worse.tar.gz"})
        assert second.status == 201
        third = live.call("POST", "/api/submissions", token["alpha"], body=good, query={"filename": "good.tar.gz"})
        assert third.status == 429 and "2026-03-11T04:00:00+00:00" in third.body["detail"]
        clock.now = at("2026-03-10T23:59:59.999999-04:00")
        assert (
            live.call("POST", "/api/submissions", token["alpha"], body=good).status == 429
        )  # still the 10th in New York
        clock.now = at("2026-03-11T00:00:00-04:00")  # a new day in New York (04:00 UTC)
        cancelled = live.call("POST", "/api/submissions", token["alpha"], body=good, query={"filename": "again.tar.gz"})
        assert cancelled.status == 201
        assert (
            live.call("POST", f"/api/submissions/{cancelled.body['id']}/cancel", token["alpha"]).body["status"]
            == "cancelled"
        )
        assert live.call("GET", "/api/quota", token["alpha"]).body["today"] == 0  # cancelled: free

        # beta submits the worse one; beta sees nothing of alpha's
        beta = live.call("POST", "/api/submissions", token["beta"], body=worse, query={"filename": "w.tar.gz"})
        assert beta.status == 201
        drain(worker)
        assert live.call("GET", f"/api/submissions/{first.body['id']}", token["beta"]).status == 404
        assert live.call("POST", f"/api/submissions/{first.body['id']}/cancel", token["beta"]).status == 404
        assert (
            live.call(
                "PUT", f"/api/submissions/{first.body['id']}/selected", token["beta"], query={"selected": "true"}
            ).status
            == 404
        )
        listed = live.call("GET", "/api/submissions", token["beta"]).body
        assert [s["id"] for s in listed] == [beta.body["id"]] and {s["team"] for s in listed} == {"beta"}
        with writing(service.engine) as connection:
            organizer = accounts.new_token(connection, None, True, "test organizer", clock())
        everything = live.call("GET", "/api/submissions", organizer).body
        assert {s["team"] for s in everything} == {"alpha", "beta"}
        assert any(
            s["result"] and "private" in s["result"]["splits"] for s in everything
        )  # organizers see full results
        assert live.call("POST", "/api/submissions", organizer, body=good).status == 403
        assert live.call("GET", "/api/submissions", "pdm_not-a-token").status == 401
        assert live.call("GET", "/api/submissions").status == 401

        # the public board: best public submission of each team, public scores only
        board = live.call("GET", "/api/leaderboard").body
        assert board["revealed"] is False and board["split"] == "public"
        assert [(t["team"], t["rank"]) for t in board["teams"]] == [("alpha", 1), ("beta", 2)]
        public_doc = live.call("GET", f"/api/submissions/{first.body['id']}", token["alpha"]).body["result"]
        assert board["teams"][0]["scores"] == public_doc["splits"]["public"]["scores"]
        with reading(service.engine) as connection:
            full = connection.execute(
                select(results.c.document).where(results.c.submission_id == first.body["id"])
            ).scalar_one()
        assert full["splits"]["private"]["scores"] != full["splits"]["public"]["scores"]  # so the checks below can fail
        for item in live.call("GET", "/api/submissions", token["alpha"]).body:
            if item["result"] is not None:
                assert (
                    set(item["result"]["splits"]) == {"public"}
                    and item["result"]["scores"] == {}
                    and item["result"]["details"] == {}
                )
        assert "private" not in json.dumps(board["teams"])

        # alpha selects its worse submission: after the reveal that one counts
        assert (
            live.call(
                "PUT", f"/api/submissions/{second.body['id']}/selected", token["alpha"], query={"selected": "true"}
            ).status
            == 200
        )
        assert (
            live.call(
                "PUT", f"/api/submissions/{first.body['id']}/selected", token["alpha"], query={"selected": "true"}
            ).status
            == 409
        )  # max 1
        with writing(service.engine) as connection:
            state.put(connection, state.REVEALED, clock().isoformat(), state.only_contest(connection))
        final = live.call("GET", "/api/leaderboard").body
        assert final["revealed"] and final["split"] == "private"
        assert [(t["team"], t["rank"]) for t in final["teams"]] == [
            ("alpha", 1),
            ("beta", 1),
        ]  # the same files: a tie, 1224
        assert final["teams"][0]["scores"] == final["teams"][1]["scores"]
        revealed = live.call("GET", f"/api/submissions/{first.body['id']}", token["alpha"]).body["result"]
        assert "private" in revealed["splits"] and revealed["scores"]

        # rescore: a new round, every accepted submission scored again, old results kept
        assert rescore(service.engine) == (
            2,
            3,
        )  # alpha's two scored and beta's; not the rejected or the cancelled ones
        assert live.call("GET", f"/api/submissions/{first.body['id']}", token["alpha"]).body["status"] == "queued"
        assert live.call("GET", "/api/leaderboard").body["teams"] == final["teams"]  # the board keeps round 1 meanwhile
        assert drain(worker) == 3
        with reading(service.engine) as connection:
            rounds = connection.execute(
                select(results.c.round, func.count()).group_by(results.c.round).order_by(results.c.round)
            ).all()
            assert [tuple(r) for r in rounds] == [(1, 3), (2, 3)]
            assert (
                connection.execute(
                    select(func.count()).select_from(jobs).where(jobs.c.state != "done", jobs.c.state != "cancelled")
                ).scalar_one()
                == 0
            )
        assert live.call("GET", "/api/leaderboard").body["teams"] == final["teams"]
        assert live.call("GET", f"/api/submissions/{first.body['id']}", token["alpha"]).body["round"] == 2


def test_uploads_too_large_outside_phases_and_by_organizers(tmp_path: Path) -> None:
    contest = write_contest(tmp_path / "contest", upload_mb=0.01)
    clock = Clock(at("2026-02-28T23:59:59Z"))
    service, token = set_up(f"sqlite:///{tmp_path / 'db.sqlite3'}", contest, tmp_path / "data", ("alpha",), clock)
    with LiveServer(service) as live:
        closed = live.call("POST", "/api/submissions", token["alpha"], body=b"x")
        assert closed.status == 409 and "opens at 2026-03-01T00:00:00+00:00" in closed.body["detail"]
        clock.now = at("2026-03-01T00:00:00Z")
        large = live.call("POST", "/api/submissions", token["alpha"], body=b"\0" * 20_000)
        assert large.status == 413 and "0.01 MB" in large.body["detail"]
        assert live.call("POST", "/api/submissions", token["alpha"], body=b"").status == 422
        clock.now = at("2026-06-01T00:00:00Z")  # the end is exclusive
        assert "ended" in live.call("POST", "/api/submissions", token["alpha"], body=b"x").body["detail"]
        assert live.call("GET", "/api/leaderboard").body["revealed"] is True  # the last phase has ended
        late = live.call(
            "POST", "/api/register", json_body={"team": "gamma", "user": "gina", "password": "a long password"}
        )
        assert late.status == 403 and "closed at 2026-06-01 00:00:00 UTC" in late.body["detail"]  # with the last phase
        clock.now = at("2026-05-31T23:59:59Z")
        registered = live.call(
            "POST", "/api/register", json_body={"team": "gamma", "user": "gina", "password": "a long password"}
        )
        assert (
            live.call(
                "POST", "/api/register", json_body={"team": "gamma", "user": "gil", "password": "a long password"}
            ).status
            == 409
        )
        clock.now = at("2026-06-01T00:00:00Z")
        assert registered.status == 201 and live.call("GET", "/api/quota", registered.body["token"]).status == 200
        assert live.call("POST", "/api/tokens", json_body={"user": "gina", "password": "wrong password"}).status == 401
        assert live.call("POST", "/api/tokens", json_body={"user": "gina", "password": "a long password"}).status == 201


def test_openapi_and_its_offline_docs_page(tmp_path: Path) -> None:
    contest = write_contest(tmp_path / "contest")
    service, _ = set_up(
        f"sqlite:///{tmp_path / 'db.sqlite3'}", contest, tmp_path / "data", (), Clock(at("2026-03-02T00:00:00Z"))
    )
    with LiveServer(service) as live:
        spec = live.call("GET", "/openapi.json").body
        assert {"/api/submissions", "/api/leaderboard", "/api/quota", "/api/submissions/{submission_id}"} <= set(
            spec["paths"]
        )
        import urllib.request

        page = urllib.request.urlopen(live.url + "/docs", timeout=10).read().decode()
        assert "/api/leaderboard" in page and "<script" not in page and "cdn" not in page.lower()
        summary = live.call("GET", "/api/contest").body
        assert summary["open_phase"] == "first" and "truth" not in summary and summary["split"]["public_units"] == 3
