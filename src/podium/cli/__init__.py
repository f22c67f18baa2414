"""The ``podium`` command, assembled: the group and shared options of :mod:`~podium.cli.commandline`, and
the commands defined where their family lives (:mod:`~podium.cli.scoring`, :mod:`~podium.cli.service`,
:mod:`~podium.cli.platforms`). ``__main__.py`` and the console script run :func:`main`."""

from __future__ import annotations

from podium.cli import platforms, scoring, service
from podium.cli.commandline import cli

for _family in (scoring, service, platforms):
    for _command in _family.COMMANDS:
        cli.add_command(_command)

__all__ = ["cli", "main"]


def main() -> None:
    """The ``podium`` console script."""
    cli(prog_name="podium")
