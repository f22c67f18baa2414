"""``/metrics`` and ``/healthz`` of a real ``podium serve`` (uvicorn and a worker process), scraped over HTTP and parsed by prometheus-client's own parser."""

from __future__ import annotations

import shutil
import time
import urllib.request
from pathlib import Path

from prometheus_client.parser import text_string_to_metric_families
from sqlalchemy import create_engine

from podium.service import accounts, heartbeats, metrics
from podium.service.database import writing
from podium.service.statuses import SCORED, utc_now
from served import Serve, open_contest
from service_helpers import Clock, demo_archive, set_up, write_contest


def scrape(url: str, token: str) -> dict[tuple[str, tuple[tuple[str, str], ...]], float]:
    """Every sample of ``/metrics``: (name, sorted labels) -> value."""
    asked = urllib.request.Request(url + "/metrics", headers={"Authorization": f"Bearer {token}"})
    with urllib.request.urlopen(asked, timeout=30) as answer:
        assert answer.headers["Content-Type"].startswith("text/plain; version=")
        exposition = answer.read().decode()
    return {
        (s.name, tuple(sorted(s.labels.items()))): s.value
        for family in text_string_to_metric_families(exposition)
        for s in family.samples
    }


def test_metrics_and_health_of_a_served_contest(tmp_path: Path, database_url: str) -> None:
    contest = open_contest(write_contest(tmp_path / "contest"))
    data = tmp_path / "data"
    data.mkdir()
    sqlite = database_url.startswith("sqlite")
    url = f"sqlite:///{data / 'podium.sqlite3'}" if sqlite else database_url
    service, tokens = set_up(url, contest, data, ("alpha",), Clock(utc_now()))
    with writing(service.engine) as connection:
        accounts.add_user(connection, "olga", "olga's long password", None, True, utc_now())
    service.engine.dispose()
    database = None if sqlite else database_url
    good = demo_archive(contest, tmp_path / "good")
    with Serve(contest, data, database, workers=0) as server:
        organizer = server.call(
            "POST", "/api/tokens", json_body={"user": "olga", "password": "olga's long password"}
        ).body["token"]
        assert (
            server.call(
                "POST", "/api/submissions", tokens["alpha"], body=good, query={"filename": "good.tar.gz"}
            ).status
            == 201
        )
        time.sleep(1.1)
        waiting = scrape(server.url, organizer)
        assert (
            waiting[("podium_queue_jobs", (("state", "queued"),))] == 1
            and waiting[("podium_queue_jobs", (("state", "running"),))] == 0
        )
        assert 1.0 <= waiting[("podium_queue_oldest_job_age_seconds", ())] < 60
        assert waiting[("podium_submissions", (("status", "queued"),))] == 1
        assert not [key for key in waiting if key[0] == "podium_worker_heartbeat_age_seconds"]
        assert server.call("GET", "/healthz").body["workers"] == {"alive": 0, "newest_heartbeat_age_s": None}
    with Serve(contest, data, database, workers=1) as server:
        assert server.call("GET", "/metrics").status == 401
        assert server.call("GET", "/metrics", tokens["alpha"]).status == 403  # a team's token
        for _ in range(2):
            assert server.call("POST", "/api/tokens", json_body={"user": "olga", "password": "wrong"}).status == 401
        assert server.call("POST", "/api/submissions", None, body=good, query={"filename": "good.tar.gz"}).status == 401
        assert (
            server.call("POST", "/api/submissions", tokens["alpha"], body=b"", query={"filename": "x.zip"}).status
            == 422
        )  # empty: refused
        assert (
            server.call(
                "POST", "/api/submissions", tokens["alpha"], body=b"garbage", query={"filename": "x.zip"}
            ).status
            == 422
        )  # recorded, rejected
        assert sorted(s["status"] for s in server.settled(tokens["alpha"], 2)) == ["rejected", SCORED]
        found = scrape(server.url, organizer)
        health = server.call("GET", "/healthz")
    assert (
        found[("podium_submissions", (("status", SCORED),))] == 1
        and found[("podium_submissions", (("status", "rejected"),))] == 1
    )
    assert found[("podium_submissions", (("status", "failed"),))] == 0
    assert (
        found[("podium_queue_jobs", (("state", "queued"),))] == 0
        and found[("podium_queue_oldest_job_age_seconds", ())] == 0
    )
    scored = (("challenge", "glas"), ("outcome", SCORED))
    assert (
        found[("podium_scoring_seconds_count", scored)]
        == 1
        == found[("podium_scoring_seconds_bucket", (*scored[:1], ("le", "+Inf"), *scored[1:]))]
    )
    assert 0 < found[("podium_scoring_seconds_sum", scored)] < 60
    beats = {key: value for key, value in found.items() if key[0] == "podium_worker_heartbeat_age_seconds"}
    assert len(beats) == 1 and 0 <= next(iter(beats.values())) < heartbeats.ALIVE_S, beats
    assert found[("podium_uploads_refused_total", (("reason", "no_token"),))] == 1
    assert (
        found[("podium_uploads_refused_total", (("reason", "empty_or_malformed"),))] == 1
    )  # the rejected garbage is a submission, not a refusal
    assert found[("podium_logins_refused_total", (("reason", "wrong_password"),))] == 2
    assert health.status == 200 and health.body["ok"] and health.body["database"] == "ok"
    assert (
        abs(health.body["disk"]["free_bytes"] - shutil.disk_usage(data).free) < 1 << 30
        and health.body["workers"]["alive"] == 1
    )


def test_health_says_the_database_is_unreachable(tmp_path: Path) -> None:
    engine = create_engine("postgresql+psycopg://nobody@127.0.0.1:1/none", connect_args={"connect_timeout": 2})
    ok, details = metrics.health(engine, tmp_path, utc_now)
    assert not ok and details == {"database": "unreachable: OperationalError"}
