"""The ``podium`` command.

Exit codes (every command): 0 scored / valid, 1 submission rejected, 2 usage,
truth or configuration error, 70 internal error (``--debug`` for the traceback).
"""

from __future__ import annotations

import functools
import json
import math
import sys
import traceback
from collections.abc import Callable
from pathlib import Path
from typing import Any

import click

from podium import __version__, display
from podium.allocator import keep_large_blocks
from podium.challenges import every, get
from podium.engine import default_workers, evaluate
from podium.errors import EXIT_INTERNAL, EXIT_REJECTED, EXIT_SCORED, PodiumError
from podium.parameters import parse_settings
from podium.ranking import Team, rank_teams
from podium.runner.run import run_program
from podium.runner.sandbox import NO_SANDBOX_WARNING, SANDBOXES
from podium.formats.files import FileProblem
from podium.formats.text import TextLimits, read_text
from podium.result import REJECTED, SCORED, Result


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="podium")
@click.option("--debug", is_flag=True, help="Show the traceback of an internal error.")
@click.pass_context
def cli(ctx: click.Context, debug: bool) -> None:
    """podium: validate, score and rank computer-vision challenge submissions."""
    ctx.obj = {"debug": debug}


def guarded(command: Callable[..., int]) -> Callable[..., None]:
    """Map a command's outcome to podium's exit codes; never show a raw traceback."""

    @functools.wraps(command)
    def wrapper(*args: Any, **kwargs: Any) -> None:
        debug = click.get_current_context().find_root().obj.get("debug", False)
        try:
            code = command(*args, **kwargs)
        except PodiumError as exc:
            display.stderr.print(f"[red]podium:[/red] {display.escape(str(exc))}", soft_wrap=True)
            display.print_issues(display.stderr, "error", exc.issues)
            code = exc.exit_code
        except KeyboardInterrupt:
            display.stderr.print("podium: interrupted")
            code = 130
        except Exception as exc:  # a bug in podium: one line, unless --debug
            if debug:
                traceback.print_exc()
            message = str(exc).splitlines()[0] if str(exc) else ""
            display.stderr.print(
                f"[red]podium: internal error:[/red] {type(exc).__name__}: {display.escape(message)} "
                "(run with --debug for the traceback)",
                soft_wrap=True,
            )
            code = EXIT_INTERNAL
        sys.exit(code)

    return wrapper


def scoring_options(command: Callable[..., Any]) -> Callable[..., Any]:
    """Options shared by ``evaluate`` and ``validate``."""
    for option in reversed(
        [
            click.argument("challenge"),
            click.option("--truth", required=True, type=click.Path(exists=True, path_type=Path), help="Ground-truth file or folder."),
            click.option("--submission", required=True, type=click.Path(path_type=Path), help="Submission file or folder."),
            click.option("--set", "settings", multiple=True, metavar="KEY=VALUE", help="Set a challenge parameter (repeatable)."),
            click.option("--json", "json_path", metavar="PATH|-", help="Write the result document to PATH (- = stdout, no table)."),
            click.option("--workers", type=click.IntRange(min=1), default=None, help="Worker processes [default: all cores]."),
            click.option("--quiet", is_flag=True, help="No progress bar, no table, no problem listing."),
        ]
    ):
        command = option(command)
    return command


@cli.command("evaluate")
@scoring_options
@guarded
def evaluate_command(challenge: str, truth: Path, submission: Path, settings: tuple[str, ...], json_path: str | None, workers: int | None, quiet: bool) -> int:
    """Score a submission against the truth."""
    return _score(challenge, truth, submission, settings, json_path, workers, quiet, checks_only=False)


@cli.command("validate")
@scoring_options
@guarded
def validate_command(challenge: str, truth: Path, submission: Path, settings: tuple[str, ...], json_path: str | None, workers: int | None, quiet: bool) -> int:
    """Run only the checks of a submission (same document and exit codes)."""
    return _score(challenge, truth, submission, settings, json_path, workers, quiet, checks_only=True)


