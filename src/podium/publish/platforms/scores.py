"""A platform's submission scored, and what the platform keeps of the result: the split it shows, its scores as plain numbers, its cases, its problems as log lines.

Platforms store scores in numeric columns (Codabench: a NOT NULL decimal with
ten integer digits), so an undefined score (``null`` in podium's document,
e.g. a final face-clustering score without a measured time) cannot be stored
as it is. It becomes :data:`SENTINEL` on the losing side, ``-1e9`` where
higher is better and ``+1e9`` where lower is better, so that it ranks last, as
podium ranks a missing score; a descriptive count (neither better nor worse)
is left out, and so is a score that needs a measured time and memory
(face-clustering's ``final``), which a platform of files never defines. Every replacement is said in the log.

With a contest split, what a platform shows is one split: the public one
(:meth:`~podium.core.result.Result.public_view`, nothing of the private units), or
the private one for a final phase (its numbers in the document's ``scores``
and ``details``, so that the detailed report shows what the leaderboard row
holds, not the whole test set's). Without a split it is the whole test set.
"""

from __future__ import annotations

import os
import shutil
import stat
import tempfile
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from podium.challenges import get
from podium.contest import Setup
from podium.core.errors import UsageError
from podium.core.issues import Issue
from podium.core.result import PRIVATE, PUBLIC, Result
from podium.formats.archives import inside
from podium.scoring.engine import evaluate

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
    if split == PUBLIC:
        document = result.public_view()
        part = document.get("splits", {}).get(split, {"scores": {}, "details": {}})
        return Shown(split, document, part["scores"], part["details"])
    document = (
        result.to_dict()
    )  # a final phase's: the private split's numbers in place of the whole test set's, as its leaderboard row
    splits = document.get("splits", {})
    part = splits.get(PRIVATE, {"scores": {}, "details": {}})
    document.update(scores=part["scores"], details=part["details"], splits={PRIVATE: part} if PRIVATE in splits else {})
    if result.units is not None:
        document["units"] = result.units.to_dict(only=PRIVATE)
    return Shown(split, document, part["scores"], part["details"])


def numbers_only(
    challenge_id: str, scores: Mapping[str, Any], keys: Sequence[str] | None = None
) -> tuple[dict[str, Number], list[str]]:
    """``scores`` (or just ``keys``, in that order) as numbers, with a note for each undefined one (see the module docstring).

    >>> numbers_only("glas", {"f1": 0.5, "object_hausdorff": None})
    ({'f1': 0.5, 'object_hausdorff': 1000000000}, ['object_hausdorff is undefined (null): written as 1000000000, which ranks last'])
    >>> numbers_only("face-clustering", {"clusters": None, "final": None, "nmi": None})
    ({'nmi': -1000000000}, ['clusters is undefined (null): left out', 'final is undefined without a measured time and memory: left out', 'nmi is undefined (null): written as -1000000000, which ranks last'])
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
        if spec.measured:
            notes.append(f"{name} is undefined without a measured time and memory: left out")
        elif better is None:
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
        raise UsageError(
            f"--keys {', '.join(unknown)}: not scores of {challenge_id} (scores: {names}, and NAME/CLASS variants)"
        )


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


def score_folder(
    setup: Setup,
    folder: Path,
    unpacked_by: str,
    workers: int,
    echo: Callable[[str], None],
    platform_files: frozenset[str] = frozenset(),
) -> Result:
    """Score the submission a platform unpacked in ``folder`` and log its problems.

    ``platform_files`` are the names of the files the platform itself puts
    beside the participant's (Codabench's ``metadata``): they are not the
    participant's, so they are neither scored nor warned about, and the one
    top folder of a zipped folder is looked through beside them.
    """
    if not folder.is_dir():
        raise UsageError(f"no submission folder {folder} ({unpacked_by})")
    with participants_part(folder, platform_files) as submission:
        result = evaluate(
            setup.challenge, setup.truth, submission, setup.settings, workers=workers, **setup.evaluation()
        )
        for line in log_lines(result, submission):
            echo(line)
    return result


@contextmanager
def participants_part(folder: Path, platform_files: frozenset[str]) -> Iterator[Path]:
    """``folder`` without the platform's own files (regular files at its top named in ``platform_files``), its one top folder looked through.

    When the platform's files sit beside the participant's files, the
    participant's are copied into a temporary folder (the platform's folder
    may be read-only, as Grand Challenge's ``/input`` is); links and special
    files are copied as what they are, so that scoring refuses them by name
    as it would in place, and nothing is opened but regular files.
    """
    entries = _entries(folder)
    theirs = [entry for entry in entries if not (entry.name in platform_files and entry.is_file(follow_symlinks=False))]
    if len(theirs) == len(entries):
        yield inside(folder)
        return
    shown = [
        entry for entry in theirs if not entry.name.startswith(".") and entry.name != "__MACOSX"
    ]  # as inside() counts them
    if len(shown) == 1 and shown[0].is_dir(follow_symlinks=False):
        yield Path(shown[0].path)
        return
    with tempfile.TemporaryDirectory(prefix="podium-submission-") as staged:
        for entry in theirs:
            _copy_as_it_is(Path(entry.path), Path(staged) / entry.name)
        yield Path(staged)


def _entries(folder: Path) -> list[os.DirEntry[str]]:
    with os.scandir(folder) as entries:
        return sorted(entries, key=lambda e: e.name)


def _copy_as_it_is(source: Path, target: Path) -> None:
    """A regular file's bytes, a folder's entries, a link as a link; a FIFO, socket or device as a FIFO (refused when scored, never opened)."""
    mode = source.lstat().st_mode
    if stat.S_ISLNK(mode):
        os.symlink(os.readlink(source), target)
    elif stat.S_ISDIR(mode):
        target.mkdir()
        for entry in _entries(source):
            _copy_as_it_is(Path(entry.path), target / entry.name)
    elif stat.S_ISREG(mode):
        shutil.copyfile(source, target, follow_symlinks=False)
    else:
        os.mkfifo(target)


def log_lines(result: Result, submission: Path) -> list[str]:
    """The outcome and every problem, one per line, files named inside the submission, for the platform's log."""
    lines = [f"podium {result.challenge}: {result.status}"]
    for kind, issues in (("error", result.errors), ("warning", result.warnings + result.score_warnings)):
        lines += [f"{kind} {_inside(issue, submission)}" for issue in issues]
    return lines


def _inside(issue: Issue, submission: Path) -> str:
    prefix = str(submission).rstrip("/") + "/"
    name = issue.file[len(prefix) :] if issue.file and issue.file.startswith(prefix) else issue.file
    return str(Issue(issue.code, issue.message, name, issue.line))
