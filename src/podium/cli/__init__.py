"""The ``podium`` command, assembled: the group and shared options of :mod:`~podium.cli.commandline`, and
the commands defined where their family lives (:mod:`~podium.cli.scoring`, :mod:`~podium.cli.service`,
:mod:`~podium.cli.platforms`, :mod:`~podium.cli.organizer`), each family's module imported when one of its commands runs (the group's
:data:`~podium.cli.commandline.LISTED`). ``__main__.py`` and the console script run :func:`main`, which imports
the group with the garbage collector paused (:mod:`podium.core.startup`); ``cli`` is imported when first named."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from podium.core.startup import collector_paused, command_started

if TYPE_CHECKING:
    from podium.cli.commandline import cli

__all__ = ["cli", "main"]


def main() -> None:
    """The ``podium`` console script."""
    command_started()
    with collector_paused():  # click and the command's frame: long-lived objects only
        from podium.cli.commandline import cli
    cli(prog_name="podium")


def __getattr__(name: str) -> Any:
    if name == "cli":
        from podium.cli.commandline import cli

        return cli
    raise AttributeError(f"module 'podium.cli' has no attribute {name!r}")