def _score(
    challenge_id: str,
    truth: Path,
    submission: Path,
    settings: tuple[str, ...],
    json_path: str | None,
    workers: int | None,
    quiet: bool,
    checks_only: bool,
) -> int:
    progress = display.DelayedProgress("scoring" if not checks_only else "checking")
    progress.enabled = progress.enabled and not quiet
    try:
        result = evaluate(
            challenge_id,
            truth,
            submission,
            parse_settings(settings),
            workers=workers or default_workers(),
            progress=progress,
            checks_only=checks_only,
        )
    finally:
        progress.close()
    _report(result, json_path, quiet, checks_only)
    return EXIT_REJECTED if result.status == REJECTED else EXIT_SCORED


def _report(result: Result, json_path: str | None, quiet: bool, checks_only: bool = False) -> None:
    if json_path == "-":
        click.echo(result.to_json())
    elif json_path:
        _write(Path(json_path), result.to_json() + "\n")
    if quiet:
        return
    console = display.stderr if json_path == "-" else display.stdout
    if json_path != "-":
        if result.scores:
            console.print(display.scores_table(get(result.challenge), result))
        else:
            status = "valid" if checks_only and result.status != REJECTED else result.status
            console.print(f"{result.challenge}: [bold]{status}[/bold]")
    display.print_issues(console, "warning", result.warnings)
    display.print_issues(console, "error", result.errors)


@cli.command("run")
@click.argument("challenge")
@click.option("--command", "command", metavar="CMD", help="The program, as a shell command line.")
@click.option("--image", metavar="DOCKER_IMAGE", help="The program, as a Docker image (needs a Docker engine).")
@click.option("--images", required=True, type=click.Path(exists=True, file_okay=False, path_type=Path), help="Folder of the test images.")
@click.option("--truth", required=True, type=click.Path(exists=True, path_type=Path), help="Ground-truth file or folder.")
@click.option("--time-limit", type=click.FloatRange(min=0, min_open=True), default=None, help="Seconds [default: the challenge's rule].")
@click.option("--memory-limit", type=click.FloatRange(min=0, min_open=True), default=None, help="Peak memory in MB of the whole process tree.")
@click.option("--set", "settings", multiple=True, metavar="KEY=VALUE", help="Set a challenge parameter (repeatable).")
@click.option("--json", "json_path", metavar="PATH|-", help="Write the result document to PATH (- = stdout, no table).")
@click.option("--workdir", type=click.Path(file_okay=False, path_type=Path), default=None, help="Working directory to create [default: a new temporary one].")
@click.option("--cgroup", type=click.Path(exists=True, file_okay=False, path_type=Path), envvar="PODIUM_CGROUP",
              help="A cgroup v2 directory delegated to podium, for the run's limits and peak [env PODIUM_CGROUP].")  # fmt: skip
@click.option("--sandbox", type=click.Choice(SANDBOXES), default="auto", show_default=True,
              help="auto: bubblewrap for --command, Docker for --image; none runs the program with podium's own rights.")  # fmt: skip
@click.option("--visible", multiple=True, type=click.Path(exists=True, path_type=Path),
              help="A folder the sandboxed program may read at its own path: its code, interpreter, models (repeatable).")  # fmt: skip
