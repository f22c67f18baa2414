"""A user signed in to the site creates or joins a team in a second contest, without a new account: every refusal.

One live server (uvicorn, in a thread, with a clock the tests set) on SQLite, then one on PostgreSQL, serves a folder of four contest
files: ``spring`` (open to 2099, where the users first signed up), ``autumn`` (a team of at most 2, registration
until 2026-12-01T00:00:00Z, terms to accept), ``winter`` (teams wait for the organizers' approval) and ``closed``
(no sign-ups). Each refusal is called through the API as a participant would, and the rows are read back.
"""

from __future__ import annotations

import threading
import urllib.error
import urllib.request
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from sqlalchemy import select, update

from podium.challenges import get
from podium.cli import cli
from podium.service import accounts, invitations
from podium.service.app import Service
from podium.service.client import packed
from podium.service.database import connect, migrate, reading, writing
from podium.service.server import read_folder, serve_folder
from podium.service.tables import memberships, teams, users
from service_helpers import Clock, LiveServer, at
from test_many_contests_isolation import CONTEST as BASE

PASSWORD = "a long password 7"
CONTEST = BASE.replace("self_registration = true", "{service}")  # the two-contest test's file, its [service] set here
SERVICE = {
    "spring": "self_registration = true",
    "autumn": 'self_registration = true\nmax_team_size = 2\nregistration_end = 2026-12-01T00:00:00Z\nterms = "terms.md"',
    "winter": "self_registration = true\napproval = true",
    "closed": "self_registration = false",
}
CLOSES = at("2026-12-01T00:00:00Z")
NOW = at("2026-11-26T12:00:00Z")


@dataclass
class Site:
    server: LiveServer
    service: Service
    clock: Clock
    tokens: dict[str, str]  # each user's log-in token (API): ann, bob, cat, dan, eve, olga (organizer of autumn), root


@pytest.fixture(scope="module", params=["sqlite", "postgresql"])
def site(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Site]:
    root = tmp_path_factory.mktemp("joining")
    demo = get("glas").write_demo(root / "demo")
    folder = root / "contests"
    for name, service in SERVICE.items():
        (folder / name).mkdir(parents=True)
        (folder / name / "contest.toml").write_text(CONTEST.format(id=name, truth=demo.truth, service=service))
    (folder / "autumn" / "terms.md").write_text("# Terms\n\nPlay fair.\n")
    url = f"sqlite:///{root / 'podium.db'}"
    engine = connect(url if request.param == "sqlite" else request.getfixturevalue("postgres_server").new_database())
    migrate(engine)
    served, problems = read_folder(folder)
    assert problems == [], problems
    serve_folder(engine, folder, served)
    clock = Clock(NOW)
    tokens = {}
    with writing(engine) as connection:
        spring = accounts.add_team(connection, "springteam", NOW, "spring")
        for name in ("ann", "bob", "cat", "dan", "eve", "olga", "root"):
            user = accounts.add_user(
                connection,
                name,
                PASSWORD,
                spring if name in ("ann", "bob") else None,  # ann and bob signed up in spring
                name == "olga",
                NOW,
                contest="autumn",
                admin=name == "root",
            )
            tokens[name] = accounts.new_token(connection, None, False, "test", NOW, user_id=user)
        tokens["springteam"] = accounts.new_token(connection, spring, False, "test", NOW)  # a team's, not a user's
    service = Service(engine, root / "data", clock)
    with LiveServer(service) as server:
        yield Site(server, service, clock, tokens)
    engine.dispose()


def _create(site: Site, contest: str, who: str, name: str, terms: bool = True) -> Any:
    body = {"name": name, "accept_terms": terms}
    return site.server.call("POST", f"/api/contests/{contest}/team", site.tokens[who], json_body=body)


def _join(site: Site, contest: str, who: str, code: str) -> Any:
    body = {"invitation": code, "accept_terms": True}
    return site.server.call("POST", f"/api/contests/{contest}/team/join", site.tokens[who], json_body=body)


