"""The ``podium`` command's frame: the group, the exit codes every command keeps, and the options several commands share.

Exit codes (every command): 0 scored / valid, 1 submission rejected, 2 usage,
truth or configuration error, 70 internal error (``--debug`` for the traceback).

The ``cli`` modules import only click and light constants at the top; a command's heavy imports
(NumPy, the contest reader, the service) are inside its function, so that ``podium --help``,
``podium challenges`` and ``podium --version`` start in a few times a bare interpreter's time
(``benchmarks/startup.py``; ``tests/test_startup.py`` keeps it so).
"""

from __future__ import annotations

import functools
import importlib
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import click
from click.utils import make_default_short_help

from podium._version import __version__
from podium.core.errors import EXIT_INTERNAL, EXIT_USAGE, PodiumError
from podium.core.labels import PUBLIC
from podium.runner.choices import SANDBOXES

VIEWS = ("full", PUBLIC)


LISTED = {  # every command: where it is defined, and its help's first paragraph as podium --help lists it (tests/test_startup.py checks both)
    "account": (
        "podium.cli.service:account_command",
        "Your account (with a token from logging in): your address, your notifications, your team's invitation code.",
    ),
    "announce": (
        "podium.cli.organizer:announce_command",
        "Post an announcement (Markdown) on the contest page, mailed to users who keep news on; or remove one.",
    ),
    "archive": (
        "podium.cli.organizer:archive_command",
        "Write every submission's files, or every result document, of a contest to the zip archive OUT.",
    ),
    "backup": (
        "podium.cli.service:backup_command",
        "Write the contest (database, stored submissions, results) to the archive OUT, while it is served.",
    ),
    "bundle": ("podium.cli.platforms:bundle", "Write what a platform needs to host a contest (contest.toml)."),
    "cancel": ("podium.cli.service:cancel_command", "Cancel one of your queued submissions (it uses no quota)."),
    "challenges": (
        "podium.cli.scoring:challenges_command",
        "List the challenges (id, primary score, title), or one challenge's scores and parameters.",
    ),
    "codabench": (
        "podium.cli.platforms:codabench_command",
        "Codabench scoring program: input/ref and input/res to scores.json and detailed_results.html.",
    ),
    "contest": ("podium.cli.scoring:contest_group", "Contest files (contest.toml)."),
    "dashboard": (
        "podium.cli.organizer:dashboard_command",
        "The organizers' dashboard: submissions per day, active teams, the queue, the workers, failures by cause.",
    ),
    "demo": (
        "podium.cli.scoring:demo_command",
        "Generate a small synthetic test set for every challenge and score a sample submission.",
    ),
    "describe": (
        "podium.cli.service:describe_command",
        "Describe the method of one of your submissions (until its phase ends): what you give replaces what was said.",
    ),
    "download": (
        "podium.cli.service:download_command",
        "Download one of your submissions: the file as uploaded, its result document, or its program's logs.",
    ),
    "evaluate": (
        "podium.cli.scoring:evaluate_command",
        "Score a submission against the truth (CHALLENGE --truth ..., or --contest FILE).",
    ),
    "grand-challenge": (
        "podium.cli.platforms:grand_challenge_command",
        "Grand Challenge evaluation: /input to /output/metrics.json (case and aggregates).",
    ),
    "kit": (
        "podium.cli.platforms:kit_group",
        "Starting kits: sample items with their truth, a baseline, and the command that scores it as the server does.",
    ),
    "leaderboard": (
        "podium.cli.service:leaderboard_command",
        "A track's leaderboard, the contest's only one by default (public scores until the reveal).",
    ),
    "migrate": (
        "podium.cli.service:migrate_command",
        "Bring the database to this podium's schema (podium serve does it on start); print the revisions.",
    ),
    "organizer": (
        "podium.cli.service:organizer_group",
        "Organizers of a contest: users who see every submission and full results of it.",
    ),
    "rank": (
        "podium.cli.scoring:rank_command",
        "Rank teams from their result documents (one per team): CHALLENGE RESULT..., or --contest FILE RESULT...",
    ),
    "report": (
        "podium.cli.scoring:report_command",
        "Write one self-contained HTML page (works offline) of a result document: scores, problems, charts, the worst items.",
    ),
    "rescore": (
        "podium.cli.service:rescore_command",
        "Score every accepted submission of a contest again in a new round; the board is rebuilt, earlier results are kept.",
    ),
    "rerun": (
        "podium.cli.organizer:rerun_command",
        "Score one submission again, in a round of its own: earlier results are kept, the board takes the new one, the team is told.",
    ),
    "restore": (
        "podium.cli.service:restore_command",
        "Restore a backup into an empty --data folder (and an empty --database), then bring it to this podium's schema.",
    ),
    "reveal": (
        "podium.cli.service:reveal_command",
        "Reveal the private split now: the leaderboard shows the final ranking, and teams their full results.",
    ),
    "run": (
        "podium.cli.scoring:run_command",
        "Run a participant's program in a sandbox under the contest's contract and limits, then score its output.",
    ),
    "serve": (
        "podium.cli.service:serve_command",
        "Serve a contest (or a folder of contests): the web API, the leaderboard and N scoring workers.",
    ),
    "select": (
        "podium.cli.service:select_command",
        'Select one of your scored submissions for the final ranking (final = "selected"), or unselect it.',
    ),
    "status": ("podium.cli.service:status_command", "Your team's submissions (or one, with its problems and result)."),
    "submit": (
        "podium.cli.service:submit_command",
        "Upload a submission (a file, or a folder sent as tar.gz) to a track; print its status and every problem.",
    ),
    "team": (
        "podium.cli.service:team_group",
        "Teams of a contest: add, list, rename, remove, their members; bans and approvals; their tokens and invitation codes; a user's own: create, join, leave.",
    ),
    "token": ("podium.cli.service:token_group", "API tokens and web sessions: list them, revoke one."),
    "user": (
        "podium.cli.service:user_group",
        "Users of the server, who log in with a password: members of teams, organizers, the administrator.",
    ),
    "validate": (
        "podium.cli.scoring:validate_command",
        "Run only the checks of a submission (same document and exit codes).",
    ),
    "worker": (
        "podium.cli.service:worker_command",
        "Score queued submissions until stopped (SIGTERM ends after the current job); run on any machine that sees --data.",
    ),
}


