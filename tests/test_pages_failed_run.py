"""The pages of a program contest once a program has failed: a failed run's result has no scores and no splits."""

from __future__ import annotations

import io
import tarfile
from pathlib import Path

from podium.contest import load
from podium.service import accounts
from podium.service.accounts import Caller
from podium.service.database import writing
from podium.service.intake import Upload, take
from podium.service.worker import Worker
from service_helpers import Clock, LiveServer, at, set_up, write_contest
from test_pages import Client, _log_in
from test_service_faults import FACES


def test_a_failed_program_leaves_every_page_standing(tmp_path: Path) -> None:
    """A program that exits 3 ends ``failed``; its team's submissions, their live rows, its report and the organizers'
    page answer 200 (0.8.5 after the merge answered 500: the rows read ``result.splits`` of a document that has none)."""
    contest = write_contest(
        tmp_path / "contest",
        "face-clustering",
        kind="programs",
        extra=FACES.format(images=tmp_path / "contest" / "demo" / "images"),
    )
    clock = Clock(at("2026-03-02T12:00:00Z"))
    service, _ = set_up(f"sqlite:///{tmp_path / 'podium.db'}", contest, tmp_path / "data", ("alpha",), clock)
    with writing(service.engine) as connection:
        accounts.add_user(connection, "ann", "ann-password-1", 1, False, clock())
        accounts.add_user(connection, "olga", "olga-password-1", None, True, clock())
    archive = tmp_path / "program.tar.gz"
    with tarfile.open(archive, "w:gz") as tar:
        script = b"echo 'no model here' >&2\nexit 3\n"
        info = tarfile.TarInfo("run.sh")
        info.size = len(script)
        tar.addfile(info, io.BytesIO(script))
    taken = take(
        service.engine,
        load(contest),
        service.data,
        Caller(1, "alpha", False),
        Upload(archive, archive.name, archive.stat().st_size, "0" * 64, None),
        clock(),
        False,
    )
    assert taken["status"] == "queued", taken
    assert Worker(service.engine, service.data, clock=clock).work_once()
    with LiveServer(service) as live:
        team = Client(live.url)
        assert _log_in(team) == 303
        assert [team.get(path) for path in ("/submissions", "/submissions/rows", f"/submissions/{taken['id']}")] == [
            200,
            200,
            200,
        ]
        organizer = Client(live.url)
        assert _log_in(organizer, "olga", "olga-password-1") == 303
        assert [organizer.get(path) for path in ("/organizer", "/submissions", f"/submissions/{taken['id']}")] == [
            200,
            200,
            200,
        ]
        assert live.call("GET", f"/api/submissions/{taken['id']}", None).status == 401
        assert team.get(f"/submissions/{taken['id']}/logs") == 200  # the run's logs, as kept
        assert b"crashed, exit code 3" in team.body and b"no model here" in team.body
        assert team.get(f"/submissions/{taken['id']}/file") == 200 and team.body == archive.read_bytes()
