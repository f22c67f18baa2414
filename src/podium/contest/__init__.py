"""Contests: one definition file (``contest.toml``) that fixes the challenge, truth, parameters, split, phases and rules."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from podium.contest.definition import Contest, ContestError, load
    from podium.contest.setup import Setup

__all__ = ["Contest", "ContestError", "Setup", "load"]
_HOME = {"Contest": "definition", "ContestError": "definition", "load": "definition", "Setup": "setup"}


def __getattr__(name: str) -> Any:
    """The names above, each imported from its module on first use: a scoring command without a
    contest file does not load the contest reader (tomllib, zoneinfo, the split: 0.05 s of CPU)."""
    if name not in _HOME:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    import importlib

    return getattr(importlib.import_module(f"{__name__}.{_HOME[name]}"), name)