def _code(site: Site, contest: str, team: str) -> str:
    with writing(site.service.engine) as connection:
        return invitations.code_of(connection, accounts.team_id(connection, team, contest), site.clock()).code


def _members(site: Site, contest: str, team: str) -> list[str]:
    with reading(site.service.engine) as connection:
        found = connection.execute(
            select(users.c.name)
            .select_from(memberships.join(users, users.c.id == memberships.c.user_id).join(teams))
            .where(teams.c.contest == contest, teams.c.name == team)
            .order_by(users.c.name)
        )
        return list(found.scalars())


def test_a_user_of_one_contest_creates_a_team_in_another_and_a_second_joins_it(site: Site) -> None:
    made = _create(site, "autumn", "ann", "Maples")
    assert made.status == 201, made.body
    assert made.body == {"contest": "autumn", "team": "Maples", "created": True, "approved": True, "members": 1}
    joined = _join(site, "autumn", "bob", _code(site, "autumn", "Maples"))
    assert joined.status == 201 and joined.body["team"] == "Maples" and joined.body["members"] == 2, joined.body
    assert _members(site, "autumn", "Maples") == ["ann", "bob"] and _members(site, "spring", "springteam") == [
        "ann",
        "bob",
    ]
    # the same log-in token is ann's in each contest: her team there
    for contest, team in (("spring", "springteam"), ("autumn", "Maples")):
        assert site.server.call("GET", f"/api/contests/{contest}/account", site.tokens["ann"]).body["team"] == team
    listed = {c["id"]: c["registration_open"] for c in site.server.call("GET", "/api/contests").body}
    assert listed == {"spring": True, "autumn": True, "winter": True, "closed": False}


def test_a_second_team_in_one_contest_is_refused_naming_the_first(site: Site) -> None:
    _create(site, "autumn", "cat", "Cedars")  # cat's team, whether or not an earlier test made it
    second = _create(site, "autumn", "cat", "Birches")
    assert second.status == 409 and "you are in team Cedars in contest autumn already" in second.body["detail"]
    by_code = _join(site, "autumn", "ann", _code(site, "autumn", "Cedars"))
    assert by_code.status == 409 and "team Maples" in by_code.body["detail"], by_code.body


def test_a_name_differing_only_in_case_is_taken(site: Site) -> None:
    _create(site, "spring", "dan", "Oaks")
    taken = _create(site, "spring", "eve", "OAKS")
    assert taken.status == 409 and "names differing only in case are one name" in taken.body["detail"], taken.body
    assert _create(site, "autumn", "eve", "oaks").status == 201  # the same name in another contest is another team
    with writing(site.service.engine) as connection:  # eve leaves it for the next tests
        accounts.remove_team(connection, accounts.team_id(connection, "oaks", "autumn"))


def test_a_name_a_page_shows_as_another_or_an_address_with_a_final_line_feed_is_refused(site: Site) -> None:
    """``$`` matches before a final line feed: "springteam\\n" passed the name's pattern, a second team that a page
    shows as springteam (HTML folds the line feed; two spaces too), a user "ann\\n" beside ann, and an address ending a
    mail's header."""
    assert _create(site, "spring", "eve", "Top Elms").status == 201
    for name in ("springteam\n", "Elms\n", "Elms\r\n", "Top  Elms", "Top\tElms", "Top \nElms"):
        refused = _create(site, "spring", "eve", name)
        assert refused.status == 422 and "1 to 64 letters" in refused.body["detail"], (name, refused.body)
    signed = site.server.call(
        "POST", "/api/contests/spring/register", json_body={"user": "ann\n", "password": PASSWORD, "team": "Elms"}
    )
    assert signed.status == 422 and "1 to 64 letters" in str(signed.body), signed.body
    with reading(site.service.engine) as connection:
        assert connection.execute(select(teams.c.name).where(teams.c.name.like("%\n%"))).first() is None
        assert connection.execute(select(users.c.name).where(users.c.name.like("%\n%"))).first() is None
        accounts.remove_team(connection, accounts.team_id(connection, "Top Elms", "spring"))  # eve leaves it
    address = site.server.call(
        "PUT", "/api/contests/spring/account", site.tokens["eve"], json_body={"email": "e@x.org\n"}
    )
    assert address.status == 422 and "is not an e-mail address" in address.body["detail"], address.body


