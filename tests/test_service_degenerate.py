"""Degenerate submissions in podium serve: an archive of nothing, of one item, of garbage, for every challenge.

Each upload is refused at once (422, with the reason) or scored or rejected by a
worker with the verdict ``podium evaluate`` gives the same archive; none fails
inside podium, its page (with its report's charts) shows, and the leaderboard still answers. SQLite only: the database does
not change what a submission is (test_service.py runs both).
"""

from __future__ import annotations

import zipfile
from pathlib import Path

import pytest

from conftest import run
from podium.challenges import IDS, get
from podium.service import accounts
from podium.service.database import writing
from podium.service.worker import Worker
from service_helpers import Clock, LiveServer, at, set_up, write_contest
from test_pages import Client, _log_in


def _archives(submission: Path, folder: Path) -> dict[str, Path]:
    """A zip of no file (a folder only), of the first file (two lines of a table), of every file replaced by garbage."""
    files = [p for p in sorted(submission.rglob("*")) if p.is_file()] if submission.is_dir() else [submission]
    base = submission if submission.is_dir() else submission.parent
    made = {name: folder / f"{name}.zip" for name in ("empty", "one", "garbage")}
    folder.mkdir(parents=True, exist_ok=True)
    with zipfile.ZipFile(made["empty"], "w") as archive:
        archive.writestr("team/", b"")
    with zipfile.ZipFile(made["one"], "w") as archive:
        first = files[0]
        data = first.read_bytes() if len(files) > 1 else b"".join(first.read_bytes().splitlines(keepends=True)[:2])
        archive.writestr(first.relative_to(base).as_posix(), data)
    with zipfile.ZipFile(made["garbage"], "w") as archive:
        for path in files:
            archive.writestr(path.relative_to(base).as_posix(), b"not what the format says\n")
    return made


@pytest.mark.parametrize("challenge_id", IDS)
def test_degenerate_uploads_get_podiums_verdict_and_never_fail(challenge_id: str, tmp_path: Path) -> None:
    measured = {p.name for p in get(challenge_id).parameters if p.role == "measured"}
    demo = get(challenge_id).write_demo(tmp_path / "demo")  # its parameters' files (ILSVRC's meta.mat) stay here
    parameters = "".join(f'{k} = "{v}"\n' for k, v in demo.settings.items() if k not in measured)
    extra = (f"[parameters]\n{parameters}" if parameters else "") + "[split]\npublic = 0.5\nseed = 7\n"
    ranking = 'by = "pairwise_f"\nfinal = "best"' if challenge_id == "face-clustering" else 'final = "best"'
    contest = write_contest(tmp_path / "contest", challenge_id, quota="per_day = 10", ranking=ranking, extra=extra)
    clock = Clock(at("2026-03-10T12:00:00Z"))
    service, token = set_up(f"sqlite:///{tmp_path / 'podium.sqlite3'}", contest, tmp_path / "data", ("alpha",), clock)
    worker = Worker(service.engine, service.data, clock=clock)
    with writing(service.engine) as connection:
        accounts.add_user(
            connection, "ann", "ann-password-1", 1, False, clock()
        )  # alpha's member, who reads the submission's page
    with LiveServer(service) as live:
        browser = Client(live.url)
        assert _log_in(browser) == 303
        for case, archive in _archives(demo.submission, tmp_path / "uploads").items():
            code, output = run("evaluate", "--contest", str(contest), "--submission", str(archive), "--workers", "1")
            assert code in (0, 1) and "internal error" not in output, (case, output)
            sent = live.call(
                "POST", "/api/submissions", token["alpha"], body=archive.read_bytes(), query={"filename": archive.name}
            )
            assert sent.status in (201, 422), (case, sent.status, sent.body)
            if sent.status == 422:  # refused at the door, with the reason: podium evaluate rejects it too
                assert code == 1 and sent.body, (case, sent.body)
                continue
            while worker.work_once():
                pass
            shown = live.call("GET", f"/api/submissions/{sent.body['id']}", token["alpha"])
            assert shown.status == 200 and shown.body["status"] == ("scored" if code == 0 else "rejected"), (
                case,
                shown.body,
                output,
            )
            assert browser.get(f"/submissions/{sent.body['id']}") == 200, case  # its report's charts drawn
        board = live.call("GET", "/api/leaderboard", token["alpha"])
        assert board.status == 200, board.body
