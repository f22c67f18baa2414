"""Team management by a contest's organizers, on a real uvicorn: the API, the pages without JavaScript, and who may act in which contest.

One database holds two contests: A (``test-glas``) and B (``test-fuzzy-jaccard``). A server
serves one contest at a time until ``serve --contests`` comes, so the module's server serves A,
and a test that needs B served flips which one the database serves (the rows of the other are
kept, withdrawn); the service reads that on every request, as it reads a new contest file.

In A: teams alpha (ann), beta (bob; it has a submission), gamma; the organizer olga. In B: a team
alpha too (ann, bea); its organizer oscar. root is the site's administrator; cid is in no team.
"""

from __future__ import annotations

import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import select, update

from podium.contest import load
from podium.service import accounts
from podium.service.app import Service
from podium.service.database import connect, migrate, reading, writing
from podium.service.server import register_contest
from podium.service.tables import contests, teams, users
from service_helpers import Clock, LiveServer, at, demo_archive, write_contest
from test_dashboard import _post, _session

PASSWORD = "{}-password-1"
USERS = ("ann", "bob", "bea", "cid", "olga", "oscar", "root")


@dataclass
class Served:
    live: LiveServer
    service: Service
    a: str
    b: str
    contest: Path
    tmp: Path
    team_tokens: dict[str, str]

    def call(self, method: str, path: str, token: str | None = None, **kwargs: Any) -> Any:
        return self.live.call(method, path, token, **kwargs)

    def login(self, user: str) -> Any:
        return self.call("POST", "/api/tokens", json_body={"user": user, "password": PASSWORD.format(user)})

    def token(self, user: str) -> str:
        answer = self.login(user)
        assert answer.status == 201, answer.body
        return str(answer.body["token"])

    def serve_only(self, contest: str) -> None:
        """Make the database serve ``contest`` alone (the other's rows kept)."""
        with writing(self.service.engine) as connection:
            connection.execute(update(contests).values(withdrawn=contests.c.id != contest))


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Served]:
    tmp = tmp_path_factory.mktemp("organizer-teams")
    first, second = (load(write_contest(tmp / name, name)) for name in ("glas", "fuzzy-jaccard"))
    engine = connect(f"sqlite:///{tmp / 'podium.db'}")
    migrate(engine)
    for contest in (first, second):
        register_contest(engine, contest, alone=False)
    a, b = first.id, second.id
    clock = Clock(at("2026-03-10T12:00:00Z"))
    now = clock()
    tokens = {}
    with writing(engine) as connection:
        ids = {name: accounts.add_user(connection, name, PASSWORD.format(name), None, False, now) for name in USERS}
        for contest, name, members in (
            (a, "alpha", "ann"),
            (a, "beta", "bob"),
            (a, "gamma", ""),
            (b, "alpha", "ann bea"),
        ):
            team = accounts.add_team(connection, name, now, contest)
            tokens[f"{contest}/{name}"] = accounts.new_token(connection, team, False, "test", now)
            for member in members.split():
                accounts.join(connection, ids[member], team)
        accounts.add_organizer(connection, ids["olga"], a)
        accounts.add_organizer(connection, ids["oscar"], b)
        connection.execute(update(users).where(users.c.id == ids["root"]).values(admin=True))
        connection.execute(update(contests).where(contests.c.id == b).values(withdrawn=True))
    service = Service(engine, tmp / "data", clock)
    with LiveServer(service) as live:
        served = Served(live, service, a, b, first.path, tmp, tokens)
        archive = demo_archive(first.path, tmp / "packed")
        sent = served.call(
            "POST", "/api/submissions", tokens[f"{a}/beta"], body=archive, query={"filename": "s.tar.gz"}
        )
        assert sent.status == 201, sent.body
        yield served


def _names(rows: list[dict[str, Any]]) -> list[str]:
    return [row["team"] for row in rows]