def test_a_code_pasted_with_white_space_joins_on_sign_up_as_by_the_join_api(site: Site) -> None:
    code = f"  {_code(site, 'spring', 'Oaks')}\n"  # as copied from a page or a message
    signed = site.server.call(
        "POST", "/api/contests/spring/register", json_body={"user": "pasted", "password": PASSWORD, "invitation": code}
    )
    assert signed.status == 201 and signed.body["team"] == "Oaks", signed.body
    assert "pasted" in _members(site, "spring", "Oaks")


def test_registration_closes_at_its_exact_second(site: Site) -> None:
    """``registration_end`` is the first second closed, as a phase's end; the request is decided by the clock read once."""
    try:
        site.clock.now = CLOSES
        closed = _create(site, "autumn", "eve", "Latecomers")
        assert closed.status == 403 and "closed at 2026-12-01 00:00:00 UTC" in closed.body["detail"], closed.body
        assert _join(site, "autumn", "eve", _code(site, "autumn", "Cedars")).status == 403
        listed = {c["id"]: c["registration_open"] for c in site.server.call("GET", "/api/contests").body}
        assert listed["autumn"] is False and listed["spring"] is True
        registered = site.server.call(
            "POST",
            "/api/contests/autumn/register",
            json_body={"user": "newcomer", "password": PASSWORD, "team": "Newcomers"},
        )
        assert registered.status == 403, registered.body  # a new account's sign-up closes with it
        site.clock.now = CLOSES - timedelta(seconds=1)
        opened = _create(site, "autumn", "eve", "Latecomers")
        assert opened.status == 201, opened.body
    finally:
        site.clock.now = NOW
    with writing(site.service.engine) as connection:
        accounts.remove_team(connection, accounts.team_id(connection, "Latecomers", "autumn"))


def test_a_code_of_another_contest_is_unknown_here(site: Site) -> None:
    refused = _join(site, "autumn", "eve", _code(site, "spring", "springteam"))
    assert refused.status == 404 and "springteam" not in str(refused.body), refused.body


def test_an_expired_or_revoked_code_is_refused(site: Site) -> None:
    code = _code(site, "spring", "Oaks")
    with writing(site.service.engine) as connection:  # expires at this very second: over
        connection.execute(update(teams).where(teams.c.invitation == code).values(invitation_expires=NOW))
    expired = _join(site, "spring", "eve", code)
    assert expired.status == 410 and "expired on" in expired.body["detail"] and "Oaks" not in expired.body["detail"]
    code = _code(site, "spring", "Oaks")  # a new one, made on the next look
    with writing(site.service.engine) as connection:
        invitations.revoke(connection, accounts.team_id(connection, "Oaks", "spring"))
    revoked = _join(site, "spring", "eve", code)
    assert revoked.status == 410 and "revoked" in revoked.body["detail"], revoked.body


def test_a_full_team_takes_no_one_even_two_at_once(site: Site) -> None:
    full = _join(site, "autumn", "eve", _code(site, "autumn", "Maples"))  # ann and bob: 2 of 2
    assert full.status == 409 and "full: it has 2 members" in full.body["detail"], full.body
    # Cedars has one place left: dan and eve ask for it at once, one gets it
    code, answers = _code(site, "autumn", "Cedars"), {}

    def ask(who: str) -> None:
        answers[who] = _join(site, "autumn", who, code).status

    racing = [threading.Thread(target=ask, args=(who,)) for who in ("dan", "eve")]
    for thread in racing:
        thread.start()
    for thread in racing:
        thread.join(timeout=60)
    assert sorted(answers.values()) == [201, 409], answers
    assert len(_members(site, "autumn", "Cedars")) == 2


