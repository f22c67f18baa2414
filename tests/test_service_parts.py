"""The service's parts alone: safe unpacking, quota days, migrations on both databases, final-submission policies, the commands."""

from __future__ import annotations

import io
import json
import os
import stat
import subprocess
import sys
import tarfile
import warnings
import zipfile
from datetime import UTC, datetime
from pathlib import Path
from zoneinfo import ZoneInfo

import pytest
from alembic.autogenerate import compare_metadata
from alembic.migration import MigrationContext

from podium.formats.archives import ArchiveLimits, ArchiveProblem, safe_filename, unpack
from podium.service.client import packed
from podium.service.database import connect, migrate
from podium.service.quota import local_day
from podium.service.tables import metadata
from podium.service.worker import Worker
from service_helpers import Clock, LiveServer, at, demo_archive, set_up, worse_copy, write_contest


def zip_of(*members: tuple[str, bytes], mode: int | None = None) -> bytes:
    buffer = io.BytesIO()
    with warnings.catch_warnings(), zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as archive:
        warnings.simplefilter("ignore")  # a duplicate name is one of the cases
        for name, data in members:
            info = zipfile.ZipInfo(name)
            if mode is not None:
                info.external_attr = mode << 16
            archive.writestr(info, data, zipfile.ZIP_DEFLATED)
    return buffer.getvalue()


def tar_of(*members: tarfile.TarInfo, data: bytes = b"") -> bytes:
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w:gz") as archive:
        for member in members:
            archive.addfile(member, io.BytesIO(data) if member.isreg() else None)
    return buffer.getvalue()


def member(name: str, kind: bytes = tarfile.REGTYPE, size: int = 0, link: str = "") -> tarfile.TarInfo:
    info = tarfile.TarInfo(name)
    info.type, info.size, info.linkname = kind, size, link
    return info


HOSTILE = {
    "zip slip": (zip_of(("a/../../evil", b"x")), "'..'"),
    "absolute zip": (zip_of(("/etc/evil", b"x")), "absolute"),
    "windows path": (zip_of(("C:\\evil", b"x")), "absolute or Windows"),
    "zip symlink": (zip_of(("link", b"/etc/passwd"), mode=stat.S_IFLNK | 0o777), "link or a special file"),
    "zip duplicate": (zip_of(("a.txt", b"1"), ("a.txt", b"2")), "twice"),
    "zip bomb": (zip_of(("bomb", b"\0" * (8 << 20))), "times its packed size"),
    "control character": (zip_of(("a\nb", b"x")), "control characters"),
    "tar symlink": (tar_of(member("link", tarfile.SYMTYPE, link="/etc/passwd")), "link or a special file"),
    "tar hard link": (tar_of(member("hard", tarfile.LNKTYPE, link="/etc/passwd")), "link or a special file"),
    "tar device": (tar_of(member("dev", tarfile.CHRTYPE)), "link or a special file"),
    "tar dot-dot": (tar_of(member("../x", size=1), data=b"x"), "'..'"),
    "tar name not UTF-8": (tar_of(member("\udcff.png", size=1), data=b"x"), "names must be UTF-8"),
    "name part over 255 bytes": (zip_of(("é" * 128, b"x")), "over 255 bytes"),
    "name over 1024 bytes": (zip_of(("/".join(["d" * 200] * 6), b"x")), "over 1024 bytes"),
    "file over folder": (tar_of(member("a", size=1), member("a/b", size=1), data=b"x"), "both a file and a folder"),
    "truncated gzip": (b"\x1f\x8b\x08\x00garbage", "cannot be read"),
    "broken zip": (b"PK\x03\x04" + b"\0" * 40, "cannot be read"),
    "empty zip": (zip_of(), "empty"),
}


@pytest.mark.parametrize("case", sorted(HOSTILE))
def test_hostile_archives_are_refused_with_a_reason(case: str, tmp_path: Path) -> None:
    data, reason = HOSTILE[case]
    upload = tmp_path / "upload"
    upload.write_bytes(data)
    with pytest.raises(ArchiveProblem, match=reason.replace("(", r"\(")):
        unpack(upload, "x", tmp_path / "out" / "files", ArchiveLimits())
    outside = {p.name for p in tmp_path.iterdir()}
    assert outside == {"upload", "out"}  # nothing written beside the folder


