"""Contests: one definition file (``contest.toml``) that fixes the challenge, truth, parameters, split, phases and rules."""

from podium.contest.definition import Contest, ContestError, load

__all__ = ["Contest", "ContestError", "load"]
