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

The contract, typed as ``Challenge[Context, Item, Stats]`` and checked by the
engine (:func:`podium.scoring.engine.evaluate` raises :class:`~podium.core.errors.ContractError` naming the
rule a challenge broke; the result document refuses details that are not JSON):

- every item has a ``key`` (a ``str``), unique in its job: it names the item in ``details``;
- a job without items has logged at least one error (the submission is rejected, never scored empty);
- problems of the truth go to :attr:`ItemResult.truth_errors`, never to ``errors``
  (the truth is the organizer's to fix: exit 2, not a rejection);
- ``details`` are JSON: dicts with string keys, lists, strings, numbers, booleans, ``None``;
- each unit row has one value per :meth:`Challenge.unit_columns`;
- statistics merge exactly (:mod:`podium.metrics.state`), so any grouping of the
  items gives the same scores (``tests/test_conformance.py`` checks every challenge).

A challenge whose participants may send programs declares :attr:`Challenge.program`,
the rules' contract for running them (:mod:`podium.challenges.program`).

A contest splits the test set into public and private parts. Its unit is what
the challenge scores one by one: an image, a photo, a box
(:meth:`Challenge.units`). :meth:`Challenge.divide` cuts a work item into one
part per split; each part is evaluated like an item, so every split's
statistics are merged from its own parts, and the whole's from all of them.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar, Generic, Literal, Protocol, Self, TypeVar

from podium.core.issues import Issue, IssueLog
from podium.core.lazy import LazyModule
from podium.core.parameters import Parameter
from podium.formats.files import recording_reads

if TYPE_CHECKING:
    import numpy as np
    from numpy.typing import NDArray

    from podium.challenges.program import Program
    from podium.synthetic.demo import Demo
else:
    np = LazyModule("numpy")


class Mergeable(Protocol):
    def merge(self, other: Self) -> Self: ...


class Keyed(Protocol):
    @property
    def key(self) -> str: ...


Need = Literal["all", "checks", "scores"]
"""What the engine asks of an item: everything (:meth:`Challenge.evaluate_item`), its checks alone
(:meth:`Challenge.check_item`), or its statistics without what only the result document shows
(:meth:`Challenge.score_item`)."""

ContextT = TypeVar("ContextT")
ItemT = TypeVar("ItemT", bound=Keyed)
StatsT = TypeVar("StatsT", bound=Mergeable)


@dataclass(frozen=True)
class ScoreSpec:
    """A reported score: ``name`` (per-class variants are ``name/<class>``) and direction.

    ``higher_is_better`` is ``None`` for a descriptive count that is neither.
    A ``family`` is reported only as its variants ``name/<variant>`` (e.g. one AP per class).
    A ``measured`` score needs what ``podium run`` measures (time, memory): where
    submissions are files (the platforms' bundles) it is never defined.
    """

    name: str
    higher_is_better: bool | None
    help: str
    family: bool = False
    measured: bool = False


@dataclass
class Job(Generic[ContextT, ItemT]):
    """What :meth:`Challenge.prepare` plans: a picklable context shared by all items, and the items."""

    context: ContextT
    items: list[ItemT]


@dataclass
class ItemResult(Generic[StatsT]):
    stats: StatsT
    details: dict[str, Any] = field(default_factory=dict)
    errors: list[Issue] = field(default_factory=list)
    warnings: list[Issue] = field(default_factory=list)
    truth_errors: list[Issue] = field(default_factory=list)
    units: dict[str, tuple[float, ...]] = field(
        default_factory=dict
    )  # unit name -> its row of :meth:`Challenge.unit_columns`
    read: dict[str, str] = field(
        default_factory=dict
    )  # the submission's files the item read -> SHA-256 (set by the engine)


class Challenge(ABC, Generic[ContextT, ItemT, StatsT]):
    id: ClassVar[str]
    title: ClassVar[str]
    rules: ClassVar[str]  # where the official rules are, for ``podium challenges``
    parameters: ClassVar[tuple[Parameter, ...]]
    scores: ClassVar[tuple[ScoreSpec, ...]]
    primary: ClassVar[str]  # the score that ranks teams
    rank_sum: ClassVar[bool] = False  # rank by the sum of per-criterion ranks, not by one score
    program: ClassVar[Program | None] = None  # how participants' programs run (podium run), if they may send programs
    preload: ClassVar[
        tuple[str, ...]
    ] = ()  # modules a local pool's forkserver imports once, before forking workers (compiled kernels)
    checked_by_prepare: ClassVar[bool] = (
        False  # prepare reads and checks every submission file; the items only compute (checks skip them)
    )

    @abstractmethod
    def prepare(self, truth: Path, submission: Path, params: dict[str, Any], log: IssueLog) -> Job[ContextT, ItemT]:
        """Read the truth (raise :class:`~podium.core.errors.TruthError`) and plan the items; log every submission problem."""

    @abstractmethod
    def evaluate_item(self, context: ContextT, item: ItemT) -> ItemResult[StatsT]:
        """Statistics of one item; problems are returned, never raised."""

    def check_item(self, context: ContextT, item: ItemT) -> ItemResult[StatsT]:
        """The problems of one item's files, found as :meth:`evaluate_item` finds them, without computing its metric.

        What checks-only runs call (``podium validate``, a service's upload checks): the same
        errors and warnings as :meth:`evaluate_item`, statistics left empty. The default
        scores the item; a challenge whose metric costs more than its reading overrides it.
        """
        return self.evaluate_item(context, item)

    def score_item(self, context: ContextT, item: ItemT) -> ItemResult[StatsT]:
        """The statistics and problems of :meth:`evaluate_item`, without its unit rows and without
        the details that only the result document shows (one row or entry per unit).

        What a run that shows only the scores calls (``podium evaluate`` without ``--json``):
        :meth:`finalize` must give the same scores from these statistics. The default is
        :meth:`evaluate_item`; a challenge whose per-unit rows cost about its metric overrides it.
        """
        return self.evaluate_item(context, item)

    def evaluate_reading(
        self, context: ContextT, item: ItemT, submission: str, need: Need = "all"
    ) -> ItemResult[StatsT]:
        """:meth:`evaluate_item`, :meth:`check_item` or :meth:`score_item` (as ``need`` says), with the
        files of ``submission`` it read in the result's ``read`` (what the engine calls)."""
        run = {"all": self.evaluate_item, "checks": self.check_item, "scores": self.score_item}[need]
        if not submission:
            return run(context, item)
        with recording_reads(Path(submission)) as read:
            result = run(context, item)
        result.read = read
        return result

    @abstractmethod
    def finalize(
        self, context: ContextT, stats: StatsT, details: dict[str, Any], log: IssueLog
    ) -> tuple[dict[str, float | int | None], dict[str, Any]]:
        """Scores (every declared score; see :attr:`scores`) and the ``details`` document from the merged statistics."""

    @abstractmethod
    def write_demo(self, folder: Path) -> Demo:
        """Write a small synthetic truth and a sample submission."""

    @abstractmethod
    def units(self, truth: Path, params: dict[str, Any]) -> list[str]:
        """The names of the test set's units, in the truth's order (raise :class:`~podium.core.errors.TruthError`)."""

    def divide(self, context: ContextT, item: ItemT, split_of: Mapping[str, str]) -> list[tuple[str, ItemT]]:
        """``item`` cut into ``(split, part)`` pairs, one per split that holds some of its units.

        The default serves challenges whose items are single units named by ``item.key``.
        A part keeps the item's ``key``; its units keep their order.
        """
        return [(split_of[item.key], item)]

    def join_details(self, parts: list[dict[str, Any]]) -> dict[str, Any]:
        """The details of a divided item, from those of its parts (see :func:`add_details`)."""
        joined = parts[0]
        for part in parts[1:]:
            joined = add_details(joined, part)
        return joined

    def unit_columns(self, context: ContextT) -> tuple[str, ...]:
        """The additive statistics of one unit, the columns of :attr:`ItemResult.units`; none: no bootstrap."""
        return ()

    def scores_of_sums(self, columns: tuple[str, ...], sums: NDArray[np.float64]) -> dict[str, NDArray[np.float64]]:
        """Scores from sums of unit rows, one sum per row of ``sums`` (resamples x ``columns``).

        A challenge whose scores are functions of per-unit sums names its
        :meth:`unit_columns`, fills :attr:`ItemResult.units`, and computes here
        every score that can rank it (NaN where a score is undefined), so that
        a bootstrap over units costs one matrix product (:mod:`podium.ranking.bootstrap`).
        """
        raise NotImplementedError(f"{self.id} has no unit statistics")

    def units_of_score(self, name: str) -> tuple[str, Callable[[str], bool] | None]:
        """The score of :meth:`scores_of_sums` that ``name`` is, and the units it pools (``None``: all of them).

        A score over a subset of the units (GlaS's per-part ``f1/testA``) is its
        base score on the sums of that subset's rows.
        """
        return name, None

    def ranking_criteria(self, score_names: set[str]) -> list[ScoreSpec]:
        """The scores that rank teams: by default the primary score alone."""
        return [self.score_spec(self.primary)]

    def leaderboard_criteria(self, params: dict[str, Any]) -> list[ScoreSpec]:
        """The criteria known before any result, from the parameters alone: a platform's leaderboard columns."""
        return self.ranking_criteria({spec.name for spec in self.scores})

    def score_spec(self, name: str) -> ScoreSpec:
        """The spec of ``name`` or of its prefix (``metric/class`` -> ``metric``)."""
        base = name.split("/", 1)[0]
        for spec in self.scores:
            if spec.name in (name, base):
                return spec
        raise KeyError(name)


def rows_by_split(units: list[str], split_of: Mapping[str, str]) -> list[tuple[str, NDArray[np.intp]]]:
    """For each split (in name order) that holds some of ``units``, the ascending indices of those units.

    >>> rows_by_split(["a", "b", "c"], {"a": "public", "b": "private", "c": "public"})
    [('private', array([1])), ('public', array([0, 2]))]
    """
    splits = np.array([split_of[unit] for unit in units])
    return [(str(split), np.flatnonzero(splits == split)) for split in np.unique(splits)]


def add_details(a: Any, b: Any) -> Any:
    """Details of two disjoint parts joined: numbers add up, mappings join key by key, equal values stay.

    >>> add_details({"images": 2, "per_photo": {"a": 1}}, {"images": 3, "per_photo": {"b": 0}})
    {'images': 5, 'per_photo': {'a': 1, 'b': 0}}
    """
    if isinstance(a, dict) and isinstance(b, dict):
        return {key: add_details(a[key], b[key]) if key in a and key in b else a.get(key, b.get(key)) for key in a | b}
    if (
        isinstance(a, (int, float))
        and isinstance(b, (int, float))
        and not isinstance(a, bool)
        and not isinstance(b, bool)
    ):
        return a + b
    if a == b:
        return a
    raise ValueError(f"details {a!r} and {b!r} of two parts cannot be joined")
