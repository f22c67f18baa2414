"""Accounts across contests in one database: users are the server's, teams a contest's, organizers per contest.

Two contests registered in one database (SQLite and PostgreSQL); the accounts are made with the
real ``podium`` commands, and what a token may do in each contest is read as the service reads it
(``accounts.caller_of``, which every API route's caller goes through).
"""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner
from sqlalchemy import select

from podium.cli import cli
from podium.contest import load
from podium.service import accounts
from podium.service.database import connect, migrate, reading, writing
from podium.service.server import register_contest
from podium.service.statuses import utc_now
from service_helpers import write_contest

PASSWORD = "a long password 7\n"


def podium(*args: str, stdin: str | None = None, code: int = 0) -> str:
    shown = CliRunner().invoke(cli, list(args), input=stdin)
    assert shown.exit_code == code, (args, shown.output)
    return shown.output


def test_one_user_two_teams_organizers_per_contest(tmp_path: Path, database_url: str) -> None:
    engine = connect(database_url)
    migrate(engine)
    first, second = (load(write_contest(tmp_path / name, name)) for name in ("glas", "fuzzy-jaccard"))
    for contest in (first, second):
        register_contest(engine, contest, alone=False)
    a, b = first.id, second.id
    db = ("--data", str(tmp_path / "data"), "--database", database_url)
    assert "serves 2 contests" in podium(
        "team", "add", "alpha", *db, code=2
    )  # which one is ambiguous: said, not guessed
    podium("user", "add", "ann", "--password-stdin", *db, stdin=PASSWORD)  # a server account, in no team yet
    podium("user", "add", "olga", "--organizer", "--contest", a, "--password-stdin", *db, stdin=PASSWORD)
    podium("user", "add", "root", "--admin", "--password-stdin", *db, stdin=PASSWORD)
    alpha = podium("team", "add", "alpha", "--contest", a, "--member", "ann", *db).strip()
    other = podium(
        "team", "add", "alpha", "--contest", b, "--member", "ann", *db
    ).strip()  # the same name in another contest
    assert "one team per contest" in podium("team", "add", "beta", "--contest", a, "--member", "ann", *db, code=2)
    assert "already a team 'ALPHA'" in podium("team", "add", "ALPHA", "--contest", a, *db, code=2)
    assert podium("team", "list", "--contest", a, *db).startswith("alpha  1 member (ann)  0 submitted  created 20")
    assert podium("user", "list", *db).splitlines() == [
        f"ann  teams: {b}/alpha, {a}/alpha",  # by contest id
        f"olga  teams: -  organizer of {a}",
        "root  teams: -  administrator",
    ]

    now = utc_now()
    with writing(engine) as connection:
        login = lambda name: accounts.new_token(
            connection, None, False, f"login of {name}", now, user_id=accounts.user_row(connection, name).id
        )
        ann, olga, root = login("ann"), login("olga"), login("root")

    def role(token: str, contest: str) -> accounts.Caller | None:
        with reading(engine) as connection:
            return accounts.caller_of(connection, token, now, contest)

    in_a, in_b = role(ann, a), role(ann, b)
    assert in_a is not None and in_b is not None and in_a.team == in_b.team == "alpha" and in_a.team_id != in_b.team_id
    assert (role(olga, a).organizer, role(olga, b).organizer) == (True, False)  # an organizer of A is none of B
    assert (role(root, a).organizer, role(root, b).organizer) == (True, True)
    assert role(alpha, a).team_id == in_a.team_id and role(alpha, b) is None  # a team's token is its contest's only
    assert role(other, b).team_id == in_b.team_id and role(other, a) is None

    podium("organizer", "remove", "olga", "--contest", a, *db)
    podium("organizer", "add", "olga", "--contest", b, *db)
    assert (role(olga, a).organizer, role(olga, b).organizer) == (False, True)  # from the next request on
    podium("team", "rename", "alpha", "Alpine", "--contest", b, *db)
    podium("user", "rename", "ann", "anna", *db)
    assert podium("user", "list", *db).splitlines()[0] == f"anna  teams: {b}/Alpine, {a}/alpha"
    podium("team", "remove", "Alpine", "--contest", b, *db)
    assert role(other, b) is None and role(ann, b).team is None  # its token ends; anna stays, in no team of B
    assert role(ann, a).team == "alpha"
    engine.dispose()


@pytest.mark.parametrize("command", [("team", "list"), ("team", "remove", "x"), ("team", "rename", "x", "y")])
def test_an_unknown_contest_is_named(tmp_path: Path, command: tuple[str, ...]) -> None:
    engine = connect(f"sqlite:///{tmp_path / 'data' / 'podium.sqlite3'}")
    (tmp_path / "data").mkdir()
    migrate(engine)
    register_contest(engine, load(write_contest(tmp_path / "glas")))
    engine.dispose()
    shown = podium(*command, "--contest", "nope", "--data", str(tmp_path / "data"), code=2)
    assert "the database serves no contest 'nope' (it serves: test-glas)" in shown


