"""The organizers' dashboard and its actions on a real uvicorn and a real worker: figures, bans, approvals, re-runs, archives, announcements.

One server for the module (teams alpha, beta, gamma, delta; the organizer
olga); each test works on its own teams, so their order does not matter.
"""

from __future__ import annotations

import io
import json
import re
import statistics
import urllib.error
import urllib.parse
import urllib.request
import zipfile
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import insert, select, update

from podium.runner.process import Limits, RunReport
from podium.scoring.run import _why
from podium.service import accounts, announcements, heartbeats, mail, state
from podium.service.dashboard import cause
from podium.service.database import reading, writing
from podium.service.statuses import ERROR, FAILED, JOB_DONE, JOB_QUEUED, JOB_RUNNING, REJECTED, SCORED
from podium.service.tables import jobs, outbox, results, submissions, users
from podium.service.worker import Worker
from service_helpers import Clock, LiveServer, Service, at, demo_archive, set_up, write_contest

PASSWORD = "{}-password-1"


@dataclass
class Served:
    live: LiveServer
    service: Service
    clock: Clock
    tokens: dict[str, str]
    contest: Path
    tmp: Path

    def call(self, method: str, path: str, token: str | None = None, **kwargs: Any) -> Any:
        return self.live.call(method, path, token, **kwargs)

    def score_all(self) -> None:
        while Worker(self.service.engine, self.service.data, clock=self.clock).work_once():
            pass

    def organizer(self) -> str:
        return self.tokens["olga"]

    def upload(self, team: str) -> Any:
        archive = demo_archive(self.contest, self.tmp / "packed")
        return self.call("POST", "/api/submissions", self.tokens[team], body=archive, query={"filename": "good.tar.gz"})


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Served]:
    tmp = tmp_path_factory.mktemp("dashboard")
    contest = write_contest(tmp / "contest", quota="per_day = 20")
    contest.write_text(contest.read_text() + "approval = true\n")  # [service] is the file's last table
    clock = Clock(at("2026-03-10T12:00:00Z"))
    service, tokens = set_up(
        f"sqlite:///{tmp / 'podium.db'}", contest, tmp / "data", ("alpha", "beta", "gamma", "delta"), clock
    )
    with writing(service.engine) as connection:
        for user, team in (("ann", 1), ("bob", 2), ("gus", 3)):
            accounts.add_user(connection, user, PASSWORD.format(user), team, False, clock())
        accounts.add_user(connection, "olga", PASSWORD.format("olga"), None, True, clock())
        tokens["olga"] = accounts.new_token(connection, None, True, "test", clock())
    with LiveServer(service) as live:
        yield Served(live, service, clock, tokens, contest, tmp)


def _login(served: Served, user: str) -> Any:
    return served.call("POST", "/api/tokens", json_body={"user": user, "password": PASSWORD.format(user)})


def _board_teams(served: Served) -> list[str]:
    return [row["team"] for row in served.call("GET", "/api/leaderboard").body["teams"]]


def test_a_banned_team_is_refused_everywhere_kept_for_the_organizer_and_back_after_the_ban(served: Served) -> None:
    sent = served.upload("alpha")
    assert sent.status == 201
    served.score_all()
    assert "alpha" in _board_teams(served)
    ann = _login(served, "ann").body["token"]

    assert served.call("POST", "/api/teams/alpha/ban", served.organizer()).body == {
        "team": "alpha",
        "banned": True,
        "approved": True,
    }
    refused = "team alpha is banned from this contest"
    upload = served.call("POST", "/api/submissions", served.tokens["alpha"], body=b"x", query={"filename": "a.png"})
    assert upload.status == 403 and refused in upload.body["detail"]
    for token in (served.tokens["alpha"], ann):  # the team's own token and a member's log-in
        listed = served.call("GET", "/api/submissions", token)
        assert listed.status == 403 and refused in listed.body["detail"]
    login = _login(served, "ann")
    assert login.status == 403 and refused in login.body["detail"]
    wrong = served.call("POST", "/api/tokens", json_body={"user": "ann", "password": "not-her-password"})
    assert wrong.status == 401  # the ban is told only to who knows the password
    page = urllib.request.Request(
        served.live.url + "/login", data=b"user=ann&password=ann-password-1&login_csrf=x", method="POST"
    )
    page.add_header("Cookie", "podium_login=x")
    with pytest.raises(urllib.error.HTTPError) as shown:
        urllib.request.urlopen(page, timeout=30)
    assert shown.value.code == 403 and refused in shown.value.read().decode()
    assert "alpha" not in _board_teams(served)
    kept = served.call("GET", "/api/submissions", served.organizer()).body
    assert any(s["id"] == sent.body["id"] and s["status"] == SCORED for s in kept)

    assert served.call("POST", "/api/teams/alpha/unban", served.organizer()).body["banned"] is False
    assert "alpha" in _board_teams(served)
    assert _login(served, "ann").status == 201
    assert served.call("GET", "/api/submissions", served.tokens["alpha"]).status == 200


