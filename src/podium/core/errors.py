"""Exceptions that end a command, and the exit codes they map to.

Exit codes of every ``podium`` command:

====  =====================================================================
0     scored (or, for ``validate``, the submission passed every check)
1     submission rejected: the result document lists every problem found
2     usage, truth or configuration error (the organizer's side)
70    internal error: a bug in podium (``--debug`` shows the traceback)
====  =====================================================================
"""

from __future__ import annotations

from podium.core.issues import Issue

EXIT_SCORED = 0
EXIT_REJECTED = 1
EXIT_USAGE = 2
EXIT_INTERNAL = 70


ISSUES_SHOWN = 50


class PodiumError(Exception):
    """An error that is the caller's to fix; ``exit_code`` says how the CLI ends.

    ``issues`` keeps the first 50 problems and one line counting the rest.
    """

    exit_code = EXIT_USAGE

    def __init__(self, message: str, issues: list[Issue] | None = None) -> None:
        super().__init__(message)
        issues = issues or []
        more = len(issues) - ISSUES_SHOWN
        self.issues = (
            issues if more <= 0 else [*issues[:ISSUES_SHOWN], Issue("more_errors", f"{more:,} more errors not listed")]
        )


class ContractError(RuntimeError):
    """A challenge broke the contract of :mod:`podium.challenges.base`: a bug in the challenge (exit 70), not in the input."""


class UsageError(PodiumError):
    """A wrong command line or parameter value."""


class TruthError(PodiumError):
    """The ground truth (the organizer's files) is missing or malformed."""
