"""The organizers' commands on a database (``podium team ban``, ``rerun``, ``announce``, ``archive``, ``dashboard``),
a 1 GiB archive streamed by a real ``podium serve`` in bounded memory, and the upgrade to migration 0008."""

from __future__ import annotations

import json
import os
import urllib.request
import zipfile
from pathlib import Path

from click.testing import CliRunner, Result
from sqlalchemy import insert, select, text

from podium.cli import cli
from podium.contest import load
from podium.service import accounts
from podium.service.board_cache import board_stamp
from podium.service.database import connect, database_url, migrate, reading, writing
from podium.service.server import register_contest
from podium.service.standing import set_team
from podium.service.statuses import SCORED
from podium.service.tables import announcements, jobs, submissions, teams, users
from served import Serve, open_contest
from service_helpers import at, write_contest

NOW = at("2026-03-10T12:00:00Z")


def podium(*args: str) -> Result:
    """``podium ARGS`` run by click in this process (a new process each costs seconds on a loaded machine)."""
    return CliRunner().invoke(cli, list(args))


def _database(tmp_path: Path, *team_names: str) -> tuple[Path, Path, object]:
    contest = open_contest(write_contest(tmp_path / "contest"))
    data = tmp_path / "data"
    data.mkdir()
    engine = connect(database_url(None, data))
    migrate(engine)
    register_contest(engine, load(contest))
    with writing(engine) as connection:
        for name in team_names:
            accounts.add_team(connection, name, NOW)
    return contest, data, engine


def _submission(connection: object, team_id: int, status: str = SCORED) -> int:
    values = {
        "team_id": team_id,
        "phase": "first",
        "track": "test-glas",
        "kind": "files",
        "filename": "big.tar",
        "size": 1,
        "sha256": "0" * 64,
        "target": "files",
        "created": NOW,
        "status": status,
        "selected": False,
    }
    return int(connection.execute(insert(submissions).values(**values)).inserted_primary_key[0])  # type: ignore[attr-defined]


def test_the_organizers_commands_ban_approve_rerun_announce_and_archive(tmp_path: Path) -> None:
    _, data, engine = _database(tmp_path, "alpha")
    with writing(engine) as connection:  # type: ignore[attr-defined]
        accounts.add_user(connection, "ann", "ann-password-1", 1, False, NOW)
        submission = _submission(connection, 1)
        connection.execute(insert(jobs).values(submission_id=submission, round=1, state="done", created=NOW))
    folder = data / "submissions" / str(submission) / "files"
    folder.mkdir(parents=True)
    (folder / "mask.png").write_bytes(b"\x89PNG the bytes")
    where = ("--data", str(data))

    assert podium("team", "ban", "alpha", *where).output == "team alpha is banned\n"
    assert podium("user", "ban", "ann", *where).output == "user ann is banned\n"
    assert podium("team", "approve", "alpha", *where).exit_code == 0
    missing = podium("team", "ban", "nobody", *where)
    assert missing.exit_code == 2 and "no team 'nobody'" in missing.output and "Traceback" not in missing.output
    with reading(engine) as connection:  # type: ignore[attr-defined]
        assert connection.execute(select(teams.c.banned, teams.c.approved)).one() == (True, True)
        assert connection.execute(select(users.c.banned)).scalar_one() is True
    assert podium("team", "unban", "alpha", *where).exit_code == podium("user", "unban", "ann", *where).exit_code == 0

    rerun = podium("rerun", str(submission), *where)
    assert rerun.output == f"submission {submission} is queued to be scored again, in round 2\n"
    assert "is queued: only a submission that ended" in podium("rerun", str(submission), *where).output
    assert "no submission 999" in podium("rerun", "999", *where).output

    notice = tmp_path / "notice.md"
    notice.write_text("# Data fixed\nThe truth of image 3 was wrong.\n")
    assert podium("announce", "--file", str(notice), *where).output == "announcement 1 is on the contest page\n"
    assert podium("announce", "Plain *text*", *where).exit_code == 0
    assert "give the announcement's TEXT" in podium("announce", *where).output
    with reading(engine) as connection:  # type: ignore[attr-defined]
        assert connection.execute(select(announcements.c.text).order_by(announcements.c.id)).scalars().all() == [
            "# Data fixed\nThe truth of image 3 was wrong.",
            "Plain *text*",
        ]
    assert podium("announce", "--remove", "1", *where).output == "announcement 1 is removed\n"

    out = tmp_path / "all.zip"
    assert podium("archive", str(out), "--what", "submissions", *where).exit_code == 0
    with zipfile.ZipFile(out) as archive:
        assert archive.read(f"submissions/{submission}-alpha/files/mask.png") == b"\x89PNG the bytes"
        assert json.loads(archive.read("submissions.json"))[0]["team"] == "alpha"

    figures = json.loads(podium("dashboard", "--json", *where).output)
    assert figures["queue"]["queued"] == 1 and figures["per_day"][-1]["submissions"] in (0, 1)
    assert "queue: 1 waiting" in podium("dashboard", *where).output