def test_the_contest_terms_must_be_accepted(site: Site) -> None:
    refused = _create(site, "autumn", "olga", "Firs", terms=False)  # olga organizes autumn, but terms come first
    assert refused.status == 422 and "accept the terms of contest autumn" in refused.body["detail"]


def test_organizers_team_tokens_and_contests_without_sign_ups_are_refused(site: Site) -> None:
    assert _create(site, "autumn", "olga", "Firs").status == 403  # autumn's organizer
    assert _create(site, "spring", "root", "Admins").status == 403  # the site's administrator organizes every contest
    team = site.server.call("POST", "/api/contests/spring/team", site.tokens["springteam"], json_body={"name": "x"})
    assert team.status == 403 and "log in" in team.body["detail"], team.body
    closed = _create(site, "closed", "olga", "Firs")
    assert closed.status == 403 and "takes no sign-ups" in closed.body["detail"], closed.body
    olga = _create(site, "spring", "olga", "Firs")  # an organizer of autumn competes in spring
    assert olga.status == 201, olga.body


def test_a_banned_user_is_refused_everywhere_a_banned_team_only_in_its_contest(site: Site) -> None:
    """A site-wide ban refuses the user in every contest; spring's ban of a team leaves its members free in the others."""
    with writing(site.service.engine) as connection:
        connection.execute(update(teams).where(teams.c.name == "springteam").values(banned=True))
        connection.execute(update(users).where(users.c.name == "dan").values(banned=True))
    try:
        for contest in ("winter", "spring"):
            refused = _create(site, contest, "dan", "Banned")
            assert refused.status == 403 and "user dan is banned" in refused.body["detail"], refused.body
        assert site.server.call("GET", "/api/contests/spring/submissions", site.tokens["ann"]).status == 403
        made = _create(site, "winter", "ann", "Pines")  # ann's spring team is banned; winter takes her
        assert made.status == 201, made.body
    finally:
        with writing(site.service.engine) as connection:
            connection.execute(update(teams).where(teams.c.name == "springteam").values(banned=False))
            connection.execute(update(users).where(users.c.name == "dan").values(banned=False))


def test_a_team_created_where_organizers_approve_waits_for_them(site: Site) -> None:
    made = _create(site, "winter", "bob", "Spruces")
    assert made.status == 201 and made.body["approved"] is False, made.body
    sent = site.server.call(
        "POST", "/api/contests/winter/submissions", site.tokens["bob"], body=b"x", query={"track": "main"}
    )
    assert sent.status == 403 and "waits for the organizers' approval" in sent.body["detail"], sent.body


def test_the_routes_are_in_the_openapi_document_prefixed_and_not(site: Site) -> None:
    paths = site.server.call("GET", "/openapi.json").body["paths"]
    for path in (
        "/api/team",
        "/api/team/join",
        "/api/contests/{contest_id}/team",
        "/api/contests/{contest_id}/team/join",
    ):
        assert "post" in paths[path], path
    schema = paths["/api/contests/{contest_id}/team"]["post"]["responses"]["201"]["content"]["application/json"]
    assert schema["schema"]["$ref"].endswith("/TeamJoined")


@pytest.mark.parametrize("verb", ["create", "join"])
def test_the_commands_create_and_join_through_the_server(site: Site, verb: str) -> None:
    """Each case stands alone: the join case makes the team eve joins, with its first member gus (it took the create
    case's team, and so failed whenever it ran without it: alone, or first of the two under ``--lf`` or ``-k``)."""
    team, who = ("Willows", "cat") if verb == "create" else ("Alders", "eve")
    if verb == "join":
        with writing(site.service.engine) as connection:
            alders = accounts.add_team(connection, team, NOW, "spring")
            accounts.add_user(connection, "gus", PASSWORD, alders, False, NOW, contest="spring")
    shown = CliRunner().invoke(
        cli,
        ["team", verb, team, "--server", site.server.url, "--contest", "spring", "--token", site.tokens[who]]
        if verb == "create"
        else [
            "team",
            verb,
            _code(site, "spring", team),
            "--server",
            site.server.url + "/c/spring",
            "--token",
            site.tokens[who],
        ],
    )
    assert shown.exit_code == 0, shown.output
    assert shown.output == (
        f"created team {team} in contest spring (1 member)\n"
        if verb == "create"
        else f"joined team {team} in contest spring (2 members)\n"
    )
    again = CliRunner().invoke(
        cli,
        ["team", "create", "Else", "--server", site.server.url, "--contest", "spring", "--token", site.tokens[who]],
    )
    assert again.exit_code == 2 and f"409: you are in team {team} in contest spring already" in again.output
    both = CliRunner().invoke(
        cli, ["team", "join", "x", "--server", site.server.url + "/c/spring", "--contest", "spring", "--token", "t"]
    )
    assert both.exit_code == 2 and "names a contest already" in both.output