def test_archive_caps_on_entries_and_bytes(tmp_path: Path) -> None:
    upload = tmp_path / "upload"
    upload.write_bytes(zip_of(*[(f"f{i}", b"x") for i in range(11)]))
    with pytest.raises(ArchiveProblem, match="more than 10 entries"):
        unpack(upload, "x", tmp_path / "a", ArchiveLimits(max_entries=10))
    upload.write_bytes(zip_of(("big", os.urandom(3 << 20))))  # incompressible: the ratio passes, the size does not
    with pytest.raises(ArchiveProblem, match="more than 2 MB"):
        unpack(upload, "x", tmp_path / "b", ArchiveLimits(max_bytes=2 << 20))


def test_good_archives_and_files_unpack_to_what_is_scored(tmp_path: Path) -> None:
    upload = tmp_path / "upload"
    upload.write_bytes(zip_of(("submission/", b""), ("submission/a.png", b"1"), ("submission/sub/b.png", b"2")))
    target = unpack(upload, "x.zip", tmp_path / "z", ArchiveLimits())
    assert target == tmp_path / "z" / "submission" and (target / "sub" / "b.png").read_bytes() == b"2"
    upload.write_bytes(tar_of(member("a.txt", size=1), member("b.txt", size=1), data=b"x"))
    assert unpack(upload, "x.tgz", tmp_path / "t", ArchiveLimits()) == tmp_path / "t"
    upload.write_bytes(
        zip_of(("a" * 255, b"x"), ("/".join(["d" * 200] * 5) + "/" + "e" * 19, b"y"))
    )  # 255 bytes; 1,024 bytes
    assert unpack(upload, "x.zip", tmp_path / "long", ArchiveLimits()) == tmp_path / "long"
    upload.write_bytes(b"plain text")
    assert unpack(upload, "../../My Result.csv", tmp_path / "f", ArchiveLimits()) == tmp_path / "f" / "My_Result.csv"
    assert safe_filename("..") == "submission" and safe_filename(".hidden") == "hidden"


@pytest.mark.parametrize(
    ("moment", "zone", "start", "end"),
    [
        ("2026-03-10T03:59:59.999999Z", "America/New_York", "2026-03-09T04:00:00", "2026-03-10T04:00:00"),
        ("2026-03-10T04:00:00Z", "America/New_York", "2026-03-10T04:00:00", "2026-03-11T04:00:00"),
        (
            "2026-03-08T12:00:00Z",
            "America/New_York",
            "2026-03-08T05:00:00",
            "2026-03-09T04:00:00",
        ),  # 23 hours: clocks go forward
        (
            "2026-10-25T12:00:00Z",
            "Europe/London",
            "2026-10-24T23:00:00",
            "2026-10-26T00:00:00",
        ),  # 25 hours: clocks go back
        ("2026-03-01T20:30:00Z", "Asia/Tehran", "2026-03-01T20:30:00", "2026-03-02T20:30:00"),  # +03:30
    ],
)
def test_a_quota_day_is_a_calendar_day_in_the_contest_time_zone(moment: str, zone: str, start: str, end: str) -> None:
    day = local_day(datetime.fromisoformat(moment), ZoneInfo(zone))
    assert day == (datetime.fromisoformat(start).replace(tzinfo=UTC), datetime.fromisoformat(end).replace(tzinfo=UTC))


def test_migrations_make_exactly_the_tables_of_the_code(database_url: str) -> None:
    engine = connect(database_url)
    migrate(engine)
    migrate(engine)  # a second time changes nothing
    with engine.connect() as connection:
        assert compare_metadata(MigrationContext.configure(connection), metadata) == []


def test_migration_0002_keeps_sessions_and_their_end(database_url: str) -> None:
    """A database of 0.8.5 (revision 0001) with a team token and a session: after the upgrade the session is one, ending 12 h after its log-in."""
    from importlib import resources

    from alembic import command
    from alembic.config import Config
    from sqlalchemy import select, text

    from podium.service.tables import tokens

    engine = connect(database_url)
    config = Config()
    config.set_main_option("script_location", str(resources.files("podium.service") / "migrations"))
    with engine.connect() as connection:
        config.attributes["connection"] = connection
        command.upgrade(config, "0001")
        connection.execute(
            text("INSERT INTO teams (id, name, created) VALUES (1, 'alpha', :t)"),
            {"t": datetime(2026, 3, 1, 9, tzinfo=UTC)},
        )
        for digest, label in (("a" * 64, "podium team add alpha"), ("b" * 64, "session of ann")):
            connection.execute(
                text("INSERT INTO tokens (digest, team_id, organizer, label, created) VALUES (:d, 1, false, :l, :t)"),
                {"d": digest, "l": label, "t": datetime(2026, 3, 1, 9, tzinfo=UTC)},
            )
        connection.commit()
    migrate(engine)
    with engine.connect() as connection:
        assert compare_metadata(MigrationContext.configure(connection), metadata) == []
        rows = {r.label: r for r in connection.execute(select(tokens.c.label, tokens.c.session, tokens.c.expires))}
    assert not rows["podium team add alpha"].session and rows["podium team add alpha"].expires is None
    assert rows["session of ann"].session and rows["session of ann"].expires == datetime(2026, 3, 1, 21, tzinfo=UTC)


