"""``podium backup`` of a running contest, the server killed with SIGKILL, ``podium restore`` into an empty folder, served again.

A real ``podium serve`` (uvicorn and a worker process) on SQLite and on
PostgreSQL; everything is checked through the API of the restored server.
"""

from __future__ import annotations

import hashlib
import io
import json
import subprocess
import tarfile
import time
from pathlib import Path

import pytest

from podium.service import accounts
from podium.service.board_cache import FRESH_S
from podium.service.database import writing
from podium.service.statuses import SCORED, utc_now
from served import Serve, open_contest, podium
from service_helpers import Clock, demo_archive, set_up, worse_copy, write_contest


def _sha(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def test_a_contest_killed_mid_run_comes_back_whole_from_its_backup(
    tmp_path: Path, database_url: str, request: pytest.FixtureRequest
) -> None:
    contest = open_contest(write_contest(tmp_path / "contest"))
    data = tmp_path / "data"
    sqlite = database_url.startswith("sqlite")
    url = f"sqlite:///{data / 'podium.sqlite3'}" if sqlite else database_url
    data.mkdir()
    service, tokens = set_up(url, contest, data, ("alpha", "beta"), Clock(utc_now()))
    with writing(service.engine) as connection:
        accounts.add_user(
            connection, "ann", "a long password 1", accounts.team_id(connection, "alpha"), False, utc_now()
        )
        accounts.add_user(connection, "olga", "a long password 2", None, True, utc_now())
    service.engine.dispose()
    database = None if sqlite else database_url
    good = demo_archive(contest, tmp_path / "good")
    worse = demo_archive(
        contest, worse_copy(contest.parent / "demo" / "submission", tmp_path / "worse" / "submission").parent
    )
    backup = tmp_path / "contest.podium-backup"
    with Serve(contest, data, database) as server:
        assert (
            server.call(
                "POST", "/api/submissions", tokens["alpha"], body=good, query={"filename": "good.tar.gz"}
            ).status
            == 201
        )
        assert (
            server.call(
                "POST", "/api/submissions", tokens["beta"], body=worse, query={"filename": "worse.tar.gz"}
            ).status
            == 201
        )
        assert (
            server.call("POST", "/api/submissions", tokens["beta"], body=b"garbage", query={"filename": "x.zip"}).status
            == 422
        )
        assert [s["status"] for s in server.settled(tokens["alpha"], 1)] == [SCORED]
        assert sorted(s["status"] for s in server.settled(tokens["beta"], 2)) == ["rejected", SCORED]
        assert podium("rescore", "--data", str(data), *(["--database", database] if database else [])).returncode == 0
        before = {"alpha": server.settled(tokens["alpha"], 1), "beta": server.settled(tokens["beta"], 2)}
        time.sleep(FRESH_S + 0.1)  # a change shows FRESH_S late once its board is drawn (a busy machine's: later)
        board = server.call("GET", "/api/leaderboard").body
        for _ in range(600):  # bounded: 60 s for the board drawn mid-rescore to give way to the rescored one
            if all(t["status"] == SCORED for t in board["teams"]):
                break
            time.sleep(0.1)
            board = server.call("GET", "/api/leaderboard").body
        made = podium("backup", "--data", str(data), *(["--database", database] if database else []), str(backup))
        assert made.returncode == 0 and "2 teams, 2 users, 3 submissions, 4 results" in made.stdout, (
            made
        )  # two rounds of the two scored
        assert (
            server.call(
                "POST", "/api/submissions", tokens["alpha"], body=good, query={"filename": "later.tar.gz"}
            ).status
            == 201
        )  # after the backup
        server.kill()  # mid-contest: the later upload may be running
    assert all(s["round"] == 2 for team in before.values() for s in team if s["status"] == SCORED), before

    restored = tmp_path / "restored"
    target = None if sqlite else request.getfixturevalue("postgres_server").new_database()
    done = podium("restore", str(backup), "--data", str(restored), *(["--database", target] if target else []))
    assert done.returncode == 0 and "restored test-glas as backed up at" in done.stdout, done.stderr
    if target is not None:  # a database that holds anything is refused, as a folder is
        again_into = podium("restore", str(backup), "--data", str(tmp_path / "second"), "--database", target)
        assert (
            again_into.returncode == 2 and "holds tables" in again_into.stderr and not (tmp_path / "second").exists()
        ), again_into.stderr
    else:  # a SQLite backup restores into SQLite only
        into_postgres = podium(
            "restore",
            str(backup),
            "--data",
            str(tmp_path / "second"),
            "--database",
            "postgresql://nobody@127.0.0.1:1/none",
        )
        assert into_postgres.returncode == 2 and "is a backup of a sqlite database" in into_postgres.stderr, (
            into_postgres.stderr
        )
    with Serve(contest, restored, target, workers=0) as again:
        after = {
            name: again.call("GET", "/api/submissions", token).body for name, token in tokens.items()
        }  # the tokens are the same
        assert after == before
        assert again.call("GET", "/api/leaderboard").body == board
        assert (
            again.call("POST", "/api/tokens", json_body={"user": "ann", "password": "a long password 1"}).status == 201
        )
        organizer = again.call("POST", "/api/tokens", json_body={"user": "olga", "password": "a long password 2"}).body[
            "token"
        ]
        assert len(again.call("GET", "/api/submissions", organizer).body) == 3
        assert again.call("GET", "/healthz").body["workers"] == {
            "alive": 0,
            "newest_heartbeat_age_s": None,
        }  # the killed server's worker is not taken for alive
    for submission in [s for team in before.values() for s in team]:
        files = sorted((restored / "submissions" / str(submission["id"])).rglob("*"))
        originals = sorted((data / "submissions" / str(submission["id"])).rglob("*"))
        assert [(p.relative_to(restored), _sha(p)) for p in files if p.is_file()] == [
            (p.relative_to(data), _sha(p)) for p in originals if p.is_file()
        ]


def _backed_up(tmp_path: Path, name: str) -> Path:
    """``podium backup`` of a SQLite contest with a team, to ``tmp_path / name``."""
    contest = write_contest(tmp_path / "contest")
    data = tmp_path / "data"
    data.mkdir()
    service, _ = set_up(f"sqlite:///{data / 'podium.sqlite3'}", contest, data, ("alpha",), Clock(utc_now()))
    service.engine.dispose()
    out = tmp_path / name
    assert podium("backup", "--data", str(data), str(out)).returncode == 0
    return out


@pytest.fixture
def a_backup(tmp_path: Path) -> Path:
    """A backup of a SQLite contest with a team."""
    return _backed_up(tmp_path, "backup.tar")


def _rewritten(archive: Path, change: str, tmp_path: Path) -> Path:
    """``archive`` with one member's bytes changed, or one member dropped."""
    out = tmp_path / f"{change}.tar"
    with tarfile.open(archive) as source, tarfile.open(out, "w") as target:
        for member in source:
            content = source.extractfile(member).read()  # type: ignore[union-attr]
            if member.name == "podium.sqlite3":
                if change == "dropped":
                    continue
                content = content[:100] + bytes([content[100] ^ 1]) + content[101:]
            target.addfile(member, io.BytesIO(content))
    return out


def test_restore_refuses_a_folder_that_holds_anything(a_backup: Path, tmp_path: Path) -> None:
    taken = tmp_path / "taken"
    taken.mkdir()
    (taken / "notes.txt").write_text("mine")
    done = podium("restore", str(a_backup), "--data", str(taken))
    assert done.returncode == 2 and "is not an empty folder" in done.stderr and "Traceback" not in done.stderr
    assert sorted(p.name for p in taken.iterdir()) == ["notes.txt"]


@pytest.mark.parametrize(
    ("change", "said"), [("changed", "does not match its SHA-256"), ("dropped", "missing, first 'podium.sqlite3'")]
)
def test_restore_checks_every_member_against_the_manifest(
    a_backup: Path, tmp_path: Path, change: str, said: str
) -> None:
    done = podium("restore", str(_rewritten(a_backup, change, tmp_path)), "--data", str(tmp_path / "new"))
    assert done.returncode == 2 and said in done.stderr and "Traceback" not in done.stderr, done.stderr
    assert not (tmp_path / "new").exists()


def test_restore_names_what_is_not_a_backup(tmp_path: Path, a_backup: Path) -> None:
    (tmp_path / "plain.tar").write_bytes(b"\0" * 1024)
    with tarfile.open(tmp_path / "other.tar", "w") as other:
        other.add(a_backup, arcname="something.bin")
    for path in (tmp_path / "plain.tar", tmp_path / "other.tar"):
        done = podium("restore", str(path), "--data", str(tmp_path / "new"))
        assert done.returncode == 2 and "not a podium backup" in done.stderr and "Traceback" not in done.stderr, (
            done.stderr
        )
    with tarfile.open(a_backup) as archive:
        manifest = json.loads(archive.extractfile("manifest.json").read())  # type: ignore[union-attr]
    assert (
        manifest["rows"]["teams"] == 1
        and manifest["submissions"] == []
        and list(manifest["files"]) == ["podium.sqlite3"]
    )


def test_backup_of_a_folder_without_a_contest_says_so(tmp_path: Path) -> None:
    done = podium("backup", "--data", str(tmp_path / "nothing"), str(tmp_path / "out.tar"))
    assert done.returncode == 2 and "no database at" in done.stderr and "Traceback" not in done.stderr, done.stderr
    assert not (tmp_path / "nothing").exists() and not (tmp_path / "out.tar").exists()


def test_a_backup_named_tar_gz_is_gzipped_and_restores(tmp_path: Path) -> None:
    """OUT.tar.gz is a gzip-compressed tar (``tar -tzf`` lists it); restore reads it back, and names a cut-short one as damaged."""
    out = _backed_up(tmp_path, "backup.tar.gz")
    assert out.read_bytes()[:2] == b"\x1f\x8b"  # gzip's magic
    listed = subprocess.run(["tar", "-tzf", str(out)], capture_output=True, text=True, check=True).stdout.split()
    assert listed == ["manifest.json", "podium.sqlite3"]
    restored = podium("restore", str(out), "--data", str(tmp_path / "restored"))
    assert restored.returncode == 0, restored.stderr
    assert (tmp_path / "restored" / "podium.sqlite3").is_file()
    cut = tmp_path / "cut.tar.gz"
    cut.write_bytes(out.read_bytes()[: out.stat().st_size // 2])
    done = podium("restore", str(cut), "--data", str(tmp_path / "new"))
    assert done.returncode == 2 and "damaged" in done.stderr and "Traceback" not in done.stderr, done.stderr
    assert not (tmp_path / "new").exists()