def _peak_rss_kib(pid: int) -> int:
    """The process's peak resident memory (VmHWM), in KiB."""
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1])
    raise AssertionError("no VmHWM in /proc")


def test_an_archive_of_a_gibibyte_is_streamed_in_bounded_memory(tmp_path: Path) -> None:
    """Four sparse files of 256 MiB (no disk used) archived through the API; the server's peak memory hardly moves."""
    contest, data, engine = _database(tmp_path, "alpha")
    with writing(engine) as connection:  # type: ignore[attr-defined]
        ids = [_submission(connection, 1) for _ in range(4)]
        token = accounts.new_token(connection, None, True, "test", NOW)
    for submission_id in ids:
        folder = data / "submissions" / str(submission_id) / "files"
        folder.mkdir(parents=True)
        with (folder / "weights.bin").open("wb") as file:
            file.truncate(256 << 20)
    out = tmp_path / "archive.zip"
    with Serve(contest, data, None, workers=0) as server:
        assert server.process is not None
        before = _peak_rss_kib(server.process.pid)
        request = urllib.request.Request(
            server.url + "/api/archive?what=submissions", headers={"Authorization": f"Bearer {token}"}
        )
        received = 0
        with urllib.request.urlopen(request, timeout=120) as response, out.open("wb") as file:
            while chunk := response.read(1 << 20):
                received += len(chunk)
                if chunk.count(0) == len(chunk):  # the files' zeros: kept sparse here too
                    file.seek(len(chunk), os.SEEK_CUR)
                else:
                    file.write(chunk)
            file.truncate()
        grown_mib = (_peak_rss_kib(server.process.pid) - before) / 1024
    print(f"archive of {received / 2**30:.2f} GiB streamed; the server's peak memory grew {grown_mib:.1f} MiB")
    assert received > 1 << 30
    assert grown_mib < 64
    with zipfile.ZipFile(out) as archive:
        sizes = {info.filename: info.file_size for info in archive.infolist()}
        assert {name: size for name, size in sizes.items() if name.endswith(".bin")} == {
            f"submissions/{i}-alpha/files/weights.bin": 256 << 20 for i in ids
        }
        with archive.open(f"submissions/{ids[-1]}-alpha/files/weights.bin") as member:  # its CRC checked at the end
            while member.read(16 << 20):
                pass


def test_the_upgrade_to_0008_keeps_every_team_approved_and_unbanned_and_a_ban_moves_the_board(
    database_url: str,
) -> None:
    """A database at 0005 with rows, upgraded: the new columns take their defaults; the trigger bumps the board's stamp."""
    engine = connect(database_url)
    migrate(engine, "0005")
    with writing(engine) as connection:
        connection.execute(
            text("INSERT INTO teams (id, name, created) VALUES (1, 'alpha', :t), (2, 'beta', :t)"), {"t": NOW}
        )
        connection.execute(
            text(
                "INSERT INTO users (id, name, team_id, organizer, password_hash, created, email_confirmed, mail_off) "
                "VALUES (1, 'ann', 1, false, 'x', :t, false, '')"
            ),
            {"t": NOW},
        )
        submission = _submission(connection, 1)
        connection.execute(
            text("INSERT INTO jobs (submission_id, round, state, attempts, created) VALUES (:s, 1, 'done', 1, :t)"),
            {"s": submission, "t": NOW},
        )
    migrate(engine)
    with writing(engine) as connection:
        assert connection.execute(
            select(teams.c.name, teams.c.banned, teams.c.approved).order_by(teams.c.id)
        ).all() == [
            ("alpha", False, True),
            ("beta", False, True),
        ]
        assert connection.execute(select(users.c.banned)).scalar_one() is False
        assert connection.execute(select(jobs.c.notify)).scalar_one() is False
        stamp = board_stamp(connection, "")[0]
    with writing(engine) as connection:
        set_team(connection, "", "beta", banned=True)  # no contest served yet: the teams are of none
    with reading(engine) as connection:
        assert board_stamp(connection, "")[0] == stamp + 1  # the teams' contest's stamp
    engine.dispose()
