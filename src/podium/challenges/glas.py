"""``glas``: gland instance segmentation scored by object-level F1, Dice and Hausdorff.

Rules: ``shared/seeds/002_ea0d617af09236b8.txt``; the organizers' MATLAB code (v6)
is the reference (:mod:`podium.metrics.object_segmentation`). Scores are pooled
over the test set; per-image values are in ``details``. Teams are ranked per
criterion with standard competition ranking, and by the sum of their ranks.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
from numpy.typing import NDArray
from scipy import ndimage

from podium.challenges.base import Challenge, ItemResult, Job, ScoreSpec
from podium.core.errors import TruthError, UsageError
from podium.core.issues import Issue, IssueLog, plural, summarize_names
from podium.core.parameters import Parameter, choice
from podium.formats import label_images, png, truth_cache
from podium.formats.folders import one_level_down
from podium.metrics import object_segmentation
from podium.metrics.object_segmentation import (
    UNIT_COLUMNS,
    ObjectStats,
    TooComplex,
    check_pair_memory,
    image_stats,
    label_changes,
)
from podium.metrics.state import Statistics, keyed
from podium.synthetic.demo import Demo

SCORES = ("f1", "object_dice", "object_hausdorff")
EIGHT_CONNECTED = np.ones((3, 3), dtype=bool)


def _names(text: str) -> tuple[str, ...]:
    return tuple(n.strip() for n in text.split(",") if n.strip())


@dataclass(frozen=True)
class Context:
    binary: str
    empty_hausdorff: str
    parts: tuple[str, ...]


@dataclass(frozen=True)
class Item:
    key: str  # the stem
    truth: Path
    submission: Path | None
    part: str  # "" when no part matches


@dataclass(frozen=True)
class PartStats(Statistics):
    """Object statistics per part of the test set (``""``: images of no part)."""

    parts: dict[str, ObjectStats] = keyed()

    def total(self) -> ObjectStats:
        total = ObjectStats()
        for part in sorted(self.parts):
            total = total.merge(self.parts[part])
        return total


class GlaS(Challenge[Context, Item, PartStats]):
    id = "glas"
    title = "Gland instance segmentation (GlaS, MICCAI 2015): object-level F1, Dice and Hausdorff"
    rules = "GlaS@MICCAI 2015, Evaluation (warwick.ac.uk/fac/cross_fac/tia/data/glascontest/evaluation), and the organizers' MATLAB code"
    parameters = (
        Parameter(
            "suffixes",
            label_images.DEFAULT_SUFFIXES,
            "file name endings removed before truth and submission files are paired",
            _names,
            "comma-separated list",
        ),
        choice(
            "binary",
            "auto",
            "a submission image holding one value: auto = label its 8-connected pieces if there are several, "
            "label = always, objects = never",
            ("auto", "label", "objects"),
        ),
        choice(
            "empty_hausdorff",
            "diagonal",
            "Hausdorff of an object whose image has no object on the other side",
            ("diagonal", "inf"),
        ),
        Parameter(
            "parts",
            (),
            "test parts by stem prefix, e.g. testA,testB: adds scores per part",
            _names,
            "comma-separated list",
        ),
    )
    scores = (
        ScoreSpec("f1", True, "object-level F1 from TP, FP, FN summed over the test set"),
        ScoreSpec("object_dice", True, "object-level Dice, objects weighted by area over the test set"),
        ScoreSpec("object_hausdorff", False, "object-level Hausdorff distance in pixels, same weighting"),
    )
    primary = "f1"
    preload = ("podium.scoring.kernels",)  # Numba kernels, loaded once in a forkserver
    rank_sum = True

    def ranking_criteria(self, score_names: set[str]) -> list[ScoreSpec]:
        """Each part's three scores when the results have parts (GlaS: Test A and B), else the three."""
        parts = sorted({n.split("/", 1)[1] for n in score_names if "/" in n})
        names = [f"{s}/{p}" for p in parts for s in SCORES] if parts else list(SCORES)
        return [ScoreSpec(n, self.score_spec(n).higher_is_better, "") for n in names]

    def leaderboard_criteria(self, params: dict[str, Any]) -> list[ScoreSpec]:
        """The three scores of each part named in ``params["parts"]``, else the three."""
        return self.ranking_criteria({f"{s}/{part}" for s in SCORES for part in params["parts"]} | set(SCORES))

    def prepare(self, truth: Path, submission: Path, params: dict[str, Any], log: IssueLog) -> Job[Context, Item]:
        suffixes = params["suffixes"]
        truth_files = _truth_files(truth, suffixes)
        parts = params["parts"]
        for part in parts:
            if not any(stem.startswith(part) for stem in truth_files.files):
                raise UsageError(
                    f"part {part!r} matches no image (the stems are {summarize_names(sorted(truth_files.files))})"
                )
        found: dict[str, Path] = {}
        nested = submission.is_dir() and one_level_down(submission, log)
        if not submission.is_dir():
            log.error("not_a_folder", "the submission must be a folder of label images", submission)
        elif not nested:
            listing = label_images.list_label_images(submission, suffixes)
            log.add_errors(listing.problems)
            found = listing.files
            extra = listing.ignored + [found[s].name for s in found if s not in truth_files.files]
            if extra:
                log.warning(
                    "extra_files",
                    f"{plural(len(extra), 'file')} ignored (not test images): {summarize_names(extra)}",
                    submission,
                )
        missing = [s for s in truth_files.files if s not in found]
        if missing and submission.is_dir() and not nested:
            log.warning(
                "missing_images",
                f"{plural(len(missing), 'image')} missing, scored as empty predictions: {summarize_names(missing)}",
                submission,
            )
        items = [
            Item(stem, path, found.get(stem), _part_of(stem, parts)) for stem, path in sorted(truth_files.files.items())
        ]
        unassigned = [i.key for i in items if parts and not i.part]
        if unassigned:
            log.warning(
                "no_part",
                f"{plural(len(unassigned), 'image')} belong to no part ({', '.join(parts)}): {summarize_names(unassigned)}",
            )
        return Job(Context(params["binary"], params["empty_hausdorff"], parts), items)

    def evaluate_item(self, context: Context, item: Item) -> ItemResult[PartStats]:
        pair = _read_pair(context, item)
        if isinstance(pair, ItemResult):
            return pair
        truth, segmented, warnings = pair
        empty_h = math.hypot(*truth.shape) if context.empty_hausdorff == "diagonal" else math.inf
        try:
            stats = image_stats(truth, segmented, empty_h)
        except TooComplex as exc:
            return ItemResult(PartStats(), errors=[Issue("too_complex", str(exc), str(item.submission))])
        details: dict[str, Any] = {
            "tp": stats.tp,
            "fp": stats.fp,
            "fn": stats.fn,
            "f1": stats.f1,
            "object_dice": stats.object_dice,
            "object_hausdorff": _finite(stats.object_hausdorff),
        }
        if context.parts:
            details["part"] = item.part or None
        return ItemResult(
            PartStats({item.part: stats}), details=details, warnings=warnings, units={item.key: stats.sums()}
        )

    def check_item(self, context: Context, item: Item) -> ItemResult[PartStats]:
        """Both images read and checked as :meth:`evaluate_item` reads them, and the pair's memory bound; no matching, no distance.

        What the checks need of the truth image, its shape and its changes of label, is read once per process
        (:func:`_truth_image`): an upload's checks decode only its own images.

        The work bound (labels scattered as noise, :class:`~podium.metrics.object_segmentation.TooComplex`
        from the distances) shows only while scoring: such a pair passes the checks, and its scoring
        rejects it with its message.
        """
        try:
            truth = _truth_image(item.truth)
        except png.ImageError as exc:
            return ItemResult(PartStats(), truth_errors=[Issue("truth_image", exc.message, str(exc.path))])
        changes, warnings = truth.changes, list[Issue]()
        if item.submission is not None:
            read = _read_submission(context, item.submission, truth.shape)
            if isinstance(read, ItemResult):
                return read
            segmented, warnings = read
            changes += label_changes(segmented)
        try:
            check_pair_memory(truth.shape, changes)
        except TooComplex as exc:
            return ItemResult(PartStats(), errors=[Issue("too_complex", str(exc), str(item.submission))])
        return ItemResult(PartStats(), warnings=warnings)

    def unit_columns(self, context: Context) -> tuple[str, ...]:
        """Per image: TP, FP, FN, and per side the object area and its area-weighted Dice and Hausdorff sums."""
        return UNIT_COLUMNS

    def scores_of_sums(self, columns: tuple[str, ...], sums: NDArray[np.float64]) -> dict[str, NDArray[np.float64]]:
        """Pooled F1, object Dice and object Hausdorff, with the conventions of :mod:`podium.metrics.object_segmentation`."""
        scores = object_segmentation.scores_of_sums(sums)
        hausdorff = scores["object_hausdorff"]
        return scores | {"object_hausdorff": np.where(np.isinf(hausdorff), np.nan, hausdorff)}

    def units_of_score(self, name: str) -> tuple[str, Callable[[str], bool] | None]:
        """``f1/testA``: ``f1`` over the images whose stem starts with ``testA`` (the part's prefix)."""
        base, _, part = name.partition("/")
        return (base, None) if not part else (base, lambda unit: unit.startswith(part))

    def finalize(
        self, context: Context, stats: PartStats, details: dict[str, Any], log: IssueLog
    ) -> tuple[dict[str, float | int | None], dict[str, Any]]:
        total = stats.total()
        scores = _scores(total)
        for (
            part
        ) in context.parts:  # a part with no image here (a split may hold none of it) has no score, not a perfect one
            part_scores = _scores(stats.parts[part]) if part in stats.parts else dict.fromkeys(SCORES)
            scores.update({f"{name}/{part}": value for name, value in part_scores.items()})
        scored_parts = {"", *stats.parts}
        if any(
            v is None
            for k, v in scores.items()
            if k.startswith("object_hausdorff") and k.partition("/")[2] in scored_parts
        ):
            log.warning(
                "infinite_hausdorff",
                "an object had no object on the other side of its image and empty_hausdorff=inf: Hausdorff is infinite, reported as null",
            )
        per_image = list(details.values())
        return scores, {
            "tp": total.tp,
            "fp": total.fp,
            "fn": total.fn,
            "precision": total.precision,
            "recall": total.recall,
            "per_image_mean": {
                name: _finite(float(np.mean([d[name] if d[name] is not None else math.inf for d in per_image])))
                for name in SCORES
            },
            "per_image": details,
        }

    def write_demo(self, folder: Path) -> Demo:
        from podium.synthetic.glas import write_demo

        return Demo(*write_demo(folder))

    def units(self, truth: Path, params: dict[str, Any]) -> list[str]:
        """The stems of the truth's label images."""
        return sorted(_truth_files(truth, params["suffixes"]).files)