@pytest.mark.parametrize(("final", "winner_scores"), [("best", "good"), ("last", "worse")])
def test_final_submission_policies(final: str, winner_scores: str, tmp_path: Path) -> None:
    contest = write_contest(tmp_path / "contest", ranking=f'final = "{final}"')
    clock = Clock(at("2026-03-02T12:00:00Z"))
    service, token = set_up(
        f"sqlite:///{tmp_path / 'db.sqlite3'}", contest, tmp_path / "data", ("alpha", "beta"), clock
    )
    good = demo_archive(contest, tmp_path / "good")  # good/submission.tar.gz
    worse = packed(worse_copy(contest.parent / "demo" / "submission", tmp_path / "worse"), tmp_path)  # worse.tar.gz
    worker = Worker(service.engine, service.data, clock=clock)
    with LiveServer(service) as live:
        for body in (good, worse):
            assert (
                live.call("POST", "/api/submissions", token["alpha"], body=body, query={"filename": body.name}).status
                == 201
            )
            clock.now = at("2026-03-02T12:01:00Z")
        while worker.work_once():
            pass
        public = live.call("GET", "/api/leaderboard").body["teams"]
        clock.now = at("2026-06-01T00:00:00Z")  # the last phase has ended: revealed
        private = live.call("GET", "/api/leaderboard").body["teams"]
        mine = {s["filename"]: s for s in live.call("GET", "/api/submissions", token["alpha"]).body}
    good_private = mine["submission.tar.gz"]["result"]["splits"]["private"]["scores"]
    worse_private = mine["worse.tar.gz"]["result"]["splits"]["private"]["scores"]
    assert good_private != worse_private
    assert (
        public[0]["team"] == "alpha"
        and public[0]["scores"] == mine["submission.tar.gz"]["result"]["splits"]["public"]["scores"]
    )
    assert private[0]["scores"] == (good_private if winner_scores == "good" else worse_private)
    assert [(t["team"], t["rank"], t["status"]) for t in private] == [("alpha", 1, "scored"), ("beta", None, "none")]


def podium(*args: str, stdin: str | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "podium", *args], capture_output=True, text=True, input=stdin, timeout=120
    )


def test_an_organizer_added_first_ties_a_new_database_to_the_contest_file(tmp_path: Path) -> None:
    """``--contest FILE`` ties a new database to the file, as its help says, for ``user add`` as for ``team add``
    (a new organizer who began with their own account was told the database served no contest, 'it serves: none')."""
    contest, data = write_contest(tmp_path / "contest", timezone="UTC"), str(tmp_path / "data")
    added = podium("user", "add", "olga", "--organizer", "--contest", str(contest), "--password-stdin", "--data", data,
                   stdin="organizer password\n")  # fmt: skip
    assert added.returncode == 0, added.stderr
    listed = podium("user", "list", "--data", data)
    assert listed.returncode == 0 and "test-glas" in listed.stdout and "olga" in listed.stdout, listed
    assert podium("team", "add", "alpha", "--data", data).returncode == 0  # the database's only contest now