def test_a_contest_is_announced_to_its_own_users_only(tmp_path: Path) -> None:
    from datetime import timedelta

    from podium.service import mail, state
    from podium.service.tables import outbox

    engine = connect(f"sqlite:///{tmp_path / 'podium.sqlite3'}")
    migrate(engine)
    first, second = (load(write_contest(tmp_path / name, name)) for name in ("glas", "fuzzy-jaccard"))
    for contest in (first, second):
        register_contest(engine, contest, alone=False)
    now = first.phases[0].start + timedelta(minutes=1)
    with writing(engine) as connection:
        state.put(connection, mail.ENABLED, "contest@podium.test")
        for name, contest, organizer in (("ann", first, False), ("bob", second, False), ("olga", first, True)):
            team = None if organizer else accounts.add_team(connection, f"team-{name}", now, contest.id)
            user = accounts.add_user(connection, name, PASSWORD.strip(), team, organizer, now, contest=contest.id)
            mail.set_mail(connection, user, f"{name}@podium.test", confirmed=True)
        assert mail.announce(connection, first, now) == 2  # the phase opened: ann and olga, not bob
        assert sorted(connection.execute(select(outbox.c.address)).scalars()) == ["ann@podium.test", "olga@podium.test"]
    engine.dispose()


def test_every_organizer_command_names_its_contest_when_the_database_serves_several(tmp_path: Path) -> None:
    """Each command that acts on a contest's data asks which (exit 2, the ids listed) and acts on that one only."""
    from sqlalchemy import insert

    from podium.service import announcements, state
    from podium.service.tables import jobs, submissions, teams

    data = tmp_path / "data"
    data.mkdir()
    engine = connect(f"sqlite:///{data / 'podium.sqlite3'}")
    migrate(engine)
    first, second = (load(write_contest(tmp_path / name, name)) for name in ("glas", "fuzzy-jaccard"))
    for contest in (first, second):
        register_contest(engine, contest, alone=False)
    a, b = first.id, second.id
    now = utc_now()
    with writing(engine) as connection:
        accounts.add_user(connection, "ann", PASSWORD.strip(), None, False, now)
        alpha = accounts.add_team(connection, "alpha", now, a)
        accounts.add_team(connection, "alpha", now, b)
        values = {"team_id": alpha, "phase": "first", "track": a, "kind": "files", "filename": "s.tar", "size": 1}
        values |= {"sha256": "0" * 64, "target": "files", "created": now, "status": "scored", "selected": False}
        sent = int(connection.execute(insert(submissions).values(**values)).inserted_primary_key[0])  # type: ignore[index]
        connection.execute(insert(jobs).values(submission_id=sent, round=1, state="done", created=now))
    db = ("--data", str(data))
    commands = [
        ("dashboard",),
        ("rerun", str(sent)),
        ("announce", "hello"),
        ("archive", str(tmp_path / "out.zip")),
        ("reveal",),
        ("rescore",),
        ("team", "list"),
        ("team", "ban", "alpha"),
        ("team", "approve", "alpha"),
        ("team", "member", "add", "alpha", "ann"),
        ("token", "list", "--team", "alpha"),
    ]
    for command in commands:
        shown = podium(*command, *db, code=2)
        assert f"the database serves 2 contests ({b}, {a}): name one with --contest ID" in shown, command
    assert "no submission" in podium("rerun", str(sent), "--contest", b, *db, code=2)  # A's submission is none of B's
    for command in commands:
        podium(*command, "--contest", a, *db)
    assert podium("team", "member", "add", "alpha", "ann", "--contest", b, *db) == "ann is a member of team alpha\n"
    assert "one team per contest" in podium("team", "member", "add", "alpha", "ann", "--contest", a, *db, code=2)
    assert "no user 'nobody'" in podium("team", "member", "add", "alpha", "nobody", "--contest", a, *db, code=2)
    podium("team", "member", "remove", "alpha", "ann", "--contest", a, *db)
    assert "ann is no member of team alpha" in podium(
        "team", "member", "remove", "alpha", "ann", "--contest", a, *db, code=2
    )
    assert "ban it instead" in podium("team", "remove", "alpha", "--contest", a, *db, code=2)
    with reading(engine) as connection:
        banned = dict(connection.execute(select(teams.c.contest, teams.c.banned)).all())
        assert banned == {a: True, b: False}
        assert state.revealed_at(connection, a) is not None and state.revealed_at(connection, b) is None
        assert (
            state.current_round(connection, a) == 3 and state.current_round(connection, b) == 1
        )  # the rerun's 2, then 3
        assert [n["text"] for n in announcements.newest(connection, a)] == ["hello"]
        assert announcements.newest(connection, b) == []
    engine.dispose()
