"""A platform's submission scored, and what the platform keeps of the result: the split it shows, its scores as plain numbers, its cases, its problems as log lines.

Platforms store scores in numeric columns (Codabench: a NOT NULL decimal with
ten integer digits), so an undefined score (``null`` in podium's document,
e.g. a final face-clustering score without a measured time) cannot be stored
as it is. It becomes :data:`SENTINEL` on the losing side, ``-1e9`` where
higher is better and ``+1e9`` where lower is better, so that it ranks last, as
podium ranks a missing score; a descriptive count (neither better nor worse)
is left out. Every replacement is said in the log.

With a contest split, what a platform shows is one split: the public one
(:meth:`~podium.result.Result.public_view`, nothing of the private units), or
the private one for a final phase. Without a split it is the whole test set.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from podium.archives import inside
from podium.challenges import get
from podium.contest import Setup
from podium.engine import evaluate
from podium.errors import UsageError
from podium.issues import Issue
from podium.result import PRIVATE, PUBLIC, Result

SENTINEL = 1_000_000_000
PER_ITEM = ("per_image", "per_photo")  # details that hold one mapping of numbers per item
Number = int | float


@dataclass(frozen=True)
class Shown:
    """The part of a result a platform shows: the document it may show, and that part's scores, details and units."""

    split: str | None  # None: the whole test set (no contest split)
    document: dict[str, Any]
    scores: dict[str, Any]
    details: dict[str, Any]

    def unit_rows(self) -> dict[str, dict[str, Any]]:
        """Each unit's additive statistics by column name, for the shown split's units only."""
        units = self.document.get("units") or {}
        split_of = units.get("split") or {}
        columns = units.get("columns", [])
        return {
            unit: dict(zip(columns, row))
            for unit, row in units.get("rows", {}).items()
            if self.split is None or split_of.get(unit, self.split) == self.split
        }


def shown(result: Result, split: str) -> Shown:
    """The ``split`` (public or private) of a contest's result, or the whole of a result without splits."""
    if split not in (PUBLIC, PRIVATE):
        raise UsageError(f"split {split!r}: public or private")
    if result.splits is None:
        document = result.to_dict()
        return Shown(None, document, document["scores"], document["details"])
    document = result.public_view() if split == PUBLIC else result.to_dict()
    part = document.get("splits", {}).get(split, {"scores": {}, "details": {}})
    return Shown(split, document, part["scores"], part["details"])


def numbers_only(challenge_id: str, scores: Mapping[str, Any], keys: Sequence[str] | None = None) -> tuple[dict[str, Number], list[str]]:
    """``scores`` (or just ``keys``, in that order) as numbers, with a note for each undefined one (see the module docstring).

    >>> numbers_only("glas", {"f1": 0.5, "object_hausdorff": None})
    ({'f1': 0.5, 'object_hausdorff': 1000000000}, ['object_hausdorff is undefined (null): written as 1000000000, which ranks last'])
    >>> numbers_only("face-clustering", {"clusters": None, "final": None})
    ({'final': -1000000000}, ['clusters is undefined (null): left out', 'final is undefined (null): written as -1000000000, which ranks last'])
    """
    challenge = get(challenge_id)
    numbers: dict[str, Number] = {}
    notes: list[str] = []
    for name in keys if keys is not None else list(scores):
        value = scores.get(name)
        if isinstance(value, (int, float)) and not isinstance(value, bool):
            numbers[name] = value
            continue
        spec = challenge.score_spec(name)
        better = None if spec.family else spec.higher_is_better  # a class's null AP says the class has no positive
        if better is None:
            notes.append(f"{name} is undefined (null): left out")
        else:
            numbers[name] = -SENTINEL if better else SENTINEL
            notes.append(f"{name} is undefined (null): written as {numbers[name]}, which ranks last")
    return numbers, notes


def check_keys(challenge_id: str, keys: Sequence[str]) -> None:
    """Refuse leaderboard keys that name no score of the challenge."""
    challenge = get(challenge_id)
    unknown = []
    for key in keys:
        try:
            challenge.score_spec(key)
        except KeyError:
            unknown.append(key)
    if unknown:
        names = ", ".join(s.name for s in challenge.scores)
        raise UsageError(f"--keys {', '.join(unknown)}: not scores of {challenge_id} (scores: {names}, and NAME/CLASS variants)")


def cases(part: Shown) -> dict[str, dict[str, Any]]:
    """One mapping of numbers per item: the per-image (per-photo) details, else each unit's statistics, else none.

    Face-clustering and ILSVRC fine-grained scores are not sums over items (a
    partition, an AP per class): they have no cases.
    """
    for key in PER_ITEM:
        per_item = part.details.get(key)
        if isinstance(per_item, dict):
            return {name: _plain(values) for name, values in per_item.items() if isinstance(values, dict)}
    return {unit: _plain(row) for unit, row in part.unit_rows().items()}


def _plain(values: Mapping[str, Any]) -> dict[str, Any]:
    """The numbers (and nulls) of a mapping; nested values left out."""
    return {k: v for k, v in values.items() if v is None or (isinstance(v, (int, float)) and not isinstance(v, bool))}


def score_folder(setup: Setup, folder: Path, unpacked_by: str, workers: int, echo: Callable[[str], None]) -> Result:
    """Score the submission a platform unpacked in ``folder`` (its one top folder looked through) and log its problems."""
    if not folder.is_dir():
        raise UsageError(f"no submission folder {folder} ({unpacked_by})")
    submission = inside(folder)
    result = evaluate(setup.challenge, setup.truth, submission, setup.settings, workers=workers, **setup.evaluation())
    for line in log_lines(result, submission):
        echo(line)
    return result


def log_lines(result: Result, submission: Path) -> list[str]:
    """The outcome and every problem, one per line, files named inside the submission, for the platform's log."""
    lines = [f"podium {result.challenge}: {result.status}"]
    for kind, issues in (("error", result.errors), ("warning", result.warnings + result.score_warnings)):
        lines += [f"{kind} {_inside(issue, submission)}" for issue in issues]
    return lines


def _inside(issue: Issue, submission: Path) -> str:
    prefix = str(submission).rstrip("/") + "/"
    name = issue.file[len(prefix):] if issue.file and issue.file.startswith(prefix) else issue.file
    return str(Issue(issue.code, issue.message, name, issue.line))