def test_an_organizer_lists_renames_and_removes_the_contests_teams_and_moves_members(served: Served) -> None:
    olga = served.token("olga")
    listed = served.call("GET", "/api/teams", olga)
    assert listed.status == 200 and _names(listed.body) == ["alpha", "beta", "gamma"]  # A's only
    alpha, beta = listed.body[0], listed.body[1]
    assert alpha["members"] == ["ann"]  # not B's alpha's bea
    assert (beta["members"], beta["submissions"], beta["banned"], beta["approved"]) == (["bob"], 1, False, True)
    assert beta["last"] is not None and alpha["last"] is None and alpha["created"].startswith("2026-03-10T12:00")

    renamed = served.call("PATCH", "/api/teams/gamma", olga, json_body={"name": "Gamma Ray"})
    assert renamed.status == 200 and renamed.body["team"] == "Gamma Ray"
    taken = served.call("PATCH", "/api/teams/Gamma%20Ray", olga, json_body={"name": "ALPHA"})
    assert taken.status == 409 and "already a team 'ALPHA'" in taken.body["detail"]
    bad = served.call("PATCH", "/api/teams/Gamma%20Ray", olga, json_body={"name": " lead"})
    assert bad.status == 422

    added = served.call("POST", "/api/teams/Gamma%20Ray/members", olga, json_body={"user": "cid"})
    assert added.status == 201 and added.body["members"] == ["cid"]
    twice = served.call("POST", "/api/teams/Gamma%20Ray/members", olga, json_body={"user": "ann"})
    assert twice.status == 409 and "one team per contest" in twice.body["detail"]
    assert served.call("POST", "/api/teams/Gamma%20Ray/members", olga, json_body={"user": "nobody"}).status == 404
    assert served.call("POST", "/api/teams/nope/members", olga, json_body={"user": "cid"}).status == 404
    assert served.call("GET", "/api/submissions", served.token("cid")).status == 200  # cid acts as the team now
    out = served.call("DELETE", "/api/teams/Gamma%20Ray/members/cid", olga)
    assert out.status == 200 and out.body["members"] == []
    again = served.call("DELETE", "/api/teams/Gamma%20Ray/members/cid", olga)
    assert again.status == 409 and "no member" in again.body["detail"]
    cid = served.token("cid")  # in no team of A now: sees no team's submissions, files or tokens
    assert served.call("GET", "/api/submissions", cid).body == []
    sent = served.call("GET", "/api/submissions", served.team_tokens[f"{served.a}/beta"]).body[0]["id"]
    assert served.call("GET", f"/api/submissions/{sent}/file", cid).status == 404
    assert served.call("GET", "/api/tokens", cid).status == 403
    assert served.call("DELETE", "/api/tokens/1", cid).status == 403

    refused = served.call("DELETE", "/api/teams/beta", olga)
    assert refused.status == 409 and "ban it instead" in refused.body["detail"]  # its submission stays on the record
    removed = served.call("DELETE", "/api/teams/Gamma%20Ray", olga)
    assert removed.status == 200 and removed.body == {"team": "Gamma Ray", "removed": True}
    assert served.call("GET", "/api/teams/Gamma%20Ray", olga).status == 404
    assert _names(served.call("GET", "/api/teams", olga).body) == ["alpha", "beta"]

    paths = served.call("GET", "/openapi.json").body["paths"]
    assert {"/api/teams", "/api/teams/{name}", "/api/teams/{name}/members", "/api/teams/{name}/members/{user}"} <= set(
        paths
    )
    assert set(paths["/api/teams/{name}"]) == {"get", "patch", "delete"}


def test_a_ban_in_one_contest_leaves_the_same_named_team_of_another_alone(served: Served) -> None:
    olga = served.token("olga")
    assert served.call("POST", "/api/teams/alpha/ban", olga).body["banned"] is True
    try:
        with reading(served.service.engine) as connection:
            banned = dict(
                connection.execute(select(teams.c.contest, teams.c.banned).where(teams.c.name == "alpha")).all()
            )
        assert banned == {served.a: True, served.b: False}
    finally:
        served.call("POST", "/api/teams/alpha/unban", olga)


@pytest.mark.parametrize(
    ("method", "path", "body"),
    [
        ("GET", "/api/teams", None),
        ("GET", "/api/teams/alpha", None),
        ("PATCH", "/api/teams/alpha", {"name": "x"}),
        ("DELETE", "/api/teams/alpha", None),
        ("POST", "/api/teams/alpha/members", {"user": "cid"}),
        ("DELETE", "/api/teams/alpha/members/ann", None),
    ],
)
def test_team_management_is_for_organizers(served: Served, method: str, path: str, body: Any) -> None:
    team = served.call(method, path, served.team_tokens[f"{served.a}/beta"], json_body=body)
    assert team.status == 403 and "organizer" in team.body["detail"]
    assert served.call(method, path, None, json_body=body).status == 401
    oscar = served.call(method, path, served.token("oscar"), json_body=body)  # B's organizer, in A
    assert oscar.status == 403


def test_an_organizer_resets_the_password_of_the_contests_members_only(served: Served) -> None:
    olga, root = served.token("olga"), served.token("root")
    link = served.call("POST", "/api/users/bob/reset", olga)
    assert link.status == 200 and "/reset/" in link.body["link"]
    # the administrator, B's organizer, B's member, a member of A and of B (the account is the site's), a user of no team of A
    for user in ("root", "oscar", "bea", "ann", "cid"):
        refused = served.call("POST", f"/api/users/{user}/reset", olga)
        assert refused.status == 403 and "ask the site's administrator" in refused.body["detail"], user
    assert served.call("POST", "/api/users/nobody/reset", olga).status == 404
    assert served.call("POST", "/api/users/oscar/reset", root).status == 200  # the administrator resets anyone


