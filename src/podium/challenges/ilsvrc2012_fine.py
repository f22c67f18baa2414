"""ILSVRC 2012 Task 3, ``ilsvrc2012-fine``: fine-grained classification (dogs), mean average precision.

Apart from Tasks 1 and 2 (:mod:`podium.challenges.ilsvrc2012`), whose truth reader it shares, so that
scoring them loads none of its classes nor the average precision's (``podium evaluate ilsvrc2012-cls``
is a few milliseconds of a new process).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from podium.challenges.base import Challenge, ItemResult, Job, ScoreSpec, rows_by_split
from podium.challenges.ilsvrc2012 import SUBMISSION_SUFFIXES, truth_labels
from podium.core.errors import TruthError
from podium.core.issues import IssueLog
from podium.core.lazy import LazyModule
from podium.core.parameters import choice, optional_path
from podium.formats import ilsvrc
from podium.formats.folders import single_file
from podium.formats.text import TRUSTED, read_text
from podium.metrics.average_precision import Method, RankedBoxes

if TYPE_CHECKING:
    import numpy as np
    from numpy.typing import NDArray

    from podium.synthetic.demo import Demo
else:
    np = LazyModule("numpy")


@dataclass(frozen=True)
class FineContext:
    ap: Method
    classes: NDArray[np.int64]  # class ids, ascending: the columns of the submission


@dataclass(frozen=True)
class FineItem:
    key: str
    lines: NDArray[np.int64]  # the truth line (from 1) of each box
    truth: NDArray[np.int64]  # class id per box
    classes: NDArray[np.int64]  # class ids, ascending: the columns of the submission
    scores: NDArray[np.float64]  # (boxes, classes)


class Ilsvrc2012Fine(Challenge[FineContext, FineItem, RankedBoxes]):
    """Task 3 (dogs). The task 3 kit is not public; podium defines the files:

    - truth: one line per test box (the organizers give the dog boxes) with its class id;
    - submission: one line per test box, in the truth's order, one real confidence per
      class, classes in ascending id order (the distinct ids of the truth, or ``classes=FILE``).
    """

    id = "ilsvrc2012-fine"
    checked_by_prepare = True  # the confidences are read and checked whole in prepare
    title = "ILSVRC 2012 Task 3: fine-grained classification (dogs), mean average precision"
    rules = (
        "ILSVRC 2012, Task description (image-net.org/challenges/LSVRC/2012), and the development kit's evaluation code"
    )
    parameters = (
        optional_path(
            "classes",
            "file of the class ids, one per line, in column order [default: the truth's ids, ascending]",
            "an existing file",
        ),
        choice(
            "ap",
            "voc",
            "voc = PASCAL VOC 2010+ all-points AP (ties in line order); sklearn = scikit-learn's (ties grouped)",
            ("voc", "sklearn"),
        ),
    )
    scores = (
        ScoreSpec("mean_ap", True, "mean AP over classes with a positive"),
        ScoreSpec("ap", True, "AP of each class, as ap/<class id>; null for a class without a positive", family=True),
    )
    primary = "mean_ap"

    def prepare(
        self, truth: Path, submission: Path, params: dict[str, Any], log: IssueLog
    ) -> Job[FineContext, FineItem]:
        labels = truth_labels(truth)
        if labels.shape[1] != 1:
            raise TruthError(f"truth {truth} must hold exactly one class id per line (one per test box)")
        truth_ids = labels[:, 0]
        classes = _class_list(params["classes"]) if params["classes"] is not None else np.unique(truth_ids)
        unknown = np.setdiff1d(truth_ids, classes)
        if unknown.size:
            raise TruthError(f"truth {truth} has class ids not in the class list: {unknown[:10].tolist()}")
        path = single_file(submission, SUBMISSION_SUFFIXES, log)
        scores = None if path is None else ilsvrc.read_confidences(path, len(truth_ids), len(classes), log)
        items = (
            [FineItem(path.name, np.arange(1, len(truth_ids) + 1), truth_ids, classes, scores)]
            if path is not None and scores is not None
            else []
        )
        return Job(FineContext(params["ap"], classes), items)

    def units(self, truth: Path, params: dict[str, Any]) -> list[str]:
        """The test boxes, named by their truth line: ``1``, ``2``, ..."""
        return [str(n) for n in range(1, len(truth_labels(truth)) + 1)]

    def divide(self, context: FineContext, item: FineItem, split_of: Mapping[str, str]) -> list[tuple[str, FineItem]]:
        """The lines of each split's boxes, truth and confidences alike."""
        return [
            (split, replace(item, lines=item.lines[rows], truth=item.truth[rows], scores=item.scores[rows]))
            for split, rows in rows_by_split([str(n) for n in item.lines.tolist()], split_of)
        ]

    def evaluate_item(self, context: FineContext, item: FineItem) -> ItemResult[RankedBoxes]:
        return ItemResult(RankedBoxes(item.lines, item.truth, item.scores))

    def finalize(
        self, context: FineContext, stats: RankedBoxes, details: dict[str, Any], log: IssueLog
    ) -> tuple[dict[str, float | int | None], dict[str, Any]]:
        values = stats.per_class(context.classes, context.ap)
        defined = values[~np.isnan(values)]
        scores: dict[str, float | int | None] = {"mean_ap": float(defined.mean()) if defined.size else None}
        scores.update(
            {f"ap/{c}": (None if np.isnan(v) else float(v)) for c, v in zip(context.classes.tolist(), values)}
        )
        missing = [c for c, v in zip(context.classes.tolist(), values) if np.isnan(v)]
        if missing:
            log.warning(
                "no_positive", f"classes {missing[:10]} have no test box; their AP is null and left out of the mean"
            )
        return scores, {
            "ap": context.ap,
            "boxes": len(stats.truth),
            "classes": len(context.classes),
            "classes_with_positives": int(defined.size),
        }

    def write_demo(self, folder: Path) -> Demo:
        from podium.synthetic.ilsvrc2012 import write_fine

        return write_fine(folder)


def _class_list(path: Path) -> NDArray[np.int64]:
    try:
        ids = [int(line) for line in read_text(path, TRUSTED).split()]
    except ValueError as exc:
        raise TruthError(f"classes {path} must hold one integer class id per line ({exc})") from None
    if len(set(ids)) != len(ids):
        raise TruthError(f"classes {path} repeats a class id")
    return np.array(sorted(ids), dtype=np.int64)