def _member_of(site: Site, contest: str, team: str, *names: str) -> dict[str, str]:
    """The team ``team`` of ``contest`` made with the users ``names`` as members; each user's log-in token."""
    made = {}
    with writing(site.service.engine) as connection:
        team_id = accounts.add_team(connection, team, NOW, contest)
        for name in names:
            user = accounts.add_user(connection, name, PASSWORD, team_id, False, NOW, contest=contest)
            made[name] = accounts.new_token(connection, None, False, "test", NOW, user_id=user)
    site.tokens.update(made)
    return made


def _session(site: Site, user: str) -> str:
    """A web session of ``user``, for an hour."""
    with writing(site.service.engine) as connection:
        found = accounts.user_row(connection, user).id
        return accounts.new_token(
            connection, None, False, "test", NOW, user_id=found, session=True, expires=NOW + timedelta(hours=1)
        )


def _leave(site: Site, contest: str, token: str) -> Any:
    return site.server.call("POST", f"/api/contests/{contest}/team/leave", token)


def test_a_member_leaves_a_team_until_it_submits_then_its_members_are_final(site: Site) -> None:
    """Ivy leaves Rowans, which has sent nothing; once hal sends a submission, Rowans' members are final (as on Kaggle:
    else a member would compete again in another team with a fresh quota while what they sent still counts); ivy joins
    Hazels by its code; Hazels' members leave one by one (jay by the command), its last taking it away."""
    tokens = _member_of(site, "spring", "Rowans", "hal", "ivy") | _member_of(site, "spring", "Hazels", "jay")
    old_code = _code(site, "spring", "Rowans")

    left = _leave(site, "spring", tokens["ivy"])
    assert left.status == 200 and left.body == {"contest": "spring", "team": "Rowans", "members": 1, "removed": False}
    assert _members(site, "spring", "Rowans") == ["hal"]
    assert _join(site, "spring", "ivy", old_code).status == 410  # revoked: ivy knew it, she comes back only if invited
    again = _leave(site, "spring", tokens["ivy"])
    assert again.status == 409 and "you are in no team of contest spring" in again.body["detail"], again.body

    archive = packed(site.service.data.parent / "demo" / "submission", site.service.data.parent)
    sent = site.server.call(
        "POST", "/api/contests/spring/submissions", tokens["hal"], body=archive.read_bytes(), query={"track": "main"}
    )
    assert sent.status == 201, sent.body
    last = _leave(site, "spring", tokens["hal"])
    assert last.status == 409 and "team Rowans has sent 1 submission: its members are final" in last.body["detail"]
    assert _members(site, "spring", "Rowans") == ["hal"]
    mine = site.server.call("GET", "/api/contests/spring/submissions", tokens["hal"]).body
    assert [s["id"] for s in mine] == [sent.body["id"]]
    assert site.server.call("GET", "/api/contests/spring/submissions", tokens["ivy"]).body == []  # ivy sees none

    rejoined = site.server.call(
        "POST",
        "/api/contests/spring/team/join",
        tokens["ivy"],
        json_body={"invitation": _code(site, "spring", "Hazels")},
    )
    assert rejoined.status == 201 and rejoined.body["members"] == 2, rejoined.body
    shown = CliRunner().invoke(
        cli, ["team", "leave", "--server", site.server.url, "--contest", "spring", "--token", tokens["jay"]]
    )
    assert shown.exit_code == 0 and shown.output == "left team Hazels in contest spring (1 member left)\n", shown.output
    gone = _leave(site, "spring", tokens["ivy"])
    assert gone.status == 200 and gone.body == {"contest": "spring", "team": "Hazels", "members": 0, "removed": True}
    with reading(site.service.engine) as connection:
        assert connection.execute(select(teams.c.id).where(teams.c.name == "Hazels")).first() is None
    refused = CliRunner().invoke(
        cli, ["team", "leave", "--server", site.server.url + "/c/spring", "--token", tokens["jay"]]
    )
    assert refused.exit_code == 2 and "409: you are in no team of contest spring" in refused.output, refused.output


