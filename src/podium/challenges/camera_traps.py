"""``camera-traps``: animal boxes and the "suitable for full analysis" class, scored in points.

Rules: ``shared/seeds/003_5118cb1f996393c7.txt``; podium is the reference
implementation (:mod:`podium.metrics.detection_points`). ``matching=optimal``
replaces the rules' file-order greedy matching by a maximum matching with the
largest total IoU, as a check of how much the order matters.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
from numpy.typing import NDArray
from PIL import Image

from podium.challenges.base import Challenge, ItemResult, Job, ScoreSpec, rows_by_split
from podium.core.errors import TruthError
from podium.core.issues import IssueLog, plural, summarize_names
from podium.core.parameters import choice, integer, optional_path
from podium.formats.detection_table import Table, read_table
from podium.formats.folders import single_file
from podium.formats.truth_cache import cached
from podium.metrics.detection_boxes import Boxes
from podium.metrics.detection_points import (
    Matching,
    PointCounts,
    count_points,
    count_points_per_photo,
    greedy_matching,
    points_score,
)
from podium.synthetic.demo import Demo

TABLE_SUFFIXES = (".csv", ".tsv", ".txt")


@dataclass(frozen=True)
class Item:
    key: str
    truth: Table
    submission: Table


@dataclass(frozen=True)
class Context:
    matching: str


class CameraTraps(Challenge[Context, Item, PointCounts]):
    id = "camera-traps"
    checked_by_prepare = True  # the tables are read and checked whole in prepare
    title = "Camera-trap animal detection and 'suitable for full analysis' classification, in points"
    rules = 'the contest\'s metric description, in Russian ("Описание метрики")'
    parameters = (
        choice(
            "matching",
            "greedy",
            "greedy = the rules (file order); optimal = maximum matching, a sensitivity check",
            ("greedy", "optimal"),
        ),
        optional_path(
            "images",
            "folder of the test photos, for the min_size check of the truth",
            "a folder of the test photos",
            folder=True,
            role="check",
        ),
        integer("min_size", 128, "smallest side in pixels of a 'suitable' (class 1) animal; checked with images=", 1),
    )
    scores = (
        ScoreSpec("score", True, "max(0, points) / (6 x truth objects)"),
        ScoreSpec("points", True, "detection points + classification points"),
        ScoreSpec("detection_points", True, "+1 matched, -1 false detection, -1 missed object"),
        ScoreSpec("classification_points", True, "+5 right class, -5 wrong class, over matched pairs"),
        ScoreSpec("max_points", None, "6 x the number of truth objects"),
        ScoreSpec("precision", True, "matched / predictions"),
        ScoreSpec("recall", True, "matched / truth objects"),
        ScoreSpec("f1", True, "2 matched / (predictions + truth objects)"),
        ScoreSpec("class_accuracy", True, "right classes / matched pairs"),
    )
    primary = "score"

    def prepare(self, truth: Path, submission: Path, params: dict[str, Any], log: IssueLog) -> Job[Context, Item]:
        truth_table = _read_truth(truth)
        if params["images"] is not None:
            _check_suitable_sizes(truth_table, params["images"], params["min_size"], log)
        path = single_file(submission, TABLE_SUFFIXES, log)
        table = None if path is None else read_table(path, log, truth_table)
        items = [Item(path.name, truth_table, table)] if path is not None and table is not None else []
        return Job(Context(params["matching"]), items)

    def units(self, truth: Path, params: dict[str, Any]) -> list[str]:
        """The photos of the truth table."""
        return _read_truth(truth).photos

    def divide(self, context: Context, item: Item, split_of: Mapping[str, str]) -> list[tuple[str, Item]]:
        """The rows of each split's photos, truth and submission alike."""
        return [
            (split, Item(item.key, item.truth.restricted(photos), item.submission.restricted(photos)))
            for split, photos in rows_by_split(item.truth.photos, split_of)
        ]

    def evaluate_item(self, context: Context, item: Item) -> ItemResult[PointCounts]:
        counts, details, chosen = self._matched(context, item)
        pred, truth = item.submission.boxes, item.truth.boxes
        photos = count_points_per_photo(pred, truth, chosen, len(item.truth.photos))
        details["per_photo"] = _per_photo(photos, item.truth.photos)
        return ItemResult(counts, details=details, units=_unit_rows(photos, item.truth.photos))

    def score_item(self, context: Context, item: Item) -> ItemResult[PointCounts]:
        """The points and the matching's summary: no row and no details per photo."""
        counts, details, _ = self._matched(context, item)
        return ItemResult(counts, details=details)

    def _matched(self, context: Context, item: Item) -> tuple[PointCounts, dict[str, Any], NDArray[np.int64]]:
        """The counts of the rules' matching (or of the optimal one), its summary, and the truth box each prediction took."""
        pred, truth = item.submission.boxes, item.truth.boxes
        greedy = greedy_matching(pred, truth)
        counts = count_points(pred, truth, greedy.truth_of)
        chosen = greedy.truth_of
        details: dict[str, Any] = {
            "photos": len(item.truth.photos),
            "photos_decided_exactly": greedy.exact_photos,
            "photos_contested": int(greedy.contested.size),
        }
        if context.matching == "optimal":
            chosen = _optimal_matching(pred, greedy)
            optimal = count_points(pred, truth, chosen)
            details.update(
                greedy_points=counts.points,
                optimal_points=optimal.points,
                points_order_dependent=optimal.points - counts.points,
            )
            counts = optimal
        return counts, details, chosen

    def unit_columns(self, context: Context) -> tuple[str, ...]:
        """Per photo: its points, its maximum (6 per truth object) and its predictions."""
        return UNIT_COLUMNS

    def scores_of_sums(self, columns: tuple[str, ...], sums: NDArray[np.float64]) -> dict[str, NDArray[np.float64]]:
        """The score of :func:`~podium.metrics.detection_points.points_score` and the points."""
        points, max_points, predictions = sums.T
        return {"score": points_score(points, max_points, predictions), "points": points}

    def finalize(
        self, context: Context, stats: PointCounts, details: dict[str, Any], log: IssueLog
    ) -> tuple[dict[str, float | int | None], dict[str, Any]]:
        (summary,) = details.values()
        if summary.get("points_order_dependent"):
            log.warning(
                "order_dependent",
                f"the matching order changes the points: greedy {summary['greedy_points']}, optimal {summary['optimal_points']}",
            )
        scores: dict[str, float | int | None] = {spec.name: getattr(stats, spec.name) for spec in self.scores}
        return scores, {
            "matched": stats.matched,
            "false_detections": stats.false_detections,
            "missed": stats.missed,
            "class_right": stats.class_right,
            "class_wrong": stats.class_wrong,
            **summary,
        }

    def write_demo(self, folder: Path) -> Demo:
        from podium.synthetic.camera_traps import write_demo

        return Demo(*write_demo(folder))


