"""Which units of the test set are public: a fraction drawn with a seed, or a list.

The draw does not depend on the order of the units, on the platform or on any
library's random generator: units are ordered by ``SHA-256("<seed>:<unit>")``
and the first ``round(public × N)`` (halves up, computed exactly from the
decimal ``public``) are public. Adding units to a test set moves no unit
between the splits except as the new ones push the cut. The rest is private.
"""

from __future__ import annotations

import hashlib
import math
from dataclasses import dataclass
from fractions import Fraction
from pathlib import Path
from typing import Any

from podium.core.issues import IssueLog
from podium.core.provenance import of_names
from podium.core.result import PRIVATE, PUBLIC
from podium.formats.files import FileProblem
from podium.formats.text import TRUSTED, read_text


def public_count(fraction: float, units: int) -> int:
    """``round(fraction × units)``, halves up, exactly.

    >>> public_count(0.3, 10), public_count(0.25, 10), public_count(0.5, 3)
    (3, 3, 2)
    """
    return math.floor(Fraction(repr(fraction)) * units + Fraction(1, 2))


def draw_public(units: list[str], fraction: float, seed: int) -> set[str]:
    """The public units of a fraction drawn with ``seed`` (see the module docstring)."""
    ordered = sorted(
        units, key=lambda unit: hashlib.sha256(f"{seed}:{unit}".encode("utf-8", "surrogateescape")).digest()
    )
    return set(ordered[: public_count(fraction, len(units))])


def read_public_list(path: Path, units: list[str], log: IssueLog) -> set[str]:
    """The units named in ``path``, one per line (blank lines and ``#`` comments skipped); problems logged with their lines."""
    try:
        text = read_text(path, TRUSTED)
    except FileProblem as exc:
        log.error("public_list", str(exc), path, exc.line)
        return set()
    known = set(units)
    first: dict[str, int] = {}
    for number, line in enumerate(text.splitlines(), start=1):
        name = line.strip()
        if not name or name.startswith("#"):
            continue
        if name not in known:
            log.error(
                "public_list",
                f"{name[:80]!r} is not a unit of the test set (units are {_example(units)})",
                path,
                number,
            )
        elif name in first:
            log.error("public_list", f"repeats {name[:80]!r} of line {first[name]}", path, number)
        else:
            first[name] = number
    return set(first)


def _example(units: list[str]) -> str:
    return ", ".join(units[:3]) + (", ..." if len(units) > 3 else "")


@dataclass(frozen=True)
class SplitPlan:
    """The split of a contest: the rule as written, and the split of every unit."""

    rule: dict[str, Any]  # {"public": 0.3, "seed": 7} or {"public_list": "public.txt"}
    split_of: dict[str, str]

    @classmethod
    def of(cls, rule: dict[str, Any], units: list[str], public: set[str]) -> SplitPlan:
        return cls(rule, {unit: PUBLIC if unit in public else PRIVATE for unit in units})

    def count(self, split: str) -> int:
        return sum(1 for s in self.split_of.values() if s == split)

    def stamp(self) -> dict[str, Any]:
        """The split in a result's signature: the rule, the sizes and a fingerprint of the public units."""
        public = [unit for unit, split in self.split_of.items() if split == PUBLIC]
        return {
            **self.rule,
            "fingerprint": of_names(public),
            "public_units": self.count(PUBLIC),
            "private_units": self.count(PRIVATE),
        }