class Listed(click.Group):
    """The ``podium`` group: a command's module is imported when the command is run, completed or asked for its help;
    ``podium --help`` lists the commands from :data:`LISTED`, so that it imports none of them (nor their options' modules)."""

    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted({*self.commands, *LISTED})

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        if cmd_name not in self.commands and cmd_name in LISTED:
            module, attribute = LISTED[cmd_name][0].split(":")
            self.add_command(getattr(importlib.import_module(module), attribute), cmd_name)
        return self.commands.get(cmd_name)

    def format_commands(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        """As click's, with the help of a command not imported yet read from :data:`LISTED`."""
        names = self.list_commands(ctx)
        limit = formatter.width - 6 - max(len(name) for name in names)
        rows = [
            (
                name,
                self.commands[name].get_short_help_str(limit)
                if name in self.commands
                else make_default_short_help(LISTED[name][1], limit),
            )
            for name in names
        ]
        with formatter.section("Commands"):
            formatter.write_dl(rows)


@click.group(cls=Listed, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="podium")
@click.option("--debug", is_flag=True, help="Show the traceback of an internal error.")
@click.pass_context
def cli(ctx: click.Context, debug: bool) -> None:
    """podium: validate, score and rank computer-vision challenge submissions."""
    ctx.obj = {"debug": debug}


EXTRAS = {  # the packages of podium's optional parts, by the extra that installs them (pyproject.toml)
    **dict.fromkeys(
        ("fastapi", "starlette", "uvicorn", "sqlalchemy", "alembic", "psycopg", "prometheus_client"), "service"
    ),
    **dict.fromkeys(("dask", "distributed"), "distributed"),
}


def _missing_extra(exc: Exception) -> str | None:
    """What to install, when ``exc`` is the import of an optional part's package that is not installed."""
    if not isinstance(exc, ModuleNotFoundError) or exc.name is None or exc.name.split(".")[0] not in EXTRAS:
        return None
    extra = EXTRAS[exc.name.split(".")[0]]
    return f"this command needs podium's {extra} packages ({exc.name} is not installed): pip install 'podium[{extra}]'"


def guarded(command: Callable[..., int]) -> Callable[..., None]:
    """Map a command's outcome to podium's exit codes; never show a raw traceback."""

    @functools.wraps(command)
    def wrapper(*args: Any, **kwargs: Any) -> None:
        from podium.accel.allocator import keep_large_blocks  # ctypes: loaded by a command that runs, not by --help

        keep_large_blocks()
        debug = click.get_current_context().find_root().obj.get("debug", False)
        try:
            code = command(*args, **kwargs)
        except PodiumError as exc:
            from podium.publish import display  # Rich, imported once there is something to say

            display.stderr.print(f"[red]podium:[/red] {display.escape(str(exc))}", soft_wrap=True)
            display.print_issues(display.stderr, "error", exc.issues)
            code = exc.exit_code
        except KeyboardInterrupt:
            click.echo("podium: interrupted", err=True)
            code = 130
        except click.exceptions.Abort:  # a prompt that got no answer (standard input closed)
            click.echo(
                "podium: the prompt got no answer (standard input is closed); "
                "give the value by an option (a password: --password-stdin)",
                err=True,
            )
            code = EXIT_USAGE
        except Exception as exc:  # a bug in podium: one line, unless --debug
            from podium.publish import display

            missing = _missing_extra(exc)
            if missing is not None:  # an optional part that is not installed
                display.stderr.print(f"[red]podium:[/red] {display.escape(missing)}", soft_wrap=True)
                sys.exit(EXIT_USAGE)
            if debug:
                import traceback

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


CONTEST_OPTION = click.option(
    "--contest",
    "contest_path",
    type=click.Path(exists=True, dir_okay=False, path_type=Path),
    help="A contest file: the challenge, truth, parameters and split come from it.",
)
SCHEDULER_OPTION = click.option(
    "--scheduler",
    metavar="tcp://HOST:PORT",
    default=None,
    help="Score the items on the Dask cluster of this scheduler instead of local processes (needs podium[distributed]).",
)
SANDBOX_OPTION = click.option(  # serve and worker; podium run's own says what auto picks for a command or an image
    "--sandbox",
    type=click.Choice(SANDBOXES),
    default="auto",
    show_default=True,
    help="How programs are run (podium run --sandbox).",
)
CGROUP_OPTION = click.option(
    "--cgroup",
    type=click.Path(exists=True, file_okay=False, path_type=Path),
    envvar="PODIUM_CGROUP",
    help="A cgroup v2 directory delegated to podium, for the limits and peak memory of program runs [env PODIUM_CGROUP].",
)
VIEW_OPTION = click.option(
    "--view",
    type=click.Choice(VIEWS),
    default="full",
    show_default=True,
    help="public: the document and table leave out every number of the private split and of the whole test set.",
)
CONTEST_TRACK_OPTION = click.option(
    "--track", help="With --contest: the track (a [[track]]'s id) [default: the contest's only track]."
)
CONTEST_PHASE_OPTION = click.option(
    "--phase",
    help="With --contest: the phase whose truth, split and parameters score [default: the data every phase shares].",
)

DEFAULT_DATA = Path("podium-data")


def database_options(command: Any) -> Any:
    """``--data`` and ``--database``: the commands that open the service's database."""
    for option in reversed(
        [
            click.option(
                "--data",
                type=click.Path(file_okay=False, path_type=Path),
                default=DEFAULT_DATA,
                show_default=True,
                help="The service's folder: uploads, results (and the SQLite database without --database).",
            ),
            click.option(
                "--database",
                metavar="URL",
                envvar="PODIUM_DATABASE",
                default=None,
                help="postgresql://USER@HOST:PORT/NAME [default: SQLite in --data] [env PODIUM_DATABASE].",
            ),
        ]
    ):
        command = option(command)
    return command