def _read_truth(truth: Path) -> Table:
    """The truth table, read once per process (:mod:`podium.formats.truth_cache`)."""
    return cached("camera_traps.truth", (truth,), lambda: _read_truth_table(truth))


def _read_truth_table(truth: Path) -> Table:
    truth_log = IssueLog()
    table = read_table(truth, truth_log, None) if truth.is_file() else None
    if table is None:
        raise TruthError(f"truth {truth} is not a usable table (Name, BBox, Class)", truth_log.errors or None)
    return table


def _optimal_matching(pred: Boxes, greedy: Matching) -> NDArray[np.int64]:
    """Maximum matching at IoU > 0.5 with the largest total IoU.

    Only photos where a truth box is a candidate of several predictions can
    differ from the greedy matching; the others keep it. Candidates are the
    greedy matching's, whose IoU > 0.5 was decided exactly near 0.5.
    """
    from scipy.optimize import linear_sum_assignment  # only for this check: keeps start-up fast

    result = greedy.truth_of.copy()
    p_c, t_c, iou_c = greedy.candidates
    photo_c = pred.photo[p_c]
    for photo in greedy.contested.tolist():
        rows = slice(*np.searchsorted(photo_c, [photo, photo + 1]))
        preds, p_local = np.unique(p_c[rows], return_inverse=True)
        truths, t_local = np.unique(t_c[rows], return_inverse=True)
        weight = np.zeros((preds.size, truths.size))
        weight[p_local, t_local] = 1 + preds.size + iou_c[rows]  # more matches first, then more IoU
        assigned_rows, assigned_cols = linear_sum_assignment(weight, maximize=True)
        keep = weight[assigned_rows, assigned_cols] > 0
        result[preds] = -1
        result[preds[assigned_rows[keep]]] = truths[assigned_cols[keep]]
    return result


def _per_photo(photos: PointCounts, names: list[str]) -> dict[str, dict[str, int]]:
    """The details of every photo with a truth object or a prediction."""
    active = np.flatnonzero((photos.truth_objects > 0) | (photos.predictions > 0))
    columns = [
        np.asarray(values)[active].tolist()
        for values in (photos.points, photos.matched, photos.false_detections, photos.missed)
    ]  # each computed once
    return {
        names[i]: {"points": p, "matched": m, "false": f, "missed": s}
        for i, p, m, f, s in zip(active.tolist(), *columns)
    }


def _unit_rows(photos: PointCounts, names: list[str]) -> dict[str, tuple[float, ...]]:
    """Every photo's row of :data:`UNIT_COLUMNS`."""
    return dict(
        zip(
            names,
            zip(*(np.asarray(values).tolist() for values in (photos.points, photos.max_points, photos.predictions))),
        )
    )


UNIT_COLUMNS = ("points", "max_points", "predictions")


def _check_suitable_sizes(table: Table, images: Path, min_size: int, log: IssueLog) -> None:
    """Warn about truth objects of class 1 smaller than ``min_size`` pixels (a sanity check)."""
    boxes = table.boxes
    small, unreadable = [], []
    for photo in np.unique(boxes.photo[boxes.cls == 1]).tolist():
        name = table.photos[photo]
        try:
            with Image.open(images / name) as image:
                width, height = image.size
        except Exception:
            unreadable.append(name)
            continue
        for k in np.flatnonzero((boxes.photo == photo) & (boxes.cls == 1)).tolist():
            if boxes.xywh[k, 2] * width < min_size or boxes.xywh[k, 3] * height < min_size:
                small.append(name)
    if small:
        log.warning(
            "small_suitable",
            f"{plural(len(small), 'truth object')} of class 1 are smaller than {min_size} px: {summarize_names(small)}",
        )
    if unreadable:
        log.warning(
            "no_image_size",
            f"{plural(len(unreadable), 'photo')} could not be opened in {images}: {summarize_names(unreadable)}",
        )