def _truth_files(truth: Path, suffixes: tuple[str, ...]) -> label_images.LabelFolder:
    if not truth.is_dir():
        raise TruthError(f"truth {truth} is not a folder of label images")
    truth_files = label_images.list_label_images(truth, suffixes, truth=True)
    if truth_files.problems or not truth_files.files:
        problems = truth_files.problems or [Issue("truth_empty", "holds no PNG, BMP or TIFF label image", str(truth))]
        raise TruthError(f"truth {truth} is not usable", problems)
    return truth_files


def _part_of(stem: str, parts: tuple[str, ...]) -> str:
    return next((p for p in parts if stem.startswith(p)), "")


def _read_pair(
    context: Context, item: Item
) -> tuple[NDArray[np.integer], NDArray[np.integer], list[Issue]] | ItemResult[PartStats]:
    """The truth's and the submission's label images of ``item`` (objects numbered), with the warnings; or the result rejecting them."""
    try:
        truth = label_images.read_label_image(item.truth)
    except png.ImageError as exc:
        return ItemResult(PartStats(), truth_errors=[Issue("truth_image", exc.message, str(exc.path))])
    if item.submission is None:
        return truth, np.zeros(truth.shape, dtype=np.uint8), []
    read = _read_submission(context, item.submission, truth.shape)
    return read if isinstance(read, ItemResult) else (truth, *read)


