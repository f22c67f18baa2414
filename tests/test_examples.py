"""The examples run end to end: the pixel-level participant under podium run (the budget rule too), and the example contests."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import meets_the_schema, sandbox_options

EXAMPLE = Path(__file__).resolve().parents[1] / "examples" / "fuzzy_jaccard_thresholds"
pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="the runner reads /proc")


@pytest.fixture(scope="module")
def tiles(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("tiles")
    subprocess.run(
        [sys.executable, str(EXAMPLE / "make_set.py"), str(out), "--images", "4", "--size", "256"], check=True
    )
    return out


def podium_run(tiles: Path, *extra: str) -> dict:
    command = [
        sys.executable,
        "-m",
        "podium",
        "run",
        "fuzzy-jaccard",
        "--images",
        str(tiles / "images"),
        "--truth",
        str(tiles / "truth"),
        "--json",
        "-",
        "--quiet",
        *sandbox_options(),
        "--visible",
        str(EXAMPLE),
        *extra,
    ]
    return meets_the_schema(json.loads(subprocess.run(command, capture_output=True, text=True, check=True).stdout))


def test_threshold_participant_is_scored(tiles: Path) -> None:
    doc = podium_run(tiles, "--command", f"{sys.executable} {EXAMPLE / 'participant.py'}", "--set", "startup_s=20")
    assert doc["status"] == "scored" and doc["run"]["outcome"] == "finished"
    assert doc["run"]["images_processed"] == 4 and doc["scores"]["fuzzy_jaccard"] > 0.4


def test_budget_stops_a_slow_participant_and_scores_what_it_wrote(tiles: Path) -> None:
    # 4 x 0.066 MP at 0.1 MP/s = 2.6 s, plus 1 s to start; the participant needs 3 s per image
    command = f"{sys.executable} {EXAMPLE / 'participant.py'} --slow 3"
    doc = podium_run(tiles, "--command", command, "--set", "rate_mp_s=0.1", "--set", "startup_s=1")
    assert doc["run"]["outcome"] == "timeout" and doc["status"] == "scored"
    assert 1 <= doc["run"]["images_processed"] < 4
    assert any(w["code"] == "missing_images" for w in doc["warnings"])


CONTESTS = Path(__file__).resolve().parents[1] / "examples" / "contests"


@pytest.fixture(scope="module")
def demo_checkout(tmp_path_factory) -> Path:
    """A copy of examples/contests beside demo-data/, as ``make demo`` leaves a checkout."""
    root = tmp_path_factory.mktemp("checkout")
    shutil.copytree(CONTESTS, root / "examples" / "contests")
    subprocess.run(
        [sys.executable, "-m", "podium", "demo", "--folder", str(root / "demo-data"), "--workers", "1"],
        capture_output=True,
        check=True,
    )
    return root


def test_the_docs_show_the_example_contests_as_they_are() -> None:
    page = (Path(__file__).resolve().parents[1] / "docs" / "contests.md").read_text()
    for name in ("glas-fixture", "face-clustering", "camera-traps-phases"):
        assert (CONTESTS / name / "contest.toml").read_text() in page, name


def test_the_docs_show_the_glas_fixture_commands_as_they_print(shared: Path) -> None:
    """Each ``$ .venv/bin/podium ...`` of docs/contests.md, run from the checkout, prints the lines shown (up to a ``...``)."""
    root = Path(__file__).resolve().parents[1]
    page = (root / "docs" / "contests.md").read_text()
    block = page[page.index("$ .venv/bin/podium contest check") :]
    block = block[: block.index("```")]
    examples = [example.split("\n") for example in block.split("$ .venv/bin/podium ")[1:]]
    assert len(examples) == 2
    for command, *shown in examples:
        shown = shown[: shown.index("...")] if "..." in shown else [line for line in shown if line]
        printed = subprocess.run(
            [sys.executable, "-m", "podium", *command.split()], cwd=root, capture_output=True, text=True, check=True
        ).stdout
        assert [line.rstrip() for line in printed.splitlines()[: len(shown)]] == shown, command


def test_the_glas_fixture_contest_is_valid_and_scores_its_splits(shared: Path) -> None:
    contest = CONTESTS / "glas-fixture" / "contest.toml"  # its truth is ../shared, beside the repository
    check = subprocess.run(
        [sys.executable, "-m", "podium", "contest", "check", str(contest)], capture_output=True, text=True
    )
    assert check.returncode == 0 and "2 public, 2 private units" in check.stdout, check.stdout + check.stderr
    command = [
        sys.executable,
        "-m",
        "podium",
        "evaluate",
        "--contest",
        str(contest),
        "--submission",
        str(shared / "data" / "glas-fixture" / "submission"),
        "--json",
        "-",
    ]
    doc = meets_the_schema(json.loads(subprocess.run(command, capture_output=True, text=True, check=True).stdout))
    assert doc["splits"]["public"]["scores"]["f1"] == 0.8 and doc["splits"]["private"]["scores"]["f1"] == 1.0
    assert doc["signature"]["contest"]["split"]["public_list"] == "public.txt"


def test_the_example_face_clustering_contest_runs_its_participant(demo_checkout: Path) -> None:
    folder = demo_checkout / "examples" / "contests" / "face-clustering"
    command = [
        sys.executable,
        "-m",
        "podium",
        "run",
        "--contest",
        str(folder / "contest.toml"),
        "--json",
        "-",
        "--quiet",
        "--command",
        f"{sys.executable} {folder / 'participant.py'}",
        *sandbox_options(),
        "--visible",
        str(folder),
    ]
    check = subprocess.run(
        [sys.executable, "-m", "podium", "contest", "check", str(folder / "contest.toml")],
        capture_output=True,
        text=True,
    )
    assert check.returncode == 0 and "60 public, 140 private units" in check.stdout, check.stdout + check.stderr
    doc = meets_the_schema(json.loads(subprocess.run(command, capture_output=True, text=True, check=True).stdout))
    assert doc["status"] == "scored" and doc["splits"]["public"]["units"] == 60 and doc["scores"]["pairwise_f"] == 1.0


def test_make_demo_serves_the_demo_contest_and_scores_a_submission(demo_checkout: Path) -> None:
    """What ``make demo`` starts: podium serve on examples/contests/demo with a team 'demo', its worker a process."""
    import re
    import signal
    import socket
    import time

    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    command = [
        sys.executable,
        "-m",
        "podium",
        "serve",
        "--contest",
        str(demo_checkout / "examples" / "contests" / "demo" / "contest.toml"),
        "--data",
        str(demo_checkout / "demo-data" / "service"),
        "--port",
        str(port),
        "--team",
        "demo",
    ]
    server = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        lines: list[str] = []
        while len(lines) < 20 and "--token" not in "".join(lines):  # bounded: the banner, then the team's command
            lines.append(server.stdout.readline())  # type: ignore[union-attr]
        token = re.search(r"--token (\S+)", "".join(lines))
        assert token is not None and f"http://127.0.0.1:{port}/docs" in "".join(lines), lines
        address = f"http://127.0.0.1:{port}"
        for _ in range(100):  # bounded: 10 s for uvicorn to listen
            with socket.socket() as probe:
                if probe.connect_ex(("127.0.0.1", port)) == 0:
                    break
            time.sleep(0.1)
        sent = subprocess.run(
            [
                sys.executable,
                "-m",
                "podium",
                "submit",
                "--server",
                address,
                "--token",
                token.group(1),
                "--wait",
                "60",
                str(demo_checkout / "demo-data" / "glas" / "submission"),
            ],
            capture_output=True,
            text=True,
            timeout=120,
        )
        assert sent.returncode == 0 and "scored" in sent.stdout and "public scores: f1=" in sent.stdout, (
            sent.stdout + sent.stderr
        )
        board = subprocess.run(
            [sys.executable, "-m", "podium", "leaderboard", "--server", address, "--json"],
            capture_output=True,
            text=True,
            timeout=60,
        )
        assert json.loads(board.stdout)["teams"][0]["team"] == "demo"
    finally:
        server.send_signal(signal.SIGINT)
        server.wait(timeout=60)


def test_the_readme_shows_podium_evaluate_on_the_demo_set_as_it_prints(tmp_path: Path) -> None:
    """The README's participant example is the fuzzy-jaccard demo set (``podium demo`` writes it), scored as shown."""
    import podium

    readme = (Path(__file__).resolve().parents[1] / "README.md").read_text()
    block = readme[readme.index("$ .venv/bin/podium evaluate fuzzy-jaccard --truth truth/ --submission team42/\n") :]
    shown = block[: block.index("```")].splitlines()[1:]
    demo = podium.demo("fuzzy-jaccard", tmp_path)
    command = [
        sys.executable,
        "-m",
        "podium",
        "evaluate",
        "fuzzy-jaccard",
        "--truth",
        str(demo.truth),
        "--submission",
        str(demo.submission),
    ]
    printed = subprocess.run(command, capture_output=True, text=True, check=True).stdout
    assert [line.rstrip() for line in printed.splitlines()] == shown