@click.option("--cpus", type=click.FloatRange(min=0, min_open=True), default=None, help="CPU time in cores' worth (e.g. 4).")
@click.option("--gpus", metavar="all|device=N,...", default=None, help="NVIDIA GPUs the sandboxed program may use.")
@click.option("--quiet", is_flag=True, help="No table, no problem listing.")
@guarded
def run_command(
    challenge: str, command: str | None, image: str | None, images: Path, truth: Path, time_limit: float | None,
    memory_limit: float | None, settings: tuple[str, ...], json_path: str | None, workdir: Path | None, cgroup: Path | None,
    sandbox: str, visible: tuple[Path, ...], cpus: float | None, gpus: str | None, quiet: bool,
) -> int:  # fmt: skip
    """Run a participant's program in a sandbox under the contest's contract and limits, then score its output."""
    if sandbox == "none":
        display.stderr.print(f"[yellow]warning:[/yellow] {NO_SANDBOX_WARNING}", soft_wrap=True)
    result = run_program(
        challenge,
        command=command,
        image=image,
        images=images,
        truth=truth,
        settings=parse_settings(settings),
        time_limit_s=time_limit,
        memory_limit_mb=memory_limit,
        workdir=workdir,
        workers=default_workers(),
        cgroup=cgroup,
        sandbox=sandbox,
        visible=visible,
        cpus=cpus,
        gpus=gpus,
    )
    _report(result, json_path, quiet)
    if not quiet and json_path != "-" and result.run:
        run = result.run
        display.stdout.print(
            f"run: {run['outcome']}, {run['wall_s']:.2f} s (limit {run['time_limit_s']}), peak {run['peak_memory_mb']:.1f} MB, "
            f"{'killed at the limit' if run['exit_code'] is None else 'exit code ' + str(run['exit_code'])}, "
            f"network {'isolated' if run['network_isolated'] else 'NOT isolated'}, sandbox {run['sandbox']}",
            soft_wrap=True,
        )
        if run["exit_code"] not in (0, None) and run["stderr_tail"]:
            display.stdout.print("last lines of the program's stderr:\n" + display.escape(run["stderr_tail"]), soft_wrap=True)
    return EXIT_REJECTED if result.status == REJECTED else EXIT_SCORED


@cli.command("rank")
@click.argument("challenge")
@click.argument("results", nargs=-1, required=True, type=click.Path(exists=True, dir_okay=False, path_type=Path))
@click.option("--name", "names", multiple=True, help="Team name of each result, in order [default: the file name].")
@click.option("--decimals", type=click.IntRange(min=0), default=None, help="Round scores to N decimals before ranking.")
@click.option("--json", "json_path", metavar="PATH|-", help="Write the leaderboard as JSON to PATH (- = stdout, no table).")
@guarded
def rank_command(challenge: str, results: tuple[Path, ...], names: tuple[str, ...], decimals: int | None, json_path: str | None) -> int:
    """Rank teams from their result documents (one per team)."""
    spec = get(challenge)
    if names and len(names) != len(results):
        raise PodiumError(f"--name was given {len(names)} times for {len(results)} results")
    team_names = list(names) or [p.stem for p in results]
    if len(set(team_names)) != len(team_names):
        raise PodiumError("two results have the same team name; use --name")
    teams = [_load_team(path, name, challenge) for path, name in zip(results, team_names)]
    criteria = rank_teams(spec, teams, decimals)
    board = {
        "challenge": challenge,
        "decimals": decimals,
        "rank_sum": spec.rank_sum,
        "criteria": [{"name": c.name, "higher_is_better": c.higher_is_better} for c in criteria],
        "teams": [
            {"rank": t.rank, "name": t.name, "status": t.status, "rank_sum": t.rank_sum, "ranks": t.ranks, "scores": t.scores}
            for t in teams
        ],
    }
    if json_path == "-":
        click.echo(json.dumps(board, indent=2))
        return EXIT_SCORED
    if json_path:
        _write(Path(json_path), json.dumps(board, indent=2) + "\n")
    display.stdout.print(display.leaderboard(spec, teams, criteria))
    return EXIT_SCORED


RESULT_LIMITS = TextLimits(max_bytes=64 << 20, max_line=64 << 20)  # documents with per-image details of 100,000 images fit


