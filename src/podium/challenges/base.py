"""What every challenge declares and implements.

A challenge binds a file format, a metric, a scoring rule and a ranking
direction. The engine drives it in three steps, so that the middle one can run
in parallel processes (or, later, on a distributed engine):

1. :meth:`Challenge.prepare` reads the truth and the layout of the submission
   (in the main process) and returns a :class:`Job`: a picklable ``context`` and
   the list of independent work ``items``.
2. :meth:`Challenge.evaluate_item` turns one item into an :class:`ItemResult`:
   mergeable statistics, per-item details and the problems found. It must be a
   pure function of ``(context, item)``.
3. :meth:`Challenge.finalize` turns the merged statistics into scores.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, ClassVar, Generic, Protocol, Self, TypeVar

from podium.issues import Issue, IssueLog
from podium.parameters import Parameter


class Mergeable(Protocol):
    def merge(self, other: Self) -> Self: ...


S = TypeVar("S", bound=Mergeable)


@dataclass(frozen=True)
class ScoreSpec:
    """A reported score: ``name`` (per-class variants are ``name/<class>``) and direction.

    ``higher_is_better`` is ``None`` for a descriptive count that is neither.
    """

    name: str
    higher_is_better: bool | None
    help: str


@dataclass(frozen=True)
class Demo:
    """A synthetic test set written by :meth:`Challenge.write_demo`, and the ``--set`` values it needs."""

    truth: Path
    submission: Path
    settings: dict[str, str] = field(default_factory=dict)


@dataclass
class Job:
    context: Any
    items: list[Any]  # each has a ``key`` (str) naming it in ``details``


@dataclass
class ItemResult(Generic[S]):
    stats: S
    details: dict[str, Any] = field(default_factory=dict)
    errors: list[Issue] = field(default_factory=list)
    warnings: list[Issue] = field(default_factory=list)
    truth_errors: list[Issue] = field(default_factory=list)


class Challenge(ABC):
    id: ClassVar[str]
    title: ClassVar[str]
    rules: ClassVar[str]  # where the official rules are, for ``podium challenges``
    parameters: ClassVar[tuple[Parameter, ...]]
    scores: ClassVar[tuple[ScoreSpec, ...]]
    primary: ClassVar[str]  # the score that ranks teams
    rank_sum: ClassVar[bool] = False  # rank by the sum of per-criterion ranks, not by one score

    @abstractmethod
    def prepare(self, truth: Path, submission: Path, params: dict[str, Any], log: IssueLog) -> Job:
        """Read the truth (raise :class:`~podium.errors.TruthError`) and plan the items."""

    @abstractmethod
    def evaluate_item(self, context: Any, item: Any) -> ItemResult[Any]:
        """Statistics of one item; problems are returned, never raised."""

    @abstractmethod
    def finalize(self, context: Any, stats: Any, details: dict[str, Any], log: IssueLog) -> tuple[dict[str, float | None], dict[str, Any]]:
        """Scores and the ``details`` document from the merged statistics."""

    @abstractmethod
    def write_demo(self, folder: Path) -> Demo:
        """Write a small synthetic truth and a sample submission."""

    def ranking_criteria(self, score_names: set[str]) -> list[ScoreSpec]:
        """The scores that rank teams: by default the primary score alone."""
        return [self.score_spec(self.primary)]

    def score_spec(self, name: str) -> ScoreSpec:
        """The spec of ``name`` or of its prefix (``metric/class`` -> ``metric``)."""
        base = name.split("/", 1)[0]
        for spec in self.scores:
            if spec.name in (name, base):
                return spec
        raise KeyError(name)