def test_the_example_camera_traps_contest_scores_each_phase_on_its_own_truth(demo_checkout: Path) -> None:
    folder = demo_checkout / "examples" / "contests" / "camera-traps-phases"
    contest = str(folder / "contest.toml")
    check = subprocess.run(
        [sys.executable, "-m", "podium", "contest", "check", contest], capture_output=True, text=True
    )
    assert check.returncode == 0 and "150 public, 150 private units" in check.stdout, check.stdout + check.stderr
    evaluate = [sys.executable, "-m", "podium", "evaluate", "--contest", contest]
    scored = {}
    for phase, submission in (
        ("development", folder / "validation" / "submission"),
        ("final", demo_checkout / "demo-data" / "camera-traps" / "submission"),
    ):
        done = subprocess.run(
            [*evaluate, "--phase", phase, "--submission", str(submission), "--json", "-"],
            capture_output=True,
            text=True,
            check=True,
        )
        scored[phase] = meets_the_schema(json.loads(done.stdout))
    assert len(scored["development"]["units"]["rows"]) == 40 and scored["development"]["signature"]["contest"][
        "phases"
    ] == ["development"]
    assert scored["final"]["splits"]["public"]["units"] == 150 and scored["final"]["status"] == "scored"
    wrong = subprocess.run(
        [
            *evaluate,
            "--phase",
            "development",
            "--submission",
            str(demo_checkout / "demo-data" / "camera-traps" / "submission"),
        ],
        capture_output=True,
        text=True,
    )
    assert (
        wrong.returncode == 1 and "is not in the test set" in wrong.stdout + wrong.stderr
    )  # test-set files in the development phase