def test_an_organizer_bans_the_contests_members_only(served: Served) -> None:
    olga, root = served.token("olga"), served.token("root")
    for user in ("root", "oscar", "bea", "ann"):  # a ban holds on the whole site: none of them is A's alone to lock out
        refused = served.call("POST", f"/api/users/{user}/ban", olga)
        assert refused.status == 403 and "ask the site's administrator" in refused.body["detail"], user
    assert served.call("POST", "/api/users/nobody/ban", olga).status == 404
    try:
        assert served.call("POST", "/api/users/bob/ban", olga).body == {"user": "bob", "banned": True}
        assert served.call("POST", "/api/users/oscar/ban", root).status == 200
        assert served.login("oscar").status == 403
    finally:
        assert served.call("POST", "/api/users/bob/unban", olga).status == 200
        assert served.call("POST", "/api/users/oscar/unban", root).status == 200


def test_tokens_of_one_contest_are_refused_in_the_other_and_the_administrators_work_in_both(served: Served) -> None:
    with writing(served.service.engine) as connection:
        made_for_b = accounts.new_token(connection, None, True, "test", served.service.clock(), contest=served.b)
    olga, oscar, root = served.token("olga"), served.token("oscar"), served.token("root")
    b_team = served.team_tokens[f"{served.b}/alpha"]
    try:
        for token in (made_for_b, b_team):  # served: A
            refused = served.call("GET", "/api/teams", token)
            assert refused.status == 403 and f"this token is for the contest {served.b}" in refused.body["detail"]
        assert served.call("GET", "/api/teams", oscar).status == 403  # B's organizer's log-in, in A
        assert served.call("GET", "/api/teams", olga).status == 200
        assert served.call("GET", "/api/teams", root).status == 200
        served.serve_only(served.b)
        assert served.call("GET", "/api/teams", made_for_b).status == 200
        assert served.call("GET", "/api/teams", oscar).status == 200
        assert served.call("GET", "/api/teams", olga).status == 403  # A's organizer's log-in, in B
        assert _names(served.call("GET", "/api/teams", root).body) == ["alpha"]  # B's, for the administrator
    finally:
        served.serve_only(served.a)


def test_a_banned_teams_member_logs_in_and_acts_in_their_other_contest_only(served: Served) -> None:
    olga = served.token("olga")
    ann_in_a = served.token("ann")
    assert served.call("POST", "/api/teams/alpha/ban", olga).status == 200
    try:
        login = served.login("ann")
        assert login.status == 403 and "team alpha is banned" in login.body["detail"]
        assert served.call("GET", "/api/submissions", ann_in_a).status == 403
        served.serve_only(served.b)
        ann_in_b = served.token("ann")  # B's alpha is not banned
        assert served.call("GET", "/api/submissions", ann_in_b).status == 200
        assert served.call("GET", "/api/submissions", ann_in_a).status == 200  # her earlier log-in, read in B
        served.serve_only(served.a)
        assert served.call("GET", "/api/submissions", ann_in_b).status == 403  # and refused in A
    finally:
        served.serve_only(served.a)
        served.call("POST", "/api/teams/alpha/unban", olga)


def test_the_log_in_refusal_is_read_in_the_contest_logged_in_to(tmp_path: Path, database_url: str) -> None:
    """Both contests served at once: a banned team's member is refused a log-in to its contest, not to the other or the site."""
    engine = connect(database_url)
    migrate(engine)
    first, second = (load(write_contest(tmp_path / name, name)) for name in ("glas", "fuzzy-jaccard"))
    for contest in (first, second):
        register_contest(engine, contest, alone=False)
    now = at("2026-03-10T12:00:00Z")
    with writing(engine) as connection:
        ann = accounts.add_user(connection, "ann", PASSWORD.format("ann"), None, False, now)
        for contest in (first.id, second.id):
            accounts.join(connection, ann, accounts.add_team(connection, "alpha", now, contest))
        connection.execute(update(teams).where(teams.c.contest == first.id).values(banned=True))
        token = accounts.new_token(connection, None, False, "login of ann", now + timedelta(seconds=1), user_id=ann)
    with reading(engine) as connection:
        row = accounts.user_row(connection, "ann")
        assert "team alpha is banned" in (accounts.login_refusal(connection, row, first.id) or "")
        assert accounts.login_refusal(connection, row, second.id) is None
        assert accounts.login_refusal(connection, row, None) is None  # a log-in to the whole site
        in_first, in_second = (accounts.caller_of(connection, token, now, c.id) for c in (first, second))
    assert in_first is not None and in_first.refused is not None and "banned" in in_first.refused
    assert in_second is not None and in_second.refused is None and in_second.team == "alpha"
    engine.dispose()