def test_a_banned_user_is_refused_at_log_in_and_on_every_request_their_team_is_not(served: Served) -> None:
    bob = _login(served, "bob").body["token"]
    assert served.call("POST", "/api/users/bob/ban", served.organizer()).body == {"user": "bob", "banned": True}
    assert _login(served, "bob").status == 403
    refused = served.call("GET", "/api/submissions", bob)
    assert refused.status == 403 and "user bob is banned" in refused.body["detail"]
    assert served.call("GET", "/api/submissions", served.tokens["beta"]).status == 200  # the team's own token
    served.call("POST", "/api/users/bob/unban", served.organizer())
    assert served.call("GET", "/api/submissions", bob).status == 200


def test_a_team_that_registers_waits_for_approval_before_it_submits_or_is_ranked(served: Served) -> None:
    registered = served.call(
        "POST", "/api/register", json_body={"team": "zeta", "user": "zoe", "password": "a-long-password-8"}
    )
    assert registered.status == 201
    zeta = registered.body["token"]
    archive = demo_archive(served.contest, served.tmp / "packed")
    waiting = served.call("POST", "/api/submissions", zeta, body=b"x", query={"filename": "z.png"})
    assert waiting.status == 403 and "waits for the organizers' approval" in waiting.body["detail"]
    assert served.call("GET", "/api/submissions", zeta).status == 200  # it may read
    assert "zeta" not in _board_teams(served)
    assert served.call("POST", "/api/teams/zeta/approve", served.organizer()).body["approved"] is True
    assert served.call("POST", "/api/submissions", zeta, body=archive, query={"filename": "z.tar.gz"}).status == 201
    assert "zeta" in _board_teams(served)


def test_a_rerun_gives_a_second_result_and_the_board_takes_it_and_the_team_is_told(served: Served) -> None:
    sent = served.upload("gamma")
    served.score_all()
    first = served.call("GET", f"/api/submissions/{sent.body['id']}", served.tokens["gamma"]).body
    assert first["status"] == SCORED and first["round"] == 1
    with writing(served.service.engine) as connection:  # round 1's kept scores, made different to tell them apart
        kept = connection.execute(select(results.c.public_scores).where(results.c.submission_id == sent.body["id"]))
        zeros = dict.fromkeys(kept.scalar_one(), 0.0)
        connection.execute(
            update(results).where(results.c.submission_id == sent.body["id"]).values(public_scores=zeros)
        )
        state.put(connection, mail.ENABLED, "contest@podium.test")
        connection.execute(
            update(users).where(users.c.name == "gus").values(email="gus@gamma.test", email_confirmed=True)
        )
    board = {row["team"]: row for row in served.call("GET", "/api/leaderboard").body["teams"]}
    assert set(board["gamma"]["scores"].values()) == {0.0}

    again = served.call("POST", f"/api/submissions/{sent.body['id']}/rerun", served.organizer())
    assert again.body == {"id": sent.body["id"], "round": 2}
    assert served.call("POST", f"/api/submissions/{sent.body['id']}/rerun", served.organizer()).status == 409
    served.score_all()
    second = served.call("GET", f"/api/submissions/{sent.body['id']}", served.tokens["gamma"]).body
    assert second["status"] == SCORED and second["round"] == 2
    with reading(served.service.engine) as connection:
        rounds = connection.execute(
            select(results.c.round, results.c.public_scores).where(results.c.submission_id == sent.body["id"])
        ).all()
        told = connection.execute(select(outbox.c.subject).where(outbox.c.address == "gus@gamma.test")).scalars().all()
    assert sorted(r.round for r in rounds) == [1, 2]  # the first result kept in its round
    assert told == [f"Submission {sent.body['id']} is scored"]
    board = {row["team"]: row for row in served.call("GET", "/api/leaderboard").body["teams"]}
    with reading(served.service.engine) as connection:
        newest = connection.execute(
            select(results.c.public_scores).where(results.c.submission_id == sent.body["id"], results.c.round == 2)
        ).scalar_one()
    assert board["gamma"]["scores"] == newest != zeros
    assert served.call("POST", "/api/submissions/999999/rerun", served.organizer()).status == 404
    with writing(served.service.engine) as connection:
        mail.turn_off(connection)


