"""``podium serve --contests examples/contests``: every example contest in one real server (uvicorn, a worker process).

One server for the module, on a copy of ``examples/contests`` beside the demo sets (as ``make demo`` leaves a
checkout; the GlaS fixture's truth, in ``../shared``, is not there: its file is reported and the others served).
A user in a team of two contests submits to both; the one worker scores each with ``podium evaluate``'s numbers.
Then the folder changes while the server runs: a contest added, one broken and fixed, one removed.
"""

from __future__ import annotations

import json
import re
import shutil
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from podium.challenges import get
from served import Serve

CONTESTS = Path(__file__).resolve().parents[1] / "examples" / "contests"
PASSWORD = "a long password 7\n"
DEMO_SETS = ("glas", "face-clustering", "camera-traps", "ilsvrc2012-cls", "ilsvrc2012-loc", "ilsvrc2012-fine")


def podium(*args: str, stdin: str | None = None, code: int = 0) -> str:
    done = subprocess.run(
        [sys.executable, "-m", "podium", *args], input=stdin, capture_output=True, text=True, timeout=120, check=False
    )
    assert done.returncode == code, (args, done.stdout, done.stderr)
    return done.stdout + done.stderr


def evaluate(contest: Path, track: str | None, submission: Path) -> dict[str, Any]:
    """``podium evaluate --contest FILE [--track T] --submission PATH --json -``: the result document."""
    command = ["evaluate", "--contest", str(contest), *(["--track", track] if track else [])]
    done = subprocess.run(
        [sys.executable, "-m", "podium", *command, "--submission", str(submission), "--json", "-"],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    return dict(json.loads(done.stdout))


@pytest.fixture(scope="module")
def checkout(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("checkout")
    shutil.copytree(CONTESTS, root / "examples" / "contests")
    for challenge in DEMO_SETS:
        get(challenge).write_demo(root / "demo-data" / challenge)
    return root


@pytest.fixture(scope="module")
def server(checkout: Path) -> Iterator[Serve]:
    with Serve(checkout / "examples" / "contests", checkout / "data", None, option="--contests") as served:
        yield served


def _scored(server: Serve, contest: str, token: str, timeout_s: float = 120) -> dict[str, Any]:
    deadline = time.monotonic() + timeout_s  # bounded
    while True:
        shown = server.call("GET", f"/api/contests/{contest}/submissions", token).body
        if (shown and shown[0]["status"] not in ("queued", "running")) or time.monotonic() > deadline:
            return dict(shown[0])
        time.sleep(0.2)


def test_one_server_serves_every_example_and_one_worker_scores_two_contests(checkout: Path, server: Serve) -> None:
    listed = {c["id"]: c for c in server.call("GET", "/api/contests").body}
    assert set(listed) == {"glas-demo", "ilsvrc2012", "faces-demo", "camera-traps-phases"}
    assert listed["ilsvrc2012"]["tracks"] == ["cls", "loc", "fine"]
    assert "glas-fixture/contest.toml:7: truth: no path" in server.output()  # reported, the others served
    for track in ("cls", "loc", "fine"):
        assert server.call("GET", f"/api/contests/ilsvrc2012/leaderboard?track={track}").status == 200
    where = ("--data", str(checkout / "data"))
    podium("user", "add", "ann", "--password-stdin", *where, stdin=PASSWORD)
    podium("user", "add", "root", "--admin", "--password-stdin", *where, stdin=PASSWORD)
    tokens = {
        contest: podium("team", "add", "annteam", "--contest", contest, "--member", "ann", *where).strip()
        for contest in ("glas-demo", "ilsvrc2012")
    }
    # podium submit --server takes the contest's page: its API is under /api/contests/ID/
    for contest, track, folder in (("glas-demo", None, "glas"), ("ilsvrc2012", "cls", "ilsvrc2012-cls")):
        sent = podium(
            "submit",
            "--server",
            f"{server.url}/c/{contest}",
            "--token",
            tokens[contest],
            *(["--track", track] if track else []),
            str(checkout / "demo-data" / folder / "submission"),
        )
        assert "queued" in sent or "submission" in sent, sent
    root = server.call("POST", "/api/tokens", json_body={"user": "root", "password": PASSWORD.strip()}).body["token"]
    files = checkout / "examples" / "contests"
    for contest, file, track, folder in (
        ("glas-demo", files / "demo" / "contest.toml", None, "glas"),
        ("ilsvrc2012", files / "ilsvrc2012-tasks" / "contest.toml", "cls", "ilsvrc2012-cls"),
    ):
        mine = _scored(server, contest, tokens[contest])
        assert mine["status"] == "scored", mine
        full = server.call("GET", f"/api/contests/{contest}/submissions/{mine['id']}", root).body["result"]
        local = evaluate(file, track, checkout / "demo-data" / folder / "submission")
        assert full["scores"] == local["scores"], contest
        board = server.call("GET", f"/api/contests/{contest}/leaderboard" + (f"?track={track}" if track else "")).body
        assert [row["team"] for row in board["teams"]] == ["annteam"]


def test_the_folder_is_read_again_while_the_server_runs(checkout: Path, server: Serve) -> None:
    files = checkout / "examples" / "contests"
    where = ("--data", str(checkout / "data"))
    shutil.rmtree(files / "glas-fixture")  # its truth is not in this checkout: every reload would report it
    # a contest added: a copy of the demo contest (its pages, kit and public files beside it) under another id
    added = files / "added"
    shutil.copytree(files / "demo", added)
    text = (added / "contest.toml").read_text().replace('id = "glas-demo"', 'id = "glas-added"')
    (added / "contest.toml").write_text(text)
    assert "glas-added" in podium("contest", "reload", *where)
    assert server.call("GET", "/api/contests/glas-added/contest").status == 200
    # one broken: named with its line (exit code 1), its contest served as last read
    broken = files / "added" / "contest.toml"
    good = broken.read_text()
    broken.write_text(good.replace('title = "', 'title = 7 # "', 1))
    said = podium("contest", "reload", *where, code=1)
    assert re.search(r"added/contest\.toml:\d+", said), said
    assert server.call("GET", "/api/contests/glas-added/contest").status == 200
    assert server.call("GET", "/api/contests/ilsvrc2012/contest").status == 200  # the others untouched
    # fixed, with a new title: taken up by every web process at its next request, here through SIGHUP
    broken.write_text(good.replace('title = "', 'title = "Renamed: ', 1))
    assert server.process is not None
    server.process.send_signal(signal.SIGHUP)
    deadline = time.monotonic() + 30  # bounded
    while not server.call("GET", "/api/contests/glas-added/contest").body["title"].startswith("Renamed: "):
        assert time.monotonic() < deadline, server.output()
        time.sleep(0.2)
    # removed: withdrawn, its pages 404, its data kept (a reload that finds it again serves it)
    shutil.rmtree(added)
    assert "withdrawn (their data kept): glas-added" in podium("contest", "reload", *where)
    assert server.call("GET", "/api/contests/glas-added/contest").status == 404
    assert server.call("GET", "/c/glas-added/").status == 404
    assert "glas-added" not in {c["id"] for c in server.call("GET", "/api/contests").body}