def test_the_commands_of_organizers_and_teams(tmp_path: Path) -> None:
    contest = write_contest(tmp_path / "contest", timezone="UTC", quota="per_day = 50")
    contest.write_text(
        contest.read_text().replace("2026-06-01T00:00:00Z", "2036-06-01T00:00:00Z")
    )  # open now, for the real clock
    data = tmp_path / "data"
    added = podium("team", "add", "alpha", "--contest", str(contest), "--data", str(data))
    assert added.returncode == 0, added.stderr
    token = added.stdout.strip()
    assert podium("team", "add", "alpha", "--data", str(data)).returncode == 2
    assert (
        podium(
            "user", "add", "ann", "--team", "alpha", "--password-stdin", "--data", str(data), stdin="short\n"
        ).returncode
        == 2
    )
    assert (
        podium(
            "user", "add", "ann", "--team", "alpha", "--password-stdin", "--data", str(data), stdin="a long password\n"
        ).returncode
        == 0
    )
    other = write_contest(tmp_path / "other", "camera-traps")
    assert (
        "holds the contest 'test-glas'"
        in podium("team", "add", "x", "--contest", str(other), "--data", str(data)).stderr
    )
    service, _ = set_up(f"sqlite:///{data / 'podium.sqlite3'}", contest, data, (), Clock(datetime.now(UTC)))
    with LiveServer(service) as live:
        submission = contest.parent / "demo" / "submission"
        sent = podium("submit", "--server", live.url, "--token", token, str(submission))
        assert sent.returncode == 0 and "queued" in sent.stdout, sent.stdout + sent.stderr
        bad = tmp_path / "bad"
        bad.mkdir()
        (bad / "testA_1_seg.png").write_bytes(b"not a png")
        rejected = podium("submit", "--server", live.url, "--token", token, str(bad))
        assert rejected.returncode == 1 and "rejected" in rejected.stdout and "testA_1_seg.png" in rejected.stdout, (
            rejected.stdout
        )
        assert podium("submit", "--server", live.url, "--token", "pdm_wrong", str(bad)).returncode == 2
        Worker(service.engine, service.data).work_once()
        status = json.loads(podium("status", "--server", live.url, "--token", token, "--json").stdout)
        assert [s["status"] for s in status] == ["rejected", "scored"]
        board = podium("leaderboard", "--server", live.url)
        assert board.returncode == 0 and "alpha" in board.stdout and "public split" in board.stdout
        assert podium("reveal", "--data", str(data)).returncode == 0
        assert json.loads(podium("leaderboard", "--server", live.url, "--json").stdout)["revealed"] is True
        assert "round 2: 1 submission queued" in podium("rescore", "--data", str(data)).stdout
    assert "cannot reach" in podium("leaderboard", "--server", live.url).stderr


def test_concurrent_and_total_quotas(tmp_path: Path) -> None:
    from podium.challenges import get

    contest = write_contest(tmp_path / "contest", "camera-traps", quota="per_day = 10\ntotal = 2\nconcurrent = 1")
    clock = Clock(at("2026-03-02T12:00:00Z"))
    service, token = set_up(f"sqlite:///{tmp_path / 'db.sqlite3'}", contest, tmp_path / "data", ("alpha",), clock)
    csv = (get("camera-traps").write_demo(tmp_path / "demo").submission / "team.tsv").read_bytes()
    worker = Worker(service.engine, service.data, clock=clock)
    with LiveServer(service) as live:
        send = lambda: live.call("POST", "/api/submissions", token["alpha"], body=csv, query={"filename": "team.tsv"})
        assert send().status == 201
        busy = send()
        assert busy.status == 429 and "queued or running" in busy.body["detail"]
        assert worker.work_once()
        assert send().status == 201  # the first is scored: one at a time again
        assert worker.work_once()
        spent = send()
        assert spent.status == 429 and "total quota of 2" in spent.body["detail"]
        assert {"total": 2, "total_allowed": 2, "concurrent": 0, "concurrent_allowed": 1}.items() <= live.call(
            "GET", "/api/quota", token["alpha"]
        ).body.items()


@pytest.mark.parametrize("count_failed", [False, True])
def test_which_statuses_use_the_quota(count_failed: bool, tmp_path: Path) -> None:
    from sqlalchemy import insert

    from podium.contest.definition import Quota
    from podium.service.database import reading, writing
    from podium.service.quota import usage
    from podium.service.statuses import STATUSES
    from podium.service.tables import submissions

    contest = write_contest(tmp_path / "contest", "camera-traps")
    clock = Clock(at("2026-03-02T12:00:00Z"))
    service, _ = set_up(f"sqlite:///{tmp_path / 'db.sqlite3'}", contest, tmp_path / "data", ("alpha",), clock)
    with writing(service.engine) as connection:
        for status in STATUSES:
            connection.execute(
                insert(submissions).values(
                    team_id=1,
                    phase="first",
                    track="t",
                    kind="files",
                    filename="x",
                    size=1,
                    sha256="0" * 64,
                    target="files",
                    created=clock(),
                    status=status,
                    selected=False,
                )
            )
    with reading(service.engine) as connection:
        used = usage(connection, 1, Quota(count_failed=count_failed), ZoneInfo("UTC"), clock(), "t")
    charged = {"queued", "running", "scored"} | (
        {"failed"} if count_failed else set()
    )  # never rejected, error or cancelled
    assert (used.today, used.total, used.concurrent) == (len(charged), len(charged), 2)