def _get(url: str, token: str) -> urllib.response.addinfourl:  # type: ignore[name-defined]
    return urllib.request.urlopen(urllib.request.Request(url, headers={"Authorization": f"Bearer {token}"}), timeout=60)


def test_the_archives_hold_the_uploads_byte_for_byte_and_every_result_document(served: Served) -> None:
    served.upload("delta")
    served.score_all()
    with _get(served.live.url + "/api/archive?what=submissions", served.organizer()) as response:
        assert response.headers["Content-Type"] == "application/zip"
        assert "attachment" in response.headers["Content-Disposition"]
        archive = zipfile.ZipFile(io.BytesIO(response.read()))
    assert archive.testzip() is None
    with reading(served.service.engine) as connection:
        rows = connection.execute(select(submissions.c.id, submissions.c.target, submissions.c.team_id)).all()
        documents = connection.execute(select(results.c.submission_id, results.c.round, results.c.document)).all()
    names = set(archive.namelist())
    uploaded = sorted((served.contest.parent / "demo" / "submission").iterdir())
    team_names = {1: "alpha", 2: "beta", 3: "gamma", 4: "delta"}
    for row in rows:
        if row.team_id not in team_names:
            continue
        folder = f"submissions/{row.id}-{team_names[row.team_id]}/{row.target}/"
        for path in uploaded:
            assert archive.read(folder + path.name) == path.read_bytes()
        assert {n for n in names if n.startswith(f"submissions/{row.id}-")} == {folder + p.name for p in uploaded}
    listed = json.loads(archive.read("submissions.json"))
    assert [item["id"] for item in listed] == sorted(row.id for row in rows)

    with _get(served.live.url + "/api/archive?what=results", served.organizer()) as response:
        kept = zipfile.ZipFile(io.BytesIO(response.read()))
    assert sorted(kept.namelist()) == sorted(f"results/{d.submission_id}-r{d.round}.json" for d in documents)
    for d in documents:
        assert json.loads(kept.read(f"results/{d.submission_id}-r{d.round}.json")) == d.document