def _load_team(path: Path, name: str, challenge: str) -> Team:
    """A team from its result document; :class:`PodiumError` naming what is wrong with it."""
    try:
        doc = json.loads(read_text(path, RESULT_LIMITS), parse_constant=_refuse_constant)
    except FileProblem as exc:
        raise PodiumError(f"{path} {exc}") from None
    except (json.JSONDecodeError, ValueError, RecursionError) as exc:
        reason = "it is nested too deeply" if isinstance(exc, RecursionError) else str(exc).splitlines()[0][:200]
        raise PodiumError(f"{path} is not a podium result document: not valid JSON ({reason})") from None
    if not isinstance(doc, dict) or not {"challenge", "status", "scores"} <= doc.keys():
        raise PodiumError(f"{path} is not a podium result document (it needs challenge, status and scores)")
    if doc["challenge"] != challenge:
        raise PodiumError(f"{path} is a result of {str(doc['challenge'])[:80]!r}, not {challenge!r}")
    status, scores = doc["status"], doc["scores"]
    if status not in (SCORED, REJECTED):
        raise PodiumError(f"{path} has status {str(status)[:80]!r}; a result document says 'scored' or 'rejected'")
    if not isinstance(scores, dict):
        raise PodiumError(f"{path} has scores of type {type(scores).__name__}; scores are an object of numbers")
    return Team(name, status, {str(k): _score_value(path, str(k), v) for k, v in scores.items()})


def _refuse_constant(constant: str) -> None:
    raise ValueError(f"{constant} is not a number a result document may hold")


def _score_value(path: Path, key: str, value: object) -> float | int | None:
    """A score as a finite number or null; anything else is refused."""
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise PodiumError(f"{path}: score {key[:80]!r} is {type(value).__name__ if not isinstance(value, bool) else 'a boolean'}, not a number")
    try:
        number = float(value)
    except OverflowError:
        number = math.inf
    if not math.isfinite(number):
        raise PodiumError(f"{path}: score {key[:80]!r} is too large to be a score")
    return value


def _write(path: Path, text: str) -> None:
    try:
        path.write_text(text, encoding="utf-8")
    except OSError as exc:
        raise PodiumError(f"cannot write {path}: {exc.strerror or exc}") from None


@cli.command("challenges")
@click.option("--json", "as_json", is_flag=True, help="Print the list as JSON.")
@guarded
def challenges_command(as_json: bool) -> int:
    """List the challenges, their scores and parameters."""
    if as_json:
        click.echo(json.dumps([_describe(c) for c in every()], indent=2))
    else:
        for challenge in every():
            display.print_challenge(display.stdout, challenge)
    return EXIT_SCORED


def _describe(challenge: Any) -> dict[str, Any]:
    return {
        "id": challenge.id,
        "title": challenge.title,
        "rules": challenge.rules,
        "primary": challenge.primary,
        "scores": [{"name": s.name, "higher_is_better": s.higher_is_better, "help": s.help} for s in challenge.scores],
        "parameters": [{"name": p.name, "default": p.default, "allowed": p.allowed, "help": p.help} for p in challenge.parameters],
    }


@cli.command("demo")
@click.option("--folder", type=click.Path(file_okay=False, path_type=Path), default=Path("demo-data"), show_default=True,
              help="Where to write the demo data (kept, so that the commands shown can be run again).")  # fmt: skip
@click.option("--workers", type=click.IntRange(min=1), default=None, help="Worker processes [default: all cores].")
@guarded
def demo_command(folder: Path, workers: int | None) -> int:
    """Generate a small synthetic test set for every challenge and score a sample submission."""
    for challenge in every():
        demo = challenge.write_demo(folder / challenge.id)
        settings = "".join(f" --set {k}={v}" for k, v in demo.settings.items())
        display.stdout.print(
            f"\n[bold]{challenge.id}[/bold]: podium evaluate {challenge.id} --truth {demo.truth} --submission {demo.submission}{settings}",
            soft_wrap=True,
        )
        result = evaluate(challenge.id, demo.truth, demo.submission, demo.settings, workers=workers or default_workers())
        _report(result, None, quiet=False)
        if result.status == REJECTED:
            return EXIT_REJECTED
    return EXIT_SCORED


def main() -> None:
    keep_large_blocks()
    cli(prog_name="podium")