def test_leaving_is_refused_once_teams_are_final_without_sign_ups_banned_or_by_a_team_token(site: Site) -> None:
    tokens = _member_of(site, "autumn", "Aspens", "kim", "lee") | _member_of(site, "closed", "Cypresses", "lou", "max")
    site.clock.now = CLOSES  # autumn's registration_end: its teams are final
    try:
        late = _leave(site, "autumn", tokens["kim"])
        assert late.status == 403 and "final since 2026-12-01 00:00:00 UTC" in late.body["detail"], late.body
    finally:
        site.clock.now = NOW
    closed = _leave(site, "closed", tokens["lou"])
    assert closed.status == 403 and "takes no sign-ups" in closed.body["detail"], closed.body
    team_token = _leave(site, "spring", site.tokens["springteam"])
    assert team_token.status == 403 and "a team's token, not a user's" in team_token.body["detail"], team_token.body
    with writing(site.service.engine) as connection:
        connection.execute(update(teams).where(teams.c.name == "Aspens").values(banned=True))
    try:  # leaving would lift the ban from kim: refused
        banned = _leave(site, "autumn", tokens["kim"])
        assert banned.status == 403 and "banned" in banned.body["detail"], banned.body
    finally:
        with writing(site.service.engine) as connection:
            connection.execute(update(teams).where(teams.c.name == "Aspens").values(banned=False))
    assert _members(site, "autumn", "Aspens") == ["kim", "lee"] and _members(site, "closed", "Cypresses") == [
        "lou",
        "max",
    ]
    paths = site.server.call("GET", "/openapi.json").body["paths"]
    for path in ("/api/team/leave", "/api/contests/{contest_id}/team/leave"):
        answer = paths[path]["post"]["responses"]["200"]["content"]["application/json"]
        assert answer["schema"]["$ref"].endswith("/TeamLeft"), path


def test_the_leave_form_without_javascript_carries_its_csrf_token_and_a_confirmation(site: Site) -> None:
    """The account page's form: refused without the session's CSRF token (403), unconfirmed (422), then a 303 back."""
    tokens = _member_of(site, "spring", "Elders", "ned", "ola")
    session = _session(site, "ned")
    cookie = {"Cookie": f"podium_session={session}"}
    shown = urllib.request.Request(site.server.url + "/c/spring/account", headers=cookie)
    with urllib.request.urlopen(shown, timeout=30) as answer:
        page = answer.read().decode()
    assert "<h2>Leave team Elders</h2>" in page and 'action="/c/spring/team/leave"' in page

    class Stay(urllib.request.HTTPRedirectHandler):
        def redirect_request(self, *_: Any) -> None:
            return None

    def post(form: str) -> tuple[int, str, str]:
        sent = urllib.request.Request(
            site.server.url + "/c/spring/team/leave",
            data=form.encode(),
            headers={**cookie, "Content-Type": "application/x-www-form-urlencoded"},
        )
        try:
            with urllib.request.build_opener(Stay).open(sent, timeout=30) as answer:
                return answer.status, answer.read().decode(), answer.headers.get("Location", "")
        except urllib.error.HTTPError as error:
            return error.code, error.read().decode(), error.headers.get("Location", "")

    assert post("confirm=leave")[0] == 403  # no CSRF token: another site's page cannot take ned out of his team
    csrf = accounts.csrf_token(session)
    status, page, _ = post(f"csrf={csrf}")
    assert status == 422 and "tick the box to confirm" in page
    assert _members(site, "spring", "Elders") == ["ned", "ola"]
    status, _, location = post(f"csrf={csrf}&confirm=leave")
    assert status == 303 and location == "/account?done=you%20left%20team%20Elders", location
    assert _members(site, "spring", "Elders") == ["ola"] and tokens["ola"]