def test_an_announcement_is_shown_to_anyone_newest_first_its_html_escaped_and_removable(served: Served) -> None:
    with writing(served.service.engine) as connection:
        state.put(connection, mail.ENABLED, "contest@podium.test")
        for name, off in (("ann", ""), ("bob", "news")):
            connection.execute(
                update(users)
                .where(users.c.name == name)
                .values(email=f"{name}@podium.test", email_confirmed=True, mail_off=off)
            )
    first = served.call(
        "POST", "/api/announcements", served.organizer(), json_body={"text": "The **deadline** is <b>near</b>"}
    )
    served.clock.now += timedelta(minutes=1)
    second = served.call(
        "POST", "/api/announcements", served.organizer(), json_body={"text": "New data <script>alert(1)</script>"}
    )
    served.clock.now -= timedelta(minutes=1)
    assert first.status == second.status == 201
    with urllib.request.urlopen(served.live.url + "/", timeout=30) as response:  # an anonymous visitor
        page = response.read().decode()
    assert "<script>alert(1)" not in page and "&lt;script&gt;alert(1)&lt;/script&gt;" in page
    assert "<strong>deadline</strong>" in page and "&lt;b&gt;near&lt;/b&gt;" in page
    assert page.index("New data") < page.index("deadline")  # newest first
    listed = served.call("GET", "/api/announcements").body
    assert [a["id"] for a in listed][:2] == [second.body["id"], first.body["id"]]
    with reading(served.service.engine) as connection:
        mailed = connection.execute(select(outbox.c.address).where(outbox.c.kind == "news")).scalars().all()
    assert Counter(mailed)["ann@podium.test"] == 2 and "bob@podium.test" not in mailed  # bob turned news off
    removed = served.call("DELETE", f"/api/announcements/{first.body['id']}", served.organizer())
    assert removed.body == {"id": first.body["id"], "removed": True}
    assert first.body["id"] not in [a["id"] for a in served.call("GET", "/api/announcements").body]
    assert served.call("POST", "/api/announcements", served.organizer(), json_body={"text": "  "}).status == 422
    with writing(served.service.engine) as connection:  # another contest's, in a database serving several
        other = announcements.post(connection, "another-contest", "Not ours", None, served.clock())
    assert "Not ours" not in [a["text"] for a in served.call("GET", "/api/announcements").body]
    assert served.call("DELETE", f"/api/announcements/{other['id']}", served.organizer()).status == 404
    with writing(served.service.engine) as connection:
        mail.turn_off(connection)


ORGANIZER_ACTIONS = (
    ("GET", "/api/dashboard"),
    ("POST", "/api/teams/beta/ban"),
    ("POST", "/api/teams/beta/unban"),
    ("POST", "/api/teams/beta/approve"),
    ("POST", "/api/users/bob/ban"),
    ("POST", "/api/users/bob/unban"),
    ("POST", "/api/submissions/1/rerun"),
    ("GET", "/api/archive"),
    ("GET", "/api/archive?what=results"),
    ("POST", "/api/announcements"),
    ("DELETE", "/api/announcements/1"),
)


@pytest.mark.parametrize(("method", "path"), ORGANIZER_ACTIONS)
def test_a_teams_token_is_refused_every_organizer_action(served: Served, method: str, path: str) -> None:
    body = {"text": "hello"} if method == "POST" and path.endswith("announcements") else None
    answer = served.call(method, path, served.tokens["beta"], json_body=body)
    assert answer.status == 403 and "organizer" in answer.body["detail"]
    assert served.call(method, path, None, json_body=body).status == 401


@pytest.mark.parametrize(
    ("outcome", "exit_code", "expected"),
    [
        ("timeout", None, "time"),
        ("memory_limit", None, "memory"),
        ("disk_limit", None, "disk"),
        ("crashed", 3, "crash"),
    ],
)
def test_a_failed_programs_cause_is_read_from_the_reason_podium_writes(
    outcome: str, exit_code: int | None, expected: str
) -> None:
    report = RunReport(1.0, 10.0, "cgroup", exit_code, outcome, "", True, "bwrap")  # type: ignore[arg-type]
    reason = f"the program wrote nothing to score ({_why(report, Limits(5, 512, 100, 1))})"
    assert cause(FAILED, reason) == expected
    assert cause(REJECTED, reason) == "checks" and cause(ERROR, None) == "podium"


