"""The scoring commands: ``evaluate``, ``validate``, ``run``, ``rank``, ``contest check``, ``report``, ``challenges``, ``demo``."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from contextlib import nullcontext
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

from podium.challenges import IDS
from podium.cli.commandline import (
    CGROUP_OPTION,
    CONTEST_OPTION,
    CONTEST_PHASE_OPTION,
    CONTEST_TRACK_OPTION,
    SCHEDULER_OPTION,
    VIEW_OPTION,
    database_options,
    guarded,
)
from podium.core.errors import EXIT_REJECTED, EXIT_SCORED, PodiumError, UsageError
from podium.core.labels import PRIVATE, PUBLIC, REJECTED, SCORED
from podium.core.lazy import LazyModule
from podium.runner.choices import DEFAULT_DISK_MB, SANDBOXES

if TYPE_CHECKING:  # the commands import what they run inside their functions: podium --help loads none of it
    import json

    from podium.challenges.base import Challenge, ScoreSpec
    from podium.contest import Contest, Setup
    from podium.core.result import Result
    from podium.ranking.documents import Document
    from podium.ranking.ranks import Team
else:
    json = LazyModule("json")  # the documents of rank and report: podium evaluate printing its table writes none

SPLITS = (PUBLIC, PRIVATE)


def scoring_options(command: Callable[..., Any]) -> Callable[..., Any]:
    """Options shared by ``evaluate`` and ``validate``."""
    for option in reversed(
        [
            click.argument("challenge", required=False),
            click.option("--truth", type=click.Path(exists=True, path_type=Path), help="Ground-truth file or folder."),
            click.option(
                "--submission",
                required=True,
                type=click.Path(path_type=Path),
                help="Submission file or folder, or a .zip or .tar.gz of it.",
            ),
            CONTEST_OPTION,
            CONTEST_TRACK_OPTION,
            CONTEST_PHASE_OPTION,
            click.option(
                "--set", "settings", multiple=True, metavar="KEY=VALUE", help="Set a challenge parameter (repeatable)."
            ),
            click.option(
                "--json",
                "json_path",
                metavar="PATH|-",
                help="Write the result document to PATH (- = stdout, no table).",
            ),
            VIEW_OPTION,
            click.option(
                "--workers", type=click.IntRange(min=1), default=None, help="Worker processes [default: all cores]."
            ),
            SCHEDULER_OPTION,
            click.option("--quiet", is_flag=True, help="No progress bar, no table, no problem listing."),
        ]
    ):
        command = option(command)
    return command


@click.command("evaluate")
@scoring_options
@guarded
def evaluate_command(
    challenge: str | None,
    truth: Path | None,
    submission: Path,
    contest_path: Path | None,
    track: str | None,
    phase: str | None,
    settings: tuple[str, ...],
    json_path: str | None,
    view: str,
    workers: int | None,
    scheduler: str | None,
    quiet: bool,
) -> int:
    """Score a submission against the truth (CHALLENGE --truth ..., or --contest FILE)."""
    return _score(
        challenge,
        truth,
        submission,
        contest_path,
        (track, phase),
        settings,
        json_path,
        view,
        workers,
        scheduler,
        quiet,
        checks_only=False,
    )


@click.command("validate")
@scoring_options
@guarded
def validate_command(
    challenge: str | None,
    truth: Path | None,
    submission: Path,
    contest_path: Path | None,
    track: str | None,
    phase: str | None,
    settings: tuple[str, ...],
    json_path: str | None,
    view: str,
    workers: int | None,
    scheduler: str | None,
    quiet: bool,
) -> int:
    """Run only the checks of a submission (same document and exit codes)."""
    return _score(
        challenge,
        truth,
        submission,
        contest_path,
        (track, phase),
        settings,
        json_path,
        view,
        workers,
        scheduler,
        quiet,
        checks_only=True,
    )


def _setup(
    challenge: str | None,
    truth: Path | None,
    settings: tuple[str, ...],
    contest_path: Path | None,
    on: tuple[str | None, str | None],
    fixed: Mapping[str, object],
) -> Setup:
    """The challenge, truth and settings (of the contest's track and phase, ``on``); with a contest, options it fixes (``fixed``: option -> value given) are refused."""
    from podium.contest.setup import Setup
    from podium.core.parameters import parse_settings

    raw = parse_settings(settings)
    if contest_path is None:
        if challenge is None:
            raise UsageError("give the CHALLENGE (podium challenges lists them) or --contest FILE")
        if truth is None:
            raise UsageError("--truth is required (or --contest FILE, which names the truth)")
        for option, value in zip(("--track", "--phase"), on):
            if value is not None:
                raise UsageError(f"{option} names a {option[2:]} of the --contest FILE")
        return Setup(challenge, truth, raw, None)
    from podium.challenges import get
    from podium.contest.definition import load as load_contest

    contest = load_contest(contest_path).on(*on)
    if challenge is not None and challenge != contest.challenge:
        raise UsageError(f"the contest {contest.id} is a {contest.challenge} contest, not {challenge}")
    given = [option for option, value in {"--truth": truth, **fixed}.items() if value not in (None, ())]
    if given:
        raise UsageError(
            f"{', '.join(given)}: the contest file fixes {'it' if len(given) == 1 else 'them'}; leave {'it' if len(given) == 1 else 'them'} out with --contest"
        )
    measured = {p.name for p in get(contest.challenge).parameters if p.role == "measured"}
    fixed_keys = sorted(set(raw) - measured)
    if fixed_keys:
        allowed = f" (only measured ones may be set: {', '.join(sorted(measured))})" if measured else ""
        raise UsageError(f"--set {', '.join(fixed_keys)}: the contest file fixes the parameters{allowed}")
    return Setup(contest.challenge, contest.truth, {**contest.settings, **raw}, contest)


def _score(
    challenge_id: str | None,
    truth: Path | None,
    submission: Path,
    contest_path: Path | None,
    on: tuple[str | None, str | None],
    settings: tuple[str, ...],
    json_path: str | None,
    view: str,
    workers: int | None,
    scheduler: str | None,
    quiet: bool,
    checks_only: bool,
) -> int:
    from podium.core.startup import collector_paused

    with collector_paused():  # the engine's modules: long-lived objects only (frozen in the command)
        from podium.publish.progress import DelayedProgress
        from podium.scoring.engine import default_workers, evaluate

    setup = _setup(challenge_id, truth, settings, contest_path, on, {})
    progress = DelayedProgress("scoring" if not checks_only else "checking")
    progress.enabled = progress.enabled and not quiet
    try:
        result = evaluate(
            setup.challenge,
            setup.truth,
            submission,
            setup.settings,
            workers=workers or default_workers(),
            scheduler=scheduler,
            progress=progress,
            checks_only=checks_only,
            scores_only=json_path is None,  # the table shows the scores: no unit table, no per-unit details
            **setup.evaluation(),
        )
    finally:
        progress.close()
    _report(result, json_path, quiet, view, checks_only)
    return EXIT_REJECTED if result.status == REJECTED else EXIT_SCORED


def _report(result: Result, json_path: str | None, quiet: bool, view: str = "full", checks_only: bool = False) -> None:
    """The result document (``--json``), the table of scores and the problems; Rich draws only on a terminal
    and for problems (:mod:`podium.publish.score_table` draws the table, or the status line, for a pipe or a file)."""
    from podium.challenges import get
    from podium.publish.score_table import print_plain, print_plain_line, score_table

    public = view == PUBLIC
    if json_path == "-":
        click.echo(result.to_json(public))
    elif json_path:
        _write(Path(json_path), result.to_json(public) + "\n")
    if quiet:
        return
    warnings = result.warnings if public else result.warnings + result.score_warnings
    table = score_table(get(result.challenge), result, public) if json_path != "-" and result.scores else None
    status = "valid" if checks_only and result.status != REJECTED else result.status
    clean = not warnings and not result.errors and json_path != "-"  # nothing but the scores or the status to say
    if clean and (print_plain(table) if table is not None else print_plain_line(f"{result.challenge}: {status}")):
        return
    from podium.publish import display

    console = display.stderr if json_path == "-" else display.stdout
    if table is not None:
        console.print(display.rich_table(table))
    elif json_path != "-":
        console.print(f"{result.challenge}: [bold]{status}[/bold]")
    display.print_issues(console, "warning", warnings)
    display.print_issues(console, "error", result.errors)


@click.command("run")
@click.argument("challenge", required=False)
@click.option("--command", "command", metavar="CMD", help="The program, as a shell command line.")
@click.option(
    "--image",
    metavar="IMAGE",
    help="The program, as a Docker image on the engine (never pulled) or an archive of docker save (needs a Docker engine).",
)
@click.option(
    "--images", type=click.Path(exists=True, file_okay=False, path_type=Path), help="Folder of the test images."
)
@click.option("--truth", type=click.Path(exists=True, path_type=Path), help="Ground-truth file or folder.")
@CONTEST_OPTION
@CONTEST_TRACK_OPTION
@CONTEST_PHASE_OPTION
@click.option(
    "--time-limit",
    type=click.FloatRange(min=0, min_open=True),
    default=None,
    help="Seconds [default: the challenge's rule].",
)
@click.option(
    "--memory-limit",
    type=click.FloatRange(min=0, min_open=True),
    default=None,
    help="Peak memory in MB of the whole process tree.",
)
@click.option(
    "--disk-limit",
    type=click.FloatRange(min=0, min_open=True),
    default=None,
    help=f"MB the working folder may hold while the program runs [default: {DEFAULT_DISK_MB:g}].",
)
@click.option("--set", "settings", multiple=True, metavar="KEY=VALUE", help="Set a challenge parameter (repeatable).")
@click.option("--json", "json_path", metavar="PATH|-", help="Write the result document to PATH (- = stdout, no table).")
@VIEW_OPTION
@click.option(
    "--workdir",
    type=click.Path(file_okay=False, path_type=Path),
    default=None,
    help="Working directory to create [default: a new temporary one].",
)
@CGROUP_OPTION
@click.option(
    "--sandbox",
    type=click.Choice(SANDBOXES),
    default="auto",
    show_default=True,
    help="auto: bubblewrap for --command, Docker for --image; none runs the program with podium's own rights.",
)
@click.option(
    "--visible",
    multiple=True,
    type=click.Path(exists=True, path_type=Path),
    help="A folder the sandboxed program may read at its own path: its code, interpreter, models (repeatable).",
)
@click.option(
    "--cpus", type=click.FloatRange(min=0, min_open=True), default=None, help="CPU time in cores' worth (e.g. 4)."
)
@click.option("--gpus", metavar="all|device=N,...", default=None, help="NVIDIA GPUs the sandboxed program may use.")
@SCHEDULER_OPTION
@click.option("--quiet", is_flag=True, help="No table, no problem listing.")
@guarded
def run_command(
    challenge: str | None,
    command: str | None,
    image: str | None,
    images: Path | None,
    truth: Path | None,
    contest_path: Path | None,
    track: str | None,
    phase: str | None,
    time_limit: float | None,
    memory_limit: float | None,
    disk_limit: float | None,
    settings: tuple[str, ...],
    json_path: str | None,
    view: str,
    workdir: Path | None,
    cgroup: Path | None,
    sandbox: str,
    visible: tuple[Path, ...],
    cpus: float | None,
    gpus: str | None,
    scheduler: str | None,
    quiet: bool,
) -> int:
    """Run a participant's program in a sandbox under the contest's contract and limits, then score its output."""
    from podium.publish import display
    from podium.runner.process import Limits
    from podium.runner.sandbox import NO_SANDBOX_WARNING
    from podium.scoring.engine import default_workers
    from podium.scoring.run import RunRequest, run_program

    fixed = {
        "--images": images,
        "--time-limit": time_limit,
        "--memory-limit": memory_limit,
        "--disk-limit": disk_limit,
        "--cpus": cpus,
    }
    setup = _setup(challenge, truth, settings, contest_path, (track, phase), fixed)
    if setup.contest is not None:
        if not any(p.submissions == "programs" for p in setup.contest.phases):
            raise UsageError(
                f'the contest {setup.contest.id} takes files, not programs: no phase has submissions = "programs"'
            )
        limits = setup.contest.limits
        images, time_limit, memory_limit, cpus = setup.contest.images, limits.time_s, limits.memory_mb, limits.cpus
        disk_limit = limits.disk_mb
    if images is None:
        raise UsageError("--images is required (or --contest FILE, which names the images)")
    if sandbox == "none":
        display.stderr.print(f"[yellow]warning:[/yellow] {NO_SANDBOX_WARNING}", soft_wrap=True)
    result = run_program(
        RunRequest(
            setup.challenge,
            images,
            setup.truth,
            Limits(time_limit, memory_limit, DEFAULT_DISK_MB if disk_limit is None else disk_limit, cpus),
            command=command,
            image=image,
            settings=setup.settings,
            sandbox=sandbox,
            visible=visible,
            gpus=gpus,
            cgroup=cgroup,
            workdir=workdir,
            workers=default_workers(),
            scheduler=scheduler,
            **setup.evaluation(),
        )
    )
    _report(result, json_path, quiet, view)
    if not quiet and json_path != "-" and result.run:
        run = result.run
        display.stdout.print(
            f"run: {run['outcome']}, {run['wall_s']:.2f} s (limit {run['time_limit_s']}), peak {run['peak_memory_mb']:.1f} MB, "
            f"{'killed at the limit' if run['exit_code'] is None else 'exit code ' + str(run['exit_code'])}, "
            f"network {'isolated' if run['network_isolated'] else 'NOT isolated'}, sandbox {run['sandbox']}",
            soft_wrap=True,
        )
        if run["exit_code"] not in (0, None) and run["stderr_tail"]:
            display.stdout.print(
                "last lines of the program's stderr:\n" + display.escape(run["stderr_tail"]), soft_wrap=True
            )
    return EXIT_REJECTED if result.status == REJECTED else EXIT_SCORED


@click.command("rank")
@click.argument("challenge", required=False)
@click.argument("results", nargs=-1, type=click.Path(exists=True, dir_okay=False, path_type=Path))
@CONTEST_OPTION
@CONTEST_TRACK_OPTION
@CONTEST_PHASE_OPTION
@click.option("--name", "names", multiple=True, help="Team name of each result, in order [default: the file name].")
@click.option(
    "--by", metavar="SCORE", help="Rank by this score alone [default: the challenge's rule, or the contest's]."
)
@click.option(
    "--split",
    type=click.Choice(SPLITS),
    default=None,
    help="Rank by the scores of a contest split [default: the whole test set].",
)
@click.option(
    "--decimals",
    type=click.IntRange(min=0),
    default=None,
    help="Round scores to N decimals before ranking [default: the contest's].",
)
@click.option(
    "--allow-mixed",
    is_flag=True,
    help="Rank results whose challenge parameters, truth or split differ (they are not comparable).",
)
@click.option(
    "--bootstrap",
    "resamples",
    type=click.IntRange(min=100, max=100_000),
    default=None,
    metavar="N",
    help="Resample the test set's units N times: each team's 95% score and rank intervals and its share of firsts.",
)
@click.option("--seed", type=click.IntRange(min=0), default=0, show_default=True, help="The bootstrap's random seed.")
@click.option(
    "--json", "json_path", metavar="PATH|-", help="Write the leaderboard as JSON to PATH (- = stdout, no table)."
)
@guarded
def rank_command(
    challenge: str | None,
    results: tuple[Path, ...],
    contest_path: Path | None,
    track: str | None,
    phase: str | None,
    names: tuple[str, ...],
    by: str | None,
    split: str | None,
    decimals: int | None,
    allow_mixed: bool,
    resamples: int | None,
    seed: int,
    json_path: str | None,
) -> int:
    """Rank teams from their result documents (one per team): CHALLENGE RESULT..., or --contest FILE RESULT...

    Results whose signatures differ in challenge parameters, truth or split are refused unless --allow-mixed.
    """
    from podium.challenges import get
    from podium.contest import load as load_contest
    from podium.core.provenance import short as short_signature
    from podium.publish import display
    from podium.ranking.documents import differences, read_document
    from podium.ranking.ranks import Team, rank_teams, ranks_by_sum

    contest = None if contest_path is None else load_contest(contest_path).on(track, phase)
    if contest is not None:
        if challenge is not None and challenge not in IDS:  # the first argument is a result, not a challenge
            results, challenge = (Path(challenge), *results), None
        if challenge not in (None, contest.challenge):
            raise UsageError(f"the contest {contest.id} is a {contest.challenge} contest, not {challenge}")
        challenge = contest.challenge
        by = by or contest.ranking.by
        decimals = decimals if decimals is not None else contest.ranking.decimals
    if challenge is None:
        raise UsageError("give the CHALLENGE (or --contest FILE)")
    if not results:
        raise UsageError("give one or more RESULTS: result documents, one per team")
    spec = get(challenge)
    if by is not None:
        try:
            spec.score_spec(by)
        except KeyError:
            raise UsageError(
                f"--by {by}: not a score of {challenge} ({', '.join(s.name for s in spec.scores)})"
            ) from None
    if names and len(names) != len(results):
        raise PodiumError(f"--name was given {len(names)} times for {len(results)} results")
    team_names = list(names) or [p.stem for p in results]
    if len(set(team_names)) != len(team_names):
        raise PodiumError("two results have the same team name; use --name")
    documents = [read_document(path, challenge, split) for path in results]
    problems = differences(documents, split is not None, contest.id if contest is not None else None)
    if problems and not allow_mixed:
        raise PodiumError(
            "these results cannot be ranked together: " + "; ".join(problems) + " (--allow-mixed ranks them anyway)"
        )
    teams = [Team(name, d.status, d.scores) for name, d in zip(team_names, documents)]
    criteria = rank_teams(spec, teams, decimals, by)
    if resamples is not None:
        _bootstrap(
            spec, teams, dict(zip(team_names, documents)), criteria, ranks_by_sum(spec, by), resamples, seed, decimals
        )
    signatures = _distinct_signatures(documents, team_names, split is not None)
    board: dict[str, Any] = {
        "challenge": challenge,
        "split": split,
        "by": by,
        "decimals": decimals,
        "rank_sum": ranks_by_sum(spec, by),
        "criteria": [{"name": c.name, "higher_is_better": c.higher_is_better} for c in criteria],
        "mixed": problems,
        "signatures": signatures,
        "teams": [
            {
                "rank": t.rank,
                "name": t.name,
                "status": t.status,
                "rank_sum": t.rank_sum,
                "ranks": t.ranks,
                "scores": t.scores,
            }
            | ({} if resamples is None else {"confidence": None if t.confidence is None else t.confidence.to_dict()})
            for t in teams
        ],
    }
    if resamples is not None:
        board["bootstrap"] = {"resamples": resamples, "seed": seed, "level": 0.95, "score": criteria[0].name}
    if json_path == "-":
        click.echo(json.dumps(board, indent=2))
        return EXIT_SCORED
    if json_path:
        _write(Path(json_path), json.dumps(board, indent=2) + "\n")
    display.print_table(display.leaderboard(spec, teams, criteria, ranks_by_sum(spec, by), decimals))
    for problem in problems:
        display.stdout.print(f"[yellow]mixed:[/yellow] {display.escape(problem)}", soft_wrap=True)
    for entry in signatures:
        teams_of = "" if len(signatures) == 1 else f" ({', '.join(entry['teams'])})"
        display.stdout.print(
            f"signature{teams_of}: {display.escape(short_signature(entry['signature']))}", soft_wrap=True
        )
    return EXIT_SCORED


def _bootstrap(
    spec: Challenge,
    teams: list[Team],
    documents: dict[str, Document],
    criteria: list[ScoreSpec],
    rank_sum: bool,
    resamples: int,
    seed: int,
    decimals: int | None,
) -> None:
    """Fill in every scored team's confidence (:mod:`podium.ranking.bootstrap`)."""
    from podium.ranking.bootstrap import bootstrap, resamplable

    if not resamplable(spec):
        raise UsageError(
            f"--bootstrap: {spec.id}'s scores are not functions of sums over units, so they cannot be resampled this way"
        )
    for document in documents.values():
        if document.status == SCORED and document.units is None:
            raise PodiumError(f"--bootstrap: {document.path} has no unit statistics (it was made by an older podium)")
    tables = [documents[t.name].units for t in teams]
    for team, confidence in zip(
        teams, bootstrap(spec, criteria, rank_sum, tables, resamples, seed=seed, decimals=decimals)
    ):
        team.confidence = confidence


def _distinct_signatures(documents: list[Document], team_names: list[str], with_split: bool) -> list[dict[str, Any]]:
    """Each distinct comparable signature once, with its teams (one entry when the results are comparable)."""
    from podium.core.provenance import comparable_part

    entries: dict[str, dict[str, Any]] = {}
    for name, document in zip(team_names, documents):
        if document.signature is None:
            continue
        key = json.dumps(comparable_part(document.signature, with_split), sort_keys=True)
        entry = entries.setdefault(
            key,
            {
                "signature": {k: v for k, v in document.signature.items() if k not in ("submission", "created")},
                "teams": [],
            },
        )
        entry["teams"].append(name)
    return list(entries.values())


def _write(path: Path, text: str) -> None:
    try:
        path.write_text(text, encoding="utf-8")
    except OSError as exc:
        raise PodiumError(f"cannot write {path}: {exc.strerror or exc}") from None


@click.group("contest")
def contest_group() -> None:
    """Contest files (contest.toml)."""


@contest_group.command("check")
@click.argument("path", type=click.Path(exists=True, dir_okay=False, path_type=Path))
@click.option("--json", "as_json", is_flag=True, help="Print the summary as JSON.")
@guarded
def contest_check_command(path: Path, as_json: bool) -> int:
    """Check a contest file (every problem with its line) and summarize it: splits, phases in UTC and local time.

    Warns of what cannot work as written (an empty part in a split, a time limit below the rules' disqualification time)
    and of what a platform would refuse (phases that touch, for Codabench); the contest stays valid for podium serve.
    """
    from podium.contest import load as load_contest
    from podium.contest.advice import warnings
    from podium.publish import display
    from podium.publish.platforms.codabench_bundle import codabench_conflicts

    contest = load_contest(path)
    _try_kits(contest)
    summary = contest.summary() | {"warnings": warnings(contest) + codabench_conflicts(contest)}
    if as_json:
        click.echo(json.dumps(summary, indent=2))
    else:
        display.print_contest(display.stdout, summary)
        for warning in summary["warnings"]:
            display.stderr.print(f"[yellow]warning:[/yellow] {display.escape(warning)}", soft_wrap=True)
    return EXIT_SCORED


def _try_kits(contest: Contest) -> None:
    """Build each track's starting kit in a temporary folder and run its command: :class:`ContestError` if one does not score."""
    import tempfile

    from podium.publish.kit import build_kit, tried

    for track in contest.tracks or (contest,):
        if track.kit is not None:
            with tempfile.TemporaryDirectory(prefix="podium-kit-") as folder:
                kit = Path(folder) / "kit.zip"
                build_kit(track, kit)
                tried(kit, track)


@contest_group.command("reload")
@database_options
@guarded
def contest_reload_command(data: Path, database: str | None) -> int:
    """Read the folder podium serve --contests serves again, while it runs: files added or changed are served, removed ones withdrawn.

    Each file gets podium serve's checks; one that does not read is named with its line (exit code 1) and its contest
    is served as it last read. SIGHUP to podium serve does the same.
    """
    from podium.cli.service import open_database
    from podium.publish import display
    from podium.service.server import reload_folder

    served, problems, withdrawn = reload_folder(open_database(data, database))
    for problem in problems:
        display.stderr.print(f"[yellow]not served as changed:[/yellow] {display.escape(problem)}", soft_wrap=True)
    click.echo(f"serving {len(served)} contests: {', '.join(served) or 'none'}")
    if withdrawn:
        click.echo(f"withdrawn (their data kept): {', '.join(withdrawn)}")
    return EXIT_REJECTED if problems else EXIT_SCORED


@contest_group.command("schema")
def contest_schema_command() -> None:
    """Print the contest file's JSON Schema (draft 2020-12), for editors: a first line #:schema PATH in contest.toml points Taplo at it."""
    from podium.contest.model import json_schema

    click.echo(json_schema(), nl=False)


@click.command("report")
@click.argument("result", type=click.Path(exists=True, dir_okay=False, path_type=Path))
@click.option(
    "-o",
    "--output",
    type=click.Path(dir_okay=False, path_type=Path),
    default=None,
    help="The HTML file [default: RESULT with .html].",
)
@click.option(
    "--truth",
    type=click.Path(exists=True, path_type=Path),
    default=None,
    help="The truth it was scored against: the worst items are drawn.",
)
@click.option(
    "--submission",
    type=click.Path(exists=True, path_type=Path),
    default=None,
    help="The submission it scored (with --truth).",
)
@guarded
def report_command(result: Path, output: Path | None, truth: Path | None, submission: Path | None) -> int:
    """Write one self-contained HTML page (works offline) of a result document: scores, problems, charts, the worst items."""
    from jinja2 import TemplateError

    from podium.formats.archives import opened
    from podium.publish import display
    from podium.publish.report import render_report
    from podium.ranking.documents import load_document

    if (truth is None) != (submission is None):
        raise UsageError("give both --truth and --submission to draw the worst items, or neither")
    document = load_document(result)
    if document["challenge"] not in IDS or document["status"] not in (SCORED, REJECTED):
        raise PodiumError(
            f"{result} is not a result of a known challenge ({str(document['challenge'])[:80]!r}, status {str(document['status'])[:80]!r})"
        )
    try:
        with nullcontext(None) if submission is None else opened(submission) as scored:
            if scored is not None and scored.problem is not None:
                raise UsageError(f"--submission {submission}: {scored.problem}")
            html = render_report(document, result.name, truth, None if scored is None else scored.path)
    except (
        TypeError,
        KeyError,
        AttributeError,
        ValueError,
        TemplateError,
    ) as exc:  # TemplateError: a field the page shows is missing
        raise PodiumError(
            f"{result}: its details are not those podium writes ({type(exc).__name__}: {str(exc)[:200]})"
        ) from None
    target = output or result.with_suffix(".html")
    _write(target, html)
    display.stdout.print(
        f"report written to {display.escape(str(target))} ({len(html.encode()) // 1024} KiB)", soft_wrap=True
    )
    return EXIT_SCORED


@click.command("challenges")
@click.argument("challenge_id", metavar="[ID]", required=False)
@click.option(
    "--json", "as_json", is_flag=True, help="Print every challenge's (or ID's) scores and parameters as JSON."
)
@guarded
def challenges_command(challenge_id: str | None, as_json: bool) -> int:
    """List the challenges (id, primary score, title), or one challenge's scores and parameters.

    The listing is one line per challenge, cut to the terminal's width; podium challenges ID shows that
    challenge's scores with their direction and meaning, and its parameters with their defaults.
    """
    from podium.challenges.catalog import (
        Entry,
        entries,
        entry,
    )  # what the classes say, without importing them (or NumPy)

    def public(one: Entry) -> dict[str, Any]:
        return one | {"scores": [{k: v for k, v in spec.items() if k != "family"} for spec in one["scores"]]}

    if as_json:
        click.echo(
            json.dumps(
                public(entry(challenge_id)) if challenge_id is not None else [public(one) for one in entries()],
                indent=2,
            )
        )
    elif challenge_id is not None:
        from podium.publish import display

        display.print_challenge(display.stdout, entry(challenge_id))
    else:
        import shutil

        from podium.publish.listing import lines

        width = shutil.get_terminal_size().columns
        click.echo("\n".join(lines(entries(), width, click.get_current_context().command_path)))
    return EXIT_SCORED


@click.command("demo")
@click.option(
    "--folder",
    type=click.Path(file_okay=False, path_type=Path),
    default=Path("demo-data"),
    show_default=True,
    help="Where to write the demo data (kept, so that the commands shown can be run again).",
)
@click.option("--workers", type=click.IntRange(min=1), default=None, help="Worker processes [default: all cores].")
@guarded
def demo_command(folder: Path, workers: int | None) -> int:
    """Generate a small synthetic test set for every challenge and score a sample submission."""
    from podium.challenges import every
    from podium.publish import display
    from podium.scoring.engine import default_workers, evaluate

    for challenge in every():
        demo = challenge.write_demo(folder / challenge.id)
        settings = "".join(f" --set {k}={v}" for k, v in demo.settings.items())
        display.stdout.print(
            f"\n[bold]{challenge.id}[/bold]: {display.command_name()} evaluate {challenge.id} --truth {demo.truth} --submission {demo.submission}{settings}",
            soft_wrap=True,
        )
        result = evaluate(
            challenge.id, demo.truth, demo.submission, demo.settings, workers=workers or default_workers()
        )
        _report(result, None, quiet=False)
        if result.status == REJECTED:
            return EXIT_REJECTED
    return EXIT_SCORED


COMMANDS = (
    evaluate_command,
    validate_command,
    run_command,
    rank_command,
    contest_group,
    report_command,
    challenges_command,
    demo_command,
)