def test_one_contest_served_unprefixed(tmp_path: Path) -> None:
    """With one contest served, ``/api/team`` is that contest's: a user of no team creates one."""
    from service_helpers import set_up, write_contest

    clock = Clock(at("2026-03-10T12:00:00Z"))
    service, _ = set_up(
        f"sqlite:///{tmp_path / 'podium.db'}", write_contest(tmp_path / "c"), tmp_path / "data", (), clock
    )
    with writing(service.engine) as connection:
        user = accounts.add_user(connection, "solo", PASSWORD, None, False, clock())
        token = accounts.new_token(connection, None, False, "test", clock(), user_id=user)
    with LiveServer(service) as server:
        made = server.call("POST", "/api/team", token, json_body={"name": "Solo"})
        assert made.status == 201 and made.body["contest"] == "test-glas", made.body
        clock.now = at("2026-06-01T00:00:00Z")  # the phase's end: registration closes with it
        late = server.call("POST", "/api/team", token, json_body={"name": "Later"})
        assert late.status == 403 and "closed at 2026-06-01 00:00:00 UTC" in late.body["detail"], late.body
    service.engine.dispose()


def test_autumn_organizer_sees_members_from_spring_like_any_other(site: Site) -> None:
    """Ann and Bob came from spring: on autumn's team page and API they are members as any; their accounts, in two
    contests, stay out of the reach of autumn's organizer (a reset link or a ban: 403), as for any member of two contests."""
    olga = site.tokens["olga"]
    row = site.server.call("GET", "/api/contests/autumn/teams/Maples", olga)
    assert row.status == 200 and row.body["members"] == ["ann", "bob"], row.body
    session = _session(site, "olga")
    page = urllib.request.Request(
        site.server.url + "/c/autumn/organizer/teams/Maples", headers={"Cookie": f"podium_session={session}"}
    )
    with urllib.request.urlopen(page, timeout=30) as answer:
        html = answer.read().decode()
    assert "ann" in html and "bob" in html and "springteam" not in html
    assert site.server.call("POST", "/api/contests/autumn/users/ann/reset", olga).status == 403
    assert site.server.call("POST", "/api/contests/autumn/users/ann/ban", olga).status == 403
    # the team page's forms act in the page's contest: a rename, posted without JavaScript
    form = f"csrf={accounts.csrf_token(session)}&team=Cedars&new=Cypresses".encode()
    rename = urllib.request.Request(
        site.server.url + "/c/autumn/organizer/teams/rename",
        data=form,
        headers={"Cookie": f"podium_session={session}", "Content-Type": "application/x-www-form-urlencoded"},
    )
    with urllib.request.urlopen(rename, timeout=30) as answer:  # the redirect followed: the renamed team's page
        assert answer.url.endswith("/c/autumn/organizer/teams/Cypresses?done=team%20Cedars%20is%20now%20Cypresses")
    assert site.server.call("GET", "/api/contests/autumn/teams/Cypresses", olga).status == 200