def _read_submission(
    context: Context, path: Path, shape: tuple[int, int]
) -> tuple[NDArray[np.integer], list[Issue]] | ItemResult[PartStats]:
    """The submission's label image of a truth image of ``shape`` (objects numbered), with the warnings; or the result rejecting it."""
    try:
        segmented = label_images.read_label_image(path, shape)
    except png.ImageError as exc:
        return ItemResult(PartStats(), errors=[Issue("bad_image", exc.message, str(exc.path))])
    segmented, note = _objects_of(segmented, context.binary)
    return segmented, [Issue("binary_mask", note, str(path))] if note else []


@dataclass(frozen=True)
class TruthImage:
    """What the upload checks need of a truth image: its shape and its changes of label (:func:`check_pair_memory`)."""

    shape: tuple[int, int]
    changes: int


MOST_TRUTH_IMAGES = 100_000  # kept by _truth_image: about 200 bytes each
_truth_images: dict[tuple[int, ...], TruthImage] = {}


def _truth_image(path: Path) -> TruthImage:
    """:class:`TruthImage` of the truth image at ``path``, decoded once per process and version of the file: kept by
    :func:`podium.formats.truth_cache.file_identity`, so a file written again is read again."""
    key = truth_cache.file_identity(path)
    known = _truth_images.get(key) if key else None
    if known is not None:
        return known
    labels = label_images.read_label_image(path)  # says why a missing or unreadable file is refused
    found = TruthImage((int(labels.shape[0]), int(labels.shape[1])), label_changes(labels))
    if key is not None:
        if len(_truth_images) >= MOST_TRUTH_IMAGES:
            _truth_images.clear()
        _truth_images[key] = found
    return found


def _objects_of(labels: NDArray[np.integer], binary: str) -> tuple[NDArray[np.integer], str | None]:
    """Label the 8-connected pieces of a binary mask when ``binary`` says so."""
    if binary == "objects" or not labels.size:
        return labels, None
    value = labels.max()
    if not value or np.count_nonzero(labels) != np.count_nonzero(labels == value):  # not one value besides 0
        return labels, None
    pieces, n = ndimage.label(labels != 0, structure=EIGHT_CONNECTED)
    if binary == "auto" and n <= 1:
        return labels, None
    note = f"is a binary mask (one value, {value}); its {n} 8-connected pieces were taken as {n} objects"
    return pieces, note if binary == "auto" else None


def _scores(stats: ObjectStats) -> dict[str, float | int | None]:
    return {"f1": stats.f1, "object_dice": stats.object_dice, "object_hausdorff": _finite(stats.object_hausdorff)}


def _finite(value: float) -> float | None:
    return None if math.isinf(value) else value
