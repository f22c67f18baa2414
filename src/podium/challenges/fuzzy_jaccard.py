"""``fuzzy-jaccard``: per-class probability maps scored by min/max Jaccard.

Rules: ``shared/seeds/000_9c4ba323e960b865.txt``. For each class, ``D`` is the
fuzzy Jaccard index pooled over the whole test set (see
:mod:`podium.metrics.fuzzy_jaccard`); the score is the mean of ``D`` over the
classes. Background pixels (of no target class) are outside the region of
interest unless ``roi=all``. An image the submission lacks counts as all zeros.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
from numpy.typing import NDArray

from podium.challenges.base import Challenge, ItemResult, Job, ScoreSpec
from podium.challenges.program import Program, megapixels
from podium.core.errors import UsageError
from podium.core.issues import Issue, IssueLog
from podium.core.parameters import choice, optional_integer, real
from podium.formats import png
from podium.formats import probability_maps as maps
from podium.formats.folders import list_folder
from podium.metrics.fuzzy_jaccard import FuzzyJaccardStats, ImageSums
from podium.synthetic.demo import Demo


@dataclass(frozen=True)
class Context:
    truth: maps.TruthSet
    roi: str
    ignore: int | None
    unreadable: str


@dataclass(frozen=True)
class Item:
    key: str  # the image stem
    truth_files: tuple[Path, ...]
    predictions: tuple[Path | None, ...]  # one per class; None = missing


class FuzzyJaccardProgram(Program):
    """The program writes ``<class>/<stem>.png`` under its working directory. The time
    limit is the rules' budget: the total megapixels of the test images / ``rate_mp_s``
    + ``startup_s``. What it wrote before it was stopped is scored; missing or
    unreadable outputs count as all background."""

    def time_limit(self, images: Path, params: dict[str, Any]) -> float | None:
        return megapixels(images) / float(params["rate_mp_s"]) + float(params["startup_s"])

    def has_output(self, workdir: Path) -> bool:
        return any(list_folder(folder).files for folder in list_folder(workdir).folders)

    def scoring_settings(self, wall_s: float, peak_memory_mb: float) -> dict[str, str]:
        return {"unreadable": "zero"}  # a program stopped mid-write leaves broken files: background

    def details(self, workdir: Path, images: Path) -> dict[str, Any]:
        written = {p.stem for folder in list_folder(workdir).folders for p in list_folder(folder).files}
        return {
            "images_processed": len(written),
            "test_images": len(list_folder(images, refuse_hard_links=False).files),
        }


class FuzzyJaccard(Challenge[Context, Item, FuzzyJaccardStats]):
    id = "fuzzy-jaccard"
    title = "Pixel-level target detection, fuzzy (min/max) Jaccard over the region of interest"
    rules = "the contest's published evaluation rules, in Turkish (the region of interest and the Jaccard index of target pixels)"
    parameters = (
        choice(
            "roi",
            "union",
            "region of interest: union = pixels of a target class (the rules), all = every pixel",
            ("union", "all"),
        ),
        optional_integer("ignore", "truth label value excluded from the region of interest (label layout)", 0, 65535),
        choice(
            "unreadable",
            "reject",
            "a submission image that cannot be used: reject = the submission is rejected; "
            "zero = it counts as all background with a warning (podium run: a program stopped mid-write)",
            ("reject", "zero"),
        ),
        real(
            "rate_mp_s",
            1.0,
            "podium run: the time budget allows this many megapixels per second (the rules: 1)",
            exclusive=True,
        ),
        real("startup_s", 0.0, "podium run: seconds added to the time budget"),
    )
    scores = (
        ScoreSpec(
            "fuzzy_jaccard",
            True,
            "mean over classes of the pooled fuzzy Jaccard index D (per class: fuzzy_jaccard/<class>)",
        ),
    )
    primary = "fuzzy_jaccard"
    program = FuzzyJaccardProgram()

    def prepare(self, truth: Path, submission: Path, params: dict[str, Any], log: IssueLog) -> Job[Context, Item]:
        truth_set = maps.read_truth(truth)
        ignore = params["ignore"]
        if ignore is not None and truth_set.layout == "masks":
            raise UsageError("ignore applies to a truth of label images (classes.txt); this truth has class masks")
        if ignore is not None and 1 <= ignore <= len(truth_set.classes):
            raise UsageError(f"ignore={ignore} is the label of class {truth_set.classes[ignore - 1]!r}")
        found = maps.map_submission(submission, truth_set, log)
        items = [
            Item(stem, files, tuple(found.get((c, stem)) for c in range(len(truth_set.classes))))
            for stem, files in truth_set.files.items()
        ]
        return Job(Context(truth_set, params["roi"], ignore, params["unreadable"]), items)

    def evaluate_item(self, context: Context, item: Item) -> ItemResult[FuzzyJaccardStats]:
        read = self._read(context, item, statistics=True)
        if isinstance(read, ItemResult):
            return read
        stats, problems = read
        units = {item.key: tuple(map(float, stats.intersection + stats.union))}
        return ItemResult(stats, details={"fuzzy_jaccard": _nullable(stats.compute())}, warnings=problems, units=units)

    def check_item(self, context: Context, item: Item) -> ItemResult[FuzzyJaccardStats]:
        """The truth's and the predictions' images read and checked as :meth:`evaluate_item` reads them; no statistic."""
        read = self._read(context, item, statistics=False)
        return read if isinstance(read, ItemResult) else ItemResult(read[0], warnings=read[1])

    def _read(
        self, context: Context, item: Item, statistics: bool
    ) -> tuple[FuzzyJaccardStats, list[Issue]] | ItemResult[FuzzyJaccardStats]:
        """This image's statistics (zeros unless ``statistics``: the files are only checked) and its
        predictions' problems (a missing or unreadable map counts as zeros); or the result rejecting
        them. The maps are read one after the other, each class's sums taken before the next is
        read (:class:`~podium.metrics.fuzzy_jaccard.ImageSums`): by the compiled extension as it
        decodes a map (:func:`~podium.formats.probability_maps.probability_map_sums`), or from
        the map decoded whole into one buffer where that way does not take the file."""
        empty = FuzzyJaccardStats.zeros(len(context.truth.classes))
        try:
            shape, sums = self._read_truth(context, item)
        except png.ImageError as exc:
            return ItemResult(empty, truth_errors=[Issue("truth_image", exc.message, str(exc.path))])
        buffer = np.empty(shape, np.uint8)
        rows = bytearray(shape[0] * (shape[1] + 1))  # a map's inflated rows, for the extension
        problems: list[Issue] = []
        for path in item.predictions:
            prediction = None
            if path is not None:
                found = maps.probability_map_sums(path, shape, *sums.next_truth(), sums.roi, rows)
                if found is not None:
                    sums.add_sums(*found)
                    continue
                try:
                    prediction = maps.read_probability_map(path, shape, out=buffer)
                except png.ImageError as exc:
                    problems.append(Issue("bad_image", exc.message, str(path)))
            if statistics:
                sums.add(prediction)
            else:
                sums.add_sums(0, 0, 0)  # only the files are checked: the classes kept in step
        if problems and context.unreadable == "reject":
            return ItemResult(empty, errors=problems)
        return (sums.stats if statistics else empty), problems

    def unit_columns(self, context: Context) -> tuple[str, ...]:
        """Per image, ``Σ min(P, G)`` of every class, then ``Σ max(P, G)`` of every class."""
        classes = context.truth.classes
        return tuple(f"intersection/{c}" for c in classes) + tuple(f"union/{c}" for c in classes)

    def scores_of_sums(self, columns: tuple[str, ...], sums: NDArray[np.float64]) -> dict[str, NDArray[np.float64]]:
        """Per-class ``D = ΣI / ΣU`` (NaN where ``ΣU = 0``) and their mean over the defined classes."""
        n = len(columns) // 2
        intersection, union = sums[:, :n], sums[:, n:]
        with np.errstate(invalid="ignore", divide="ignore"):
            per_class = np.where(union > 0, intersection / np.where(union > 0, union, 1), np.nan)
        defined = ~np.isnan(per_class)
        mean = np.where(defined.any(axis=1), np.nansum(per_class, axis=1) / np.maximum(defined.sum(axis=1), 1), np.nan)
        scores = {"fuzzy_jaccard": mean}
        scores.update({f"fuzzy_jaccard/{name.split('/', 1)[1]}": per_class[:, c] for c, name in enumerate(columns[:n])})
        return scores

    @staticmethod
    def _read_truth(context: Context, item: Item) -> tuple[tuple[int, int], ImageSums]:
        """The image shape, and the sums of predictions against this image's truth, to be added class by class."""
        if context.truth.layout == "labels":
            (path,) = item.truth_files
            labels = maps.read_labels(path, len(context.truth.classes), context.ignore)
            roi = maps.roi_of_labels(labels, context.roi, context.ignore)
            return (labels.shape[0], labels.shape[1]), ImageSums.of_labels(labels, roi)
        masks = [maps.read_mask(path) for path in item.truth_files]
        if len({m.shape for m in masks}) > 1:
            raise png.ImageError("class masks of this image differ in size", item.truth_files[0])
        return (masks[0].shape[0], masks[0].shape[1]), ImageSums.of_masks(masks, maps.roi_of_masks(masks, context.roi))

    def finalize(
        self, context: Context, stats: FuzzyJaccardStats, details: dict[str, Any], log: IssueLog
    ) -> tuple[dict[str, float | None], dict[str, Any]]:
        classes = context.truth.classes
        per_class = stats.compute()
        undefined = [c for c, d in zip(classes, per_class) if np.isnan(d)]
        if undefined:
            log.warning(
                "undefined_class",
                f"classes {', '.join(undefined)} have no truth pixel and no predicted probability in the region "
                "of interest; their score is null and left out of the mean",
            )
        defined = per_class[~np.isnan(per_class)]
        scores: dict[str, float | None] = {"fuzzy_jaccard": float(defined.mean()) if defined.size else None}
        scores.update({f"fuzzy_jaccard/{c}": v for c, v in zip(classes, _nullable(per_class))})
        per_image = {stem: dict(zip(classes, d["fuzzy_jaccard"])) for stem, d in details.items()}
        return scores, {
            "classes": {
                c: {"intersection": i, "union": u} for c, i, u in zip(classes, stats.intersection, stats.union)
            },
            "images": len(per_image),
            "per_image": per_image,
        }

    def write_demo(self, folder: Path) -> Demo:
        from podium.synthetic.fuzzy_jaccard import write_demo

        return Demo(*write_demo(folder))

    def units(self, truth: Path, params: dict[str, Any]) -> list[str]:
        """The stems of the truth's images."""
        return maps.read_truth(truth).stems


def _nullable(values: NDArray[np.float64]) -> list[float | None]:
    return [None if np.isnan(v) else float(v) for v in values]