def test_the_join_form_without_javascript_carries_its_csrf_token(site: Site) -> None:
    """The page's form: refused without the session's CSRF token (403), a second action named (422), then a 303 to the team's page."""
    with writing(site.service.engine) as connection:
        user = accounts.add_user(connection, "fay", PASSWORD, None, False, NOW)
        session = accounts.new_token(
            connection, None, False, "test", NOW, user_id=user, session=True, expires=NOW + timedelta(hours=1)
        )

    class Stay(urllib.request.HTTPRedirectHandler):
        def redirect_request(self, *_: Any) -> None:
            return None

    def post(form: str) -> tuple[int, str, str]:
        sent = urllib.request.Request(
            site.server.url + "/c/winter/join",
            data=form.encode(),
            headers={"Cookie": f"podium_session={session}", "Content-Type": "application/x-www-form-urlencoded"},
        )
        try:
            with urllib.request.build_opener(Stay).open(sent, timeout=30) as answer:
                return answer.status, answer.read().decode(), answer.headers.get("Location", "")
        except urllib.error.HTTPError as error:
            return error.code, error.read().decode(), error.headers.get("Location", "")

    assert post("team=Larches")[0] == 403  # no CSRF token: another site's page cannot make a team
    csrf = accounts.csrf_token(session)
    status, page, _ = post(f"csrf={csrf}&team=Larches&invitation=abc")
    assert status == 422 and "not both" in page and 'value="Larches"' in page
    status, _, location = post(f"csrf={csrf}&team=Larches")
    assert status == 303 and location.startswith("/c/winter/submissions?done=you%20created%20team%20Larches")
    status, page, _ = post(f"csrf={csrf}&team=Larches2")
    assert status == 409 and "you are in team Larches in contest winter already" in page


def test_racing_joiners_and_creators_on_each_database(tmp_path: Path, database_url: str) -> None:
    """On SQLite and PostgreSQL: eight users racing for a team's two last places get two; one user's two teams at once, one."""
    from podium.contest import load
    from podium.service import joining
    from podium.service.server import register_contest
    from service_helpers import write_contest

    path = write_contest(tmp_path / "c")
    path.write_text(path.read_text() + "max_team_size = 3\n")
    contest = load(path)
    engine = connect(database_url)
    migrate(engine)
    register_contest(engine, contest)
    now = at("2026-03-10T12:00:00Z")
    with writing(engine) as connection:
        racers = [accounts.add_user(connection, f"u{i}", PASSWORD, None, False, now) for i in range(9)]
        joining.create(connection, contest, racers[0], "Full", now)
        code = invitations.code_of(connection, accounts.team_id(connection, "Full"), now).code

    def race(act: Any, values: list[tuple[int, str]]) -> list[int]:
        start, answers = threading.Barrier(len(values)), []

        def one(user: int, value: str) -> None:
            start.wait(timeout=30)
            try:
                with writing(engine) as connection:
                    act(connection, contest, user, value, now)
                answers.append(201)
            except invitations.Refused as refused:  # joining.Refused is one
                answers.append(refused.status)

        threads = [threading.Thread(target=one, args=value) for value in values]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join(timeout=60)
        return sorted(answers)

    assert race(joining.join, [(user, code) for user in racers[1:]]) == [201] * 2 + [409] * 6
    with reading(engine) as connection:
        count = connection.execute(select(memberships.c.id).where(memberships.c.contest == contest.id)).all()
        assert len(count) == 3
    with writing(engine) as connection:
        solo = accounts.add_user(connection, "solo", PASSWORD, None, False, now)
    assert race(joining.create, [(solo, "Twin A"), (solo, "Twin B")]) == [201, 409]
    # Full's three members leave at once: counted one after the other (the team's row held), the last removes the
    # team, which sent nothing; without the lock each saw others stay, and an empty team was left behind
    members = [user for user in racers if user in _member_ids(engine, "Full")]
    assert (
        race(lambda c, contest, user, _, now: joining.leave(c, contest, user, now), [(u, "") for u in members])
        == [201] * 3
    )
    with reading(engine) as connection:
        assert connection.execute(select(teams.c.id).where(teams.c.name == "Full")).first() is None
    engine.dispose()


def _member_ids(engine: Any, team: str) -> set[int]:
    with reading(engine) as connection:
        query = select(memberships.c.user_id).join(teams).where(teams.c.name == team)
        return set(connection.execute(query).scalars())
