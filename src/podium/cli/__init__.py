"""The ``podium`` command, assembled: the group and shared options of :mod:`~podium.cli.commandline`, and
the commands defined where their family lives (:mod:`~podium.cli.scoring`, :mod:`~podium.cli.service`,
:mod:`~podium.cli.platforms`, :mod:`~podium.cli.organizer`), each family's module imported when one of its commands runs (the group's
:data:`~podium.cli.commandline.LISTED`). ``__main__.py`` and the console script run :func:`main`."""

from __future__ import annotations

from podium.cli.commandline import cli

__all__ = ["cli", "main"]


def main() -> None:
    """The ``podium`` console script."""
    cli(prog_name="podium")
