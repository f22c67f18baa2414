"""What ``podium challenges`` shows of each challenge, read without importing the challenge modules (nor NumPy).

``catalog.json`` holds, for every challenge of the registry in its order, the id, title, rules,
primary score, scores and parameters, as :func:`describe` writes them from the real challenge
class. ``python tools/challenge_catalog.py`` writes it again after a challenge changes, and
``tests/test_startup.py`` checks that it equals what the classes say, so the two cannot drift.
"""

from __future__ import annotations

import json
from functools import cache
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypedDict

from podium.challenges import IDS, known

if TYPE_CHECKING:
    from podium.challenges.base import Challenge

FILE = "catalog.json"


class ScoreEntry(TypedDict):
    name: str
    higher_is_better: bool | None
    help: str
    family: bool  # reported only as name/<class>


class ParameterEntry(TypedDict):
    name: str
    default: Any  # JSON: a tuple default is a list
    allowed: str
    role: str
    help: str


class Entry(TypedDict):
    id: str
    title: str
    rules: str
    primary: str
    scores: list[ScoreEntry]
    parameters: list[ParameterEntry]


def describe(challenge: Challenge[Any, Any, Any]) -> Entry:
    """A challenge's catalog entry, from its class."""
    return {
        "id": challenge.id,
        "title": challenge.title,
        "rules": challenge.rules,
        "primary": challenge.primary,
        "scores": [
            {"name": s.name, "higher_is_better": s.higher_is_better, "help": s.help, "family": s.family}
            for s in challenge.scores
        ],
        "parameters": [
            {"name": p.name, "default": p.default, "allowed": p.allowed, "role": p.role, "help": p.help}
            for p in challenge.parameters
        ],
    }


@cache
def entries() -> tuple[Entry, ...]:
    """Every challenge's entry, in the registry's order, from ``catalog.json``."""
    loaded: list[Entry] = json.loads(Path(__file__).with_name(FILE).read_text(encoding="utf-8"))
    return tuple(loaded)


def entry(challenge_id: str) -> Entry:
    """One challenge's entry; an unknown id is a usage error that lists every id."""
    return entries()[IDS.index(known(challenge_id))]
