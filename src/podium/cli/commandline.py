"""The ``podium`` command's frame: the group, the exit codes every command keeps, and the options several commands share.

Exit codes (every command): 0 scored / valid, 1 submission rejected, 2 usage,
truth or configuration error, 70 internal error (``--debug`` for the traceback).
"""

from __future__ import annotations

import functools
import sys
import traceback
from collections.abc import Callable
from pathlib import Path
from typing import Any

import click

from podium._version import __version__
from podium.core.errors import EXIT_INTERNAL, EXIT_USAGE, PodiumError
from podium.core.result import PUBLIC
from podium.publish import display

VIEWS = ("full", PUBLIC)


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="podium")
@click.option("--debug", is_flag=True, help="Show the traceback of an internal error.")
@click.pass_context
def cli(ctx: click.Context, debug: bool) -> None:
    """podium: validate, score and rank computer-vision challenge submissions."""
    ctx.obj = {"debug": debug}


EXTRAS = {  # the packages of podium's optional parts, by the extra that installs them (pyproject.toml)
    **dict.fromkeys(("fastapi", "starlette", "uvicorn", "sqlalchemy", "alembic", "psycopg", "prometheus_client"), "service"),
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
            missing = _missing_extra(exc)
            if missing is not None:  # an optional part that is not installed
                display.stderr.print(f"[red]podium:[/red] {display.escape(missing)}", soft_wrap=True)
                sys.exit(EXIT_USAGE)
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


CONTEST_OPTION = click.option(
    "--contest", "contest_path", type=click.Path(exists=True, dir_okay=False, path_type=Path),
    help="A contest file: the challenge, truth, parameters and split come from it.",
)  # fmt: skip
VIEW_OPTION = click.option(
    "--view", type=click.Choice(VIEWS), default="full", show_default=True,
    help="public: the document and table leave out every number of the private split and of the whole test set.",
)  # fmt: skip
CONTEST_TRACK_OPTION = click.option("--track", help="With --contest: the track (a [[track]]'s id) [default: the contest's only track].")
