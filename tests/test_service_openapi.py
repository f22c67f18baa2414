"""The API's answers are declared: each ``/api/...`` operation publishes a typed 2xx schema, and real answers of a served contest match it.

The answers are also compared with what the domain functions return, so a
response model that dropped or changed a field would fail here, not only in
the clients.
"""

from __future__ import annotations

import ast
from pathlib import Path
from typing import Any

from jsonschema import Draft202012Validator
from sqlalchemy import select

import podium.service
from podium.service import accounts, mail, state
from podium.service.client import packed
from podium.service.database import reading, writing
from podium.service.leaderboard import leaderboard
from podium.service.tables import outbox
from podium.service.views import contest_view, visible_submissions
from podium.service.worker import Worker
from service_helpers import Clock, LiveServer, at, set_up, write_contest

METHODS = ("get", "post", "put", "patch", "delete")


def _typed(schema: dict[str, Any], spec: dict[str, Any]) -> bool:
    """Whether ``schema`` says what the answer holds: a model, or an array of models (not ``{}`` nor a bare object)."""
    if "$ref" in schema:
        return bool(spec["components"]["schemas"][schema["$ref"].rsplit("/", 1)[1]].get("properties"))
    if schema.get("type") == "array":
        return _typed(schema.get("items", {}), spec)
    return bool(schema.get("properties"))


def _answer_schemas(spec: dict[str, Any]) -> dict[tuple[str, str], dict[str, Any]]:
    """Each operation's 2xx JSON schema, by (method, path); ``{}`` where there is none."""
    found = {}
    for path, operations in spec["paths"].items():
        for method, operation in operations.items():
            if method in METHODS:
                answers = [a for code, a in operation["responses"].items() if code.startswith("2")]
                media = [a.get("content", {}).get("application/json", {}).get("schema", {}) for a in answers]
                found[(method, path)] = next((m for m in media if m), {})
    return found


def _check(spec: dict[str, Any], method: str, path: str, body: Any) -> None:
    schema = _answer_schemas(spec)[(method, path)]
    errors = list(Draft202012Validator({**schema, "components": spec["components"]}).iter_errors(body))
    assert not errors, (method, path, [e.message for e in errors[:3]])


def _confirmation(service: Any) -> str:
    """The token of the newest confirmation link in the outbox."""
    with reading(service.engine) as connection:
        body = (
            connection.execute(select(outbox.c.body).where(outbox.c.kind == mail.CONFIRM).order_by(outbox.c.id.desc()))
            .scalars()
            .first()
        )
    return str(body).split("/account/confirm/", 1)[1].split()[0]


def _login(live: LiveServer, user: str, password: str) -> str:
    return str(live.call("POST", "/api/tokens", json_body={"user": user, "password": password}).body["token"])