def test_the_dashboards_figures_equal_the_counts_of_the_rows(tmp_path: Path, database_url: str) -> None:
    """Rows of every kind written straight to a database of their own (SQLite, PostgreSQL); the figures counted again from them here."""
    contest = write_contest(tmp_path / "contest")
    now = at("2026-03-10T12:00:00Z")
    service, _ = set_up(database_url, contest, tmp_path / "data", ("a", "b", "c"), Clock(now))
    reasons = {
        FAILED: ["it was stopped at the time limit of 5 s", "it was stopped at the memory limit of 512 MB", "exit 3"],
        REJECTED: ["image_0001.png: not a PNG"],
        ERROR: ["podium could not score it"],
    }
    rows: list[dict[str, Any]] = []
    statuses = [SCORED, FAILED, REJECTED, ERROR, "queued", "running"]
    for n in range(60):  # spread over 10 days, 3 teams, every status
        created = now - timedelta(hours=4 * n + 1)
        status = statuses[n % len(statuses)]
        reason = reasons[status][n // len(statuses) % len(reasons[status])] if status in reasons else None
        started = created + timedelta(seconds=n % 7 + 1)
        finished = started + timedelta(seconds=n % 5 + 2) if status not in ("queued", "running") else None
        rows.append(
            {
                "team_id": n % 3 + 1,
                "phase": "first",
                "track": "test-glas",
                "kind": "files",
                "filename": f"{n}.zip",
                "size": 1,
                "sha256": "0" * 64,
                "target": "files",
                "created": created,
                "status": status,
                "reason": reason,
                "started": None if status == "queued" else started,
                "finished": finished,
                "selected": False,
            }
        )
    with writing(service.engine) as connection:
        connection.execute(insert(submissions), rows)
        ids = connection.execute(select(submissions.c.id).order_by(submissions.c.id)).scalars().all()
        job_state = {"queued": JOB_QUEUED, "running": JOB_RUNNING}
        connection.execute(
            insert(jobs),
            [
                {
                    "submission_id": i,
                    "round": 1,
                    "state": job_state.get(r["status"], JOB_DONE),
                    "attempts": 1,
                    "created": r["created"],
                    "worker": "host-a:12:1" if r["status"] == "running" else None,
                }
                for i, r in zip(ids, rows, strict=True)
                if r["status"] != REJECTED
            ],
        )
    heartbeats.beat(service.engine, "host-a:12:1", now - timedelta(seconds=4))
    heartbeats.beat(service.engine, "host-b:7:1", now - timedelta(seconds=95))
    with LiveServer(service) as live:
        figures = live.call("GET", "/api/dashboard", _organizer_token(service, now)).body

    days = Counter(r["created"].date().isoformat() for r in rows)
    assert {d["day"]: d["submissions"] for d in figures["per_day"] if d["submissions"]} == dict(days)
    assert figures["per_day"][-1]["day"] == "2026-03-10" and len(figures["per_day"]) == 30
    for key, span in (("day", timedelta(days=1)), ("week", timedelta(days=7))):
        assert figures["active_teams"][key] == len({r["team_id"] for r in rows if r["created"] >= now - span})
    waiting = [r for r in rows if r["status"] == "queued"]
    ended = [r for r in rows if r["finished"] is not None and r["finished"] >= now - timedelta(hours=1)]
    queue = figures["queue"]
    assert queue["queued"] == len(waiting) and queue["running"] == sum(r["status"] == "running" for r in rows)
    assert queue["oldest_wait_s"] == (now - min(r["created"] for r in waiting)).total_seconds()
    assert queue["ended_last_hour"] == len(ended) > 0
    assert queue["median_wait_s"] == statistics.median((r["started"] - r["created"]).total_seconds() for r in ended)
    assert queue["median_run_s"] == statistics.median((r["finished"] - r["started"]).total_seconds() for r in ended)
    assert [(w["host"], w["alive"], w["submission"] is not None) for w in figures["workers"]] == [
        ("host-a", True, True),
        ("host-b", False, False),
    ]
    expected = Counter((r["status"], cause(r["status"], r["reason"])) for r in rows if r["status"] in reasons)
    assert {(f["status"], f["cause"]): f["count"] for f in figures["failures"]} == dict(expected)
    assert {f["cause"] for f in figures["failures"]} == {"time", "memory", "crash", "checks", "podium"}


def _organizer_token(service: Service, now: Any) -> str:
    with writing(service.engine) as connection:
        return accounts.new_token(connection, None, True, "test", now)


def _session(served: Served, user: str, target: str) -> tuple[Any, str, str]:
    """A cookie-keeping opener logged in as ``user`` through the log-in form; the page it lands on, and its CSRF token."""
    opener = urllib.request.build_opener(urllib.request.HTTPCookieProcessor())
    with opener.open(served.live.url + "/login", timeout=30) as response:
        login_csrf = re.search(r'name="login_csrf" value="([^"]+)"', response.read().decode())
    assert login_csrf is not None
    form = f"user={user}&password={PASSWORD.format(user)}&next={target}&login_csrf={login_csrf.group(1)}".encode()
    with opener.open(served.live.url + "/login", data=form, timeout=30) as response:
        page = response.read().decode()
    csrf = re.search(r'name="csrf" value="([^"]+)"', page)
    assert csrf is not None
    return opener, page, csrf.group(1)


def _post(served: Served, opener: Any, path: str, fields: dict[str, str]) -> str:
    """The page a form posted without JavaScript ends on (after its redirect)."""
    with opener.open(served.live.url + path, data=urllib.parse.urlencode(fields).encode(), timeout=30) as response:
        return str(response.read().decode())


def test_the_dashboard_page_shows_the_figures_and_its_forms_work_without_javascript(served: Served) -> None:
    sent = served.upload("delta")
    served.score_all()
    opener, page, csrf = _session(served, "olga", "/organizer")
    assert "Organizers' dashboard" in page and "Failures by cause" in page and "Submissions per day" in page
    assert "team delta is banned" in _post(
        served, opener, "/organizer/team", {"csrf": csrf, "team": "delta", "change": "ban"}
    )
    assert "delta" not in _board_teams(served)
    done = _post(served, opener, "/organizer/team", {"csrf": csrf, "team": "delta", "change": "unban"})
    assert "team delta is no longer banned" in done
    rerun = _post(served, opener, "/organizer/rerun", {"csrf": csrf, "submission": f"#{sent.body['id']}"})
    assert f"submission {sent.body['id']} is queued to be scored again, in round 2" in rerun
    served.score_all()
    assert "user gus is banned" in _post(
        served, opener, "/organizer/user", {"csrf": csrf, "user": "gus", "change": "ban"}
    )
    assert _login(served, "gus").status == 403
    _post(served, opener, "/organizer/user", {"csrf": csrf, "user": "gus", "change": "unban"})
    assert "is on the contest page" in _post(
        served, opener, "/organizer/announcements", {"csrf": csrf, "text": "Page *news*"}
    )
    posted = next(a for a in served.call("GET", "/api/announcements").body if a["text"] == "Page *news*")
    assert posted["html"] == "<p>Page <em>news</em></p>\n"
    removed = _post(served, opener, "/organizer/announcements/remove", {"csrf": csrf, "id": str(posted["id"])})
    assert f"announcement {posted['id']} is removed" in removed
    for path, fields in (
        ("/organizer/team", {"team": "delta", "change": "ban"}),
        ("/organizer/rerun", {"submission": "1"}),
    ):
        with pytest.raises(urllib.error.HTTPError) as forged:  # without the session's CSRF token
            _post(served, opener, path, {**fields, "csrf": "wrong"})
        assert forged.value.code == 403
    member, _, member_csrf = _session(served, "gus", "/submissions")  # a team's member, with a right CSRF token
    for path, fields in (
        ("/organizer/team", {"team": "delta", "change": "ban"}),
        ("/organizer/user", {"user": "bob", "change": "ban"}),
        ("/organizer/rerun", {"submission": "1"}),
        ("/organizer/announcements", {"text": "hi"}),
        ("/organizer/announcements/remove", {"id": "1"}),
    ):
        with pytest.raises(urllib.error.HTTPError) as refused:
            _post(served, member, path, {**fields, "csrf": member_csrf})
        assert refused.value.code == 403, path
    with pytest.raises(urllib.error.HTTPError) as archive:
        member.open(served.live.url + "/organizer/archive?what=results", timeout=30)
    assert archive.value.code == 403