def test_the_team_pages_forms_work_without_javascript(served: Served) -> None:
    opener, dashboard, csrf = _session(served, "olga", "/organizer")
    assert 'href="/organizer/teams/alpha"' in dashboard and "/organizer/teams/beta" in dashboard
    with writing(served.service.engine) as connection:
        accounts.add_team(connection, "delta one", served.service.clock(), served.a)
    with opener.open(served.live.url + "/organizer/teams/delta%20one", timeout=30) as response:
        page = response.read().decode()
    assert "<h1>Team delta one</h1>" in page and "has no member" in page and "Remove team delta one" in page
    added = _post(
        served, opener, "/organizer/teams/members", {"csrf": csrf, "team": "delta one", "user": "cid", "change": "add"}
    )
    assert "cid is a member of team delta one" in added and 'aria-label="Take cid out of the team"' in added
    with pytest.raises(urllib.error.HTTPError) as twice:
        _post(
            served,
            opener,
            "/organizer/teams/members",
            {"csrf": csrf, "team": "delta one", "user": "ann", "change": "add"},
        )
    assert twice.value.code == 409 and "one team per contest" in twice.value.read().decode()
    link = _post(served, opener, "/account/reset-link", {"csrf": csrf, "user": "cid"})
    assert "A reset link for cid" in link and "/reset/" in link
    with pytest.raises(urllib.error.HTTPError) as admin:
        _post(served, opener, "/account/reset-link", {"csrf": csrf, "user": "root"})
    assert admin.value.code == 403
    out = _post(
        served,
        opener,
        "/organizer/teams/members",
        {"csrf": csrf, "team": "delta one", "user": "cid", "change": "remove"},
    )
    assert "cid is no longer a member of team delta one" in out
    banned = _post(
        served, opener, "/organizer/team", {"csrf": csrf, "team": "delta one", "change": "ban", "back": "team"}
    )
    assert "team delta one is banned" in banned and "<h1>Team delta one</h1>" in banned and "Lift the ban" in banned
    _post(served, opener, "/organizer/team", {"csrf": csrf, "team": "delta one", "change": "unban", "back": "team"})
    renamed = _post(served, opener, "/organizer/teams/rename", {"csrf": csrf, "team": "delta one", "new": "Delta"})
    assert "team delta one is now Delta" in renamed and "<h1>Team Delta</h1>" in renamed
    with opener.open(served.live.url + "/organizer/teams/beta", timeout=30) as response:
        beta = response.read().decode()
    assert "cannot be removed. Ban it instead" in beta and "/organizer/teams/remove" not in beta
    with pytest.raises(urllib.error.HTTPError) as kept:
        _post(served, opener, "/organizer/teams/remove", {"csrf": csrf, "team": "beta"})
    assert kept.value.code == 409
    removed = _post(served, opener, "/organizer/teams/remove", {"csrf": csrf, "team": "Delta"})
    assert "team Delta is removed" in removed and "Organizers' dashboard" in removed

    with pytest.raises(urllib.error.HTTPError) as forged:  # without the session's CSRF token
        _post(served, opener, "/organizer/teams/rename", {"csrf": "wrong", "team": "alpha", "new": "x"})
    assert forged.value.code == 403
    member, _, member_csrf = _session(served, "bob", "/submissions")  # a team's member, with a right CSRF token
    for path, fields in (
        ("/organizer/teams/rename", {"team": "alpha", "new": "x"}),
        ("/organizer/teams/remove", {"team": "alpha"}),
        ("/organizer/teams/members", {"team": "alpha", "user": "cid", "change": "add"}),
    ):
        with pytest.raises(urllib.error.HTTPError) as refused:
            _post(served, member, path, {**fields, "csrf": member_csrf})
        assert refused.value.code == 403, path
    for path in ("/organizer/teams/alpha", "/organizer/figures"):
        with pytest.raises(urllib.error.HTTPError) as page_refused:
            member.open(served.live.url + path, timeout=30)
        assert page_refused.value.code == 403, path
    with opener.open(served.live.url + "/organizer/figures", timeout=30) as response:  # the dashboard's poll
        part = response.read().decode()
    assert '<h2 id="queue">Queue and workers</h2>' in part and "<html" not in part