def test_every_api_operation_declares_its_answer_and_real_answers_match(tmp_path: Path) -> None:
    contest = write_contest(tmp_path / "contest", ranking='final = "selected"\nmax_selected = 1')
    clock = Clock(at("2026-03-10T12:00:00Z"))
    service, token = set_up(f"sqlite:///{tmp_path / 'db.sqlite3'}", contest, tmp_path / "data", ("alpha",), clock)
    with writing(service.engine) as connection:
        accounts.add_user(connection, "olga", "organizer-password-9", None, True, clock())
    good = packed(contest.parent / "demo" / "submission", tmp_path).read_bytes()
    with LiveServer(service) as live:
        spec = live.call("GET", "/openapi.json").body
        schemas = _answer_schemas(spec)
        api = {key for key in schemas if key[1].startswith("/api/")}
        archive = ("get", "/api/archive")  # a zip, declared as application/zip
        downloads = {("get", f"/api/submissions/{{submission_id}}/{kind}") for kind in ("file", "result", "logs")}
        downloads |= {("get", "/api/leaderboard.csv"), archive}
        prefixed = {key for key in api if key[1].startswith("/api/contests/{contest_id}/")}  # a contest's, by its id
        assert {(method, "/api/" + path.split("/", 4)[4]) for method, path in prefixed} == api - prefixed - {
            ("get", "/api/contests")
        }
        files = downloads | {(method, "/api/contests/{contest_id}" + path[4:]) for method, path in downloads}
        assert len(api) == 2 * 49 + 1 and not [key for key in api - files if not _typed(schemas[key], spec)]
        media = [list(spec["paths"][path][method]["responses"]["200"]["content"]) for method, path in sorted(downloads)]
        assert media == [
            ["application/zip"],
            ["text/csv"],
            ["application/octet-stream"],
            ["text/plain"],
            ["application/json"],
        ]
        assert _typed(schemas[("get", "/healthz")], spec)

        sent = live.call("POST", "/api/submissions", token["alpha"], body=good, query={"filename": "good.tar.gz"})
        assert sent.status == 201
        _check(spec, "post", "/api/submissions", sent.body)
        rejected = live.call(
            "POST", "/api/submissions", token["alpha"], body=b"not a png", query={"filename": "testA_1_seg.png"}
        )
        assert rejected.status == 422
        _check(spec, "post", "/api/submissions", rejected.body)
        while Worker(service.engine, service.data, clock=clock).work_once():
            pass
        queued = live.call("POST", "/api/submissions", token["alpha"], body=good, query={"filename": "again.tar.gz"})
        organizer = live.call("POST", "/api/tokens", json_body={"user": "olga", "password": "organizer-password-9"})
        registered = live.call(
            "POST", "/api/register", json_body={"team": "gamma", "user": "gil", "password": "a-long-password-3"}
        )
        gil = registered.body["token"]
        with writing(service.engine) as connection:
            state.put(
                connection, mail.ENABLED, "contest@podium.test"
            )  # mail on: a new address is sent its confirmation link
        link = live.call("POST", "/api/users/gil/reset", organizer.body["token"])
        answers = {
            ("post", "/api/tokens"): organizer,
            ("post", "/api/register"): registered,
            ("get", "/api/contest"): live.call("GET", "/api/contest"),
            ("get", "/api/leaderboard"): live.call("GET", "/api/leaderboard"),
            ("get", "/api/pages"): live.call("GET", "/api/pages"),
            ("get", "/api/data"): live.call("GET", "/api/data"),
            ("get", "/api/quota"): live.call("GET", "/api/quota", token["alpha"]),
            ("get", "/api/tokens"): live.call("GET", "/api/tokens", organizer.body["token"]),
            ("get", "/api/submissions"): live.call("GET", "/api/submissions", organizer.body["token"]),
            ("get", "/api/submissions/{submission_id}"): live.call(
                "GET", f"/api/submissions/{sent.body['id']}", token["alpha"]
            ),
            ("put", "/api/submissions/{submission_id}/selected"): live.call(
                "PUT", f"/api/submissions/{sent.body['id']}/selected", token["alpha"], query={"selected": "true"}
            ),
            ("put", "/api/submissions/{submission_id}/method"): live.call(
                "PUT",
                f"/api/submissions/{sent.body['id']}/method",
                token["alpha"],
                json_body={"method": "net", "code_url": "https://example.org/net", "shown": True},
            ),
            ("post", "/api/submissions/{submission_id}/cancel"): live.call(
                "POST", f"/api/submissions/{queued.body['id']}/cancel", token["alpha"]
            ),
            ("delete", "/api/tokens/{token_id}"): live.call("DELETE", "/api/tokens/1", token["alpha"]),
            ("get", "/healthz"): live.call("GET", "/healthz"),
            ("get", "/api/account"): live.call("GET", "/api/account", gil),
            ("put", "/api/account"): live.call("PUT", "/api/account", gil, json_body={"email": "gil@gamma.test"}),
            ("post", "/api/account/confirm"): live.call(
                "POST", "/api/account/confirm", json_body={"token": _confirmation(service)}
            ),
            ("get", "/api/team/invitation"): live.call("GET", "/api/team/invitation", gil),
            ("post", "/api/team/invitation"): live.call("POST", "/api/team/invitation", gil),
            ("post", "/api/users/{name}/reset"): link,
            ("post", "/api/reset"): live.call(
                "POST",
                "/api/reset",
                json_body={"token": link.body["link"].rsplit("/", 1)[1], "password": "a-new-password-4"},
            ),
            ("post", "/api/reset/request"): live.call("POST", "/api/reset/request", json_body={"user": "gil"}),
            ("post", "/api/account/password"): live.call(
                "POST",
                "/api/account/password",
                _login(live, "gil", "a-new-password-4"),
                json_body={"current": "a-new-password-4", "password": "a-new-password-5"},
            ),
            ("get", "/api/dashboard"): live.call("GET", "/api/dashboard", organizer.body["token"]),
            ("delete", "/api/teams/{name}/invitation"): live.call(
                "DELETE", "/api/teams/gamma/invitation", organizer.body["token"]
            ),
            ("post", "/api/teams/{name}/ban"): live.call("POST", "/api/teams/gamma/ban", organizer.body["token"]),
            ("post", "/api/teams/{name}/unban"): live.call("POST", "/api/teams/gamma/unban", organizer.body["token"]),
            ("post", "/api/teams/{name}/approve"): live.call(
                "POST", "/api/teams/gamma/approve", organizer.body["token"]
            ),
            ("post", "/api/users/{name}/ban"): live.call("POST", "/api/users/gil/ban", organizer.body["token"]),
            ("post", "/api/users/{name}/unban"): live.call("POST", "/api/users/gil/unban", organizer.body["token"]),
            ("post", "/api/submissions/{submission_id}/rerun"): live.call(
                "POST", f"/api/submissions/{sent.body['id']}/rerun", organizer.body["token"]
            ),
            ("post", "/api/announcements"): live.call(
                "POST", "/api/announcements", organizer.body["token"], json_body={"text": "*Hi*"}
            ),
            ("get", "/api/announcements"): live.call("GET", "/api/announcements"),
            ("delete", "/api/announcements/{announcement_id}"): live.call(
                "DELETE", "/api/announcements/1", organizer.body["token"]
            ),
            ("get", "/api/teams"): live.call("GET", "/api/teams", organizer.body["token"]),
            ("get", "/api/teams/{name}"): live.call("GET", "/api/teams/gamma", organizer.body["token"]),
            ("patch", "/api/teams/{name}"): live.call(
                "PATCH", "/api/teams/gamma", organizer.body["token"], json_body={"name": "gamma"}
            ),
            ("delete", "/api/teams/{name}/members/{user}"): live.call(
                "DELETE", "/api/teams/gamma/members/gil", organizer.body["token"]
            ),
            ("post", "/api/teams/{name}/members"): live.call(
                "POST", "/api/teams/gamma/members", organizer.body["token"], json_body={"user": "gil"}
            ),
        }
        with writing(service.engine) as connection:
            accounts.add_team(connection, "delta", clock())  # a team that sends nothing, removed at once
        answers[("delete", "/api/teams/{name}")] = live.call("DELETE", "/api/teams/delta", organizer.body["token"])
        answers[("get", "/api/contests")] = live.call("GET", "/api/contests")
        with writing(service.engine) as connection:  # two users of no team: one creates a team, one joins it
            for user in ("hal", "ivy"):
                accounts.add_user(connection, user, "a-long-password-6", None, False, clock())
        hal, ivy = _login(live, "hal", "a-long-password-6"), _login(live, "ivy", "a-long-password-6")
        answers[("post", "/api/team")] = live.call("POST", "/api/team", hal, json_body={"name": "eta"})
        code = live.call("GET", "/api/team/invitation", hal).body["invitation"]
        answers[("post", "/api/team/join")] = live.call("POST", "/api/team/join", ivy, json_body={"invitation": code})
        assert [answers[("post", path)].status for path in ("/api/team", "/api/team/join")] == [201, 201]
        answers[("post", "/api/team/leave")] = live.call("POST", "/api/team/leave", ivy)  # and leaves it
        with writing(service.engine) as connection:  # off the board read above
            accounts.remove_team(connection, accounts.team_id(connection, "eta"))
        assert {key for key in answers if key[1].startswith("/api/")} | {
            ("post", "/api/submissions")
        } | downloads == api - prefixed  # the prefixed: the same handlers (above)
        for (method, path), answer in answers.items():
            assert 200 <= answer.status < 300, (method, path, answer.body)
            _check(spec, method, path, answer.body)

        assert answers[("post", "/api/submissions/{submission_id}/rerun")].body == {"id": sent.body["id"], "round": 2}
        while Worker(service.engine, service.data, clock=clock).work_once():  # the re-run scored
            pass

        # the declared models keep every field, of the same type, as the domain functions give them
        board = answers[("get", "/api/leaderboard")].body
        with reading(service.engine) as connection:
            contest_now = service.contests.get()
            assert board == leaderboard(connection, contest_now, clock())
            assert board["teams"][0]["scores"] and board["teams"][0]["status"] == "scored"
            assert answers[("get", "/api/contest")].body == contest_view(connection, contest_now, clock())
            olga = accounts.caller_of(connection, organizer.body["token"], clock())
            assert olga is not None
            now_seen = live.call(
                "GET", "/api/submissions", organizer.body["token"]
            ).body  # after the cancel and the selection
            assert now_seen == visible_submissions(connection, contest_now, olga, clock())
            assert [(s["status"], s["selected"]) for s in now_seen] == [
                ("cancelled", False),
                ("rejected", False),
                ("scored", True),
            ]
        shown = answers[("get", "/api/submissions/{submission_id}")].body
        assert shown["status"] == "scored" and shown["result"]["view"] == "public" and shown["round"] == 1
        assert "closed" not in answers[("get", "/api/contest")].body  # a key absent from the answer stays absent


def test_no_module_of_the_service_imports_the_app() -> None:
    """The app assembles the routers; nothing imports it back (the pages imported it: a circle app -> pages -> app)."""
    folder = Path(podium.service.__file__).parent
    importers = []
    for path in sorted(folder.rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.ImportFrom):
                names = [node.module or ""] + [f"{node.module}.{alias.name}" for alias in node.names]
            else:
                names = [alias.name for alias in node.names] if isinstance(node, ast.Import) else []
            # web_processes.py is a web process's entry point (podium serve --web-processes): it starts the app, as the CLI does
            if "podium.service.app" in names and path.name != "web_processes.py":
                importers.append(str(path.relative_to(folder)))
    assert not importers