def test_bodies_other_than_uploads_are_capped(tmp_path: Path) -> None:
    import http.client

    from podium.service.bodies import SMALL_BODY

    contest = write_contest(tmp_path / "contest", "camera-traps")
    service, _ = set_up(
        f"sqlite:///{tmp_path / 'db.sqlite3'}", contest, tmp_path / "data", (), Clock(at("2026-03-02T12:00:00Z"))
    )
    with LiveServer(service) as live:
        at_cap = json.dumps({"user": "u", "password": "p" * (SMALL_BODY - 29)})
        assert len(at_cap) == SMALL_BODY
        assert (
            live.call("POST", "/api/tokens", json_body=json.loads(at_cap)).status == 401
        )  # exactly at the cap: read, and the user is unknown
        assert (
            live.call("POST", "/api/tokens", json_body={"user": "u", "password": "p" * (SMALL_BODY - 28)}).status == 413
        )
        host, port = live.url.removeprefix("http://").split(":")
        connection = http.client.HTTPConnection(host, int(port), timeout=30)
        chunks = (b"x" * 4096 for _ in range(64))  # 256 KiB without a Content-Length
        connection.request(
            "POST", "/api/tokens", body=chunks, headers={"Content-Type": "application/json"}, encode_chunked=True
        )
        assert connection.getresponse().status == 413
        connection.close()


def test_an_upload_reads_and_writes_the_database_in_two_transactions(database_url: str, tmp_path: Path) -> None:
    """The contest, the caller and the quota in one read before the body; the quota again under the team's lock, the
    row and its job in one write after the checks: 2 transactions and at most 9 statements (4 and 11 before)."""
    from sqlalchemy import event

    contest = write_contest(tmp_path / "contest", quota="per_day = 5")
    clock = Clock(at("2026-03-02T12:00:00Z"))
    service, token = set_up(database_url, contest, tmp_path / "data", ("alpha",), clock)
    archive = demo_archive(contest, tmp_path).read_bytes()
    begun: list[int] = []
    statements: list[str] = []
    event.listen(service.engine, "begin", lambda _connection: begun.append(1))
    event.listen(service.engine, "before_cursor_execute", lambda *args: statements.append(args[2]))
    with LiveServer(service) as live:
        send = lambda: live.call(
            "POST", "/api/submissions", token["alpha"], body=archive, query={"filename": "s.tar.gz"}
        )
        assert send().status == 201
        begun.clear()
        statements.clear()
        assert send().status == 201
    counted = [s for s in statements if not s.startswith("BEGIN")]
    assert len(begun) == 2 and len(counted) <= 9, (len(begun), counted)


def test_a_worker_scores_files_at_its_niceness_and_keeps_its_own(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``Worker(nice=10)`` scores files in a thread at niceness 10; the thread that claims jobs (and runs programs) keeps 0."""
    import threading

    from podium.service import worker as worker_module

    contest = write_contest(tmp_path / "contest")
    clock = Clock(at("2026-03-02T12:00:00Z"))
    service, token = set_up(f"sqlite:///{tmp_path / 'db.sqlite3'}", contest, tmp_path / "data", ("alpha",), clock)
    seen: list[int] = []
    scoring = worker_module.score

    def watched(*args: object) -> object:
        seen.append(os.getpriority(os.PRIO_PROCESS, threading.get_native_id()))
        return scoring(*args)

    monkeypatch.setattr(worker_module, "score", watched)
    with LiveServer(service) as live:
        sent = live.call(
            "POST",
            "/api/submissions",
            token["alpha"],
            body=demo_archive(contest, tmp_path).read_bytes(),
            query={"filename": "s.tar.gz"},
        )
        assert sent.status == 201
        assert Worker(service.engine, service.data, clock=clock, nice=10).work_once()
        assert live.call("GET", f"/api/submissions/{sent.body['id']}", token["alpha"]).body["status"] == "scored"
    assert seen == [10] and os.getpriority(os.PRIO_PROCESS, threading.get_native_id()) == 0
