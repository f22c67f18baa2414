"""What ``podium submit``, ``status``, ``leaderboard`` print against a served contest (real uvicorn on 127.0.0.1)."""

from __future__ import annotations

import os
import re
from pathlib import Path

from click.testing import CliRunner

from podium.cli import cli
from podium.publish import display
from podium.service.worker import Worker
from service_helpers import Clock, LiveServer, at, demo_archive, set_up, write_contest


def test_submit_over_the_size_limit_says_so_before_sending(tmp_path: Path) -> None:
    contest = write_contest(tmp_path / "contest", upload_mb=0.5)
    clock = Clock(at("2026-03-10T12:00:00Z"))
    service, tokens = set_up(f"sqlite:///{tmp_path / 'podium.db'}", contest, tmp_path / "data", ("alpha",), clock)
    big = tmp_path / "big.bin"
    big.write_bytes(os.urandom(3 << 20))
    with LiveServer(service) as live:
        run = CliRunner().invoke(cli, ["submit", "--server", live.url, "--token", tokens["alpha"], str(big)])
    assert run.exit_code == 2, run.output
    assert "big.bin is 3,145,728 bytes; this contest takes at most 0.5 MB" in run.output
    assert "cannot reach" not in run.output


def test_submit_status_and_leaderboard_print_the_contest_decimals_and_whole_columns(tmp_path: Path) -> None:
    contest = write_contest(tmp_path / "contest", ranking='final = "best"\ndecimals = 3', extra="")
    clock = Clock(at("2026-03-10T12:00:00Z"))
    service, tokens = set_up(f"sqlite:///{tmp_path / 'podium.db'}", contest, tmp_path / "data", ("alpha",), clock)
    archive = demo_archive(contest, tmp_path / "packed")
    worker = Worker(service.engine, service.data, clock=clock)
    with LiveServer(service) as live:
        sent = CliRunner().invoke(cli, ["submit", "--server", live.url, "--token", tokens["alpha"], str(archive)])
        assert sent.exit_code == 0, sent.output
        while worker.work_once():
            pass
        shown = CliRunner().invoke(cli, ["status", "--server", live.url, "--token", tokens["alpha"], "1"])
        listed = CliRunner().invoke(cli, ["status", "--server", live.url, "--token", tokens["alpha"]])
        board = CliRunner().invoke(cli, ["leaderboard", "--server", live.url], env={"COLUMNS": "80"})
    assert shown.exit_code == 0 and listed.exit_code == 0 and board.exit_code == 0, (
        shown.output,
        listed.output,
        board.output,
    )
    scores = shown.output.split("scores: ", 1)[1].split("\n", 1)[0]
    assert all(
        len(value.split(".")[1]) == 3 for value in scores.replace(",", " ").split() if "=" not in value and "." in value
    ), scores
    assert "f1=0." in scores and len(scores.split("f1=")[1].split(",")[0]) == 5, (
        scores
    )  # 0.xyz: the contest's 3 decimals
    assert "f1=0." in listed.output  # the list shows each submission's scores
    assert "object_hausdorff" in board.output and "…" not in board.output  # whole column names in a pipe
    row = next(line for line in board.output.splitlines() if "alpha" in line)
    cells = [cell.split()[0] for cell in row.split("│") if "(" in cell]  # each score as '0.xyz (rank)'
    assert cells and all(len(cell.split(".")[1]) == 3 for cell in cells), row  # as the board page rounds them


def test_printed_commands_name_the_podium_that_runs(tmp_path: Path, monkeypatch) -> None:
    """After ``make demo`` podium is ``.venv/bin/podium``, not on PATH: the commands it prints say so."""
    program = tmp_path / ".venv" / "bin" / "podium"
    program.parent.mkdir(parents=True)
    program.write_text("")
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr("sys.argv", [str(program)])
    monkeypatch.setenv("PATH", "/usr/bin:/bin")
    assert display.command_name() == ".venv/bin/podium"
    monkeypatch.setenv("PATH", f"{program.parent}:/usr/bin:/bin")
    program.chmod(0o755)
    assert display.command_name() == "podium"


def test_the_serve_banner_prints_commands_that_run_as_printed(tmp_path: Path, monkeypatch) -> None:
    """After make demo, podium is .venv/bin/podium: every command the banner names is that one (0.8.5 printed 'podium' for three)."""
    from podium.cli.service import serve_banner
    from podium.contest import load

    monkeypatch.setattr(display, "command_name", lambda: ".venv/bin/podium")
    banner = serve_banner(load(write_contest(tmp_path / "contest")), "http://127.0.0.1:8000", tmp_path, 1, False)
    named = re.findall(r"(\S*podium) (user|team|leaderboard)\b", banner)
    assert sorted(kind for _, kind in named) == ["leaderboard", "team", "user"] and {name for name, _ in named} == {
        ".venv/bin/podium"
    }, banner
