"""ILSVRC 2012: ``ilsvrc2012-cls`` (Task 1), ``ilsvrc2012-loc`` (Task 2); ``ilsvrc2012-fine`` (Task 3) is
:mod:`podium.challenges.ilsvrc2012_fine`.

Rules: ``shared/seeds/004_a5a1ad02cdfc0410.txt``; the 2012 development kit's
evaluation code is the reference (:mod:`podium.metrics.imagenet`). Task 3's kit
is not public: podium defines its file format (see :class:`~podium.challenges.ilsvrc2012_fine.Ilsvrc2012Fine`).
"""

from __future__ import annotations

import functools
import sys
from abc import abstractmethod
from collections.abc import Mapping
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar

from podium.challenges.base import Challenge, ItemResult, Job, ScoreSpec, rows_by_split
from podium.core.errors import UsageError
from podium.core.issues import IssueLog
from podium.core.lazy import LazyModule
from podium.core.parameters import choice, optional_path
from podium.formats import ilsvrc, label_tokens
from podium.formats.files import Content
from podium.formats.folders import single_file
from podium.formats.label_tokens import Labels as LabelTable
from podium.formats.text import TRUSTED
from podium.formats.truth_cache import cached
from podium.metrics.imagenet import (
    ErrorCounts,
    K,
    TruthBox,
    classification_errors,
    label_errors,
    localization_errors,
)

if TYPE_CHECKING:
    import numpy as np
    from numpy.typing import NDArray

    from podium.synthetic.demo import Demo
else:
    np = LazyModule("numpy")


SUBMISSION_SUFFIXES = (".txt",)
CHANCE_TOP5_ERROR = 0.99  # 1000 classes: chance is 0.995
SMALL_BYTES = 3 << 20  # the largest Task 1 submission read in plain Python (about 150,000 images): plain_pays


def plain_pays(size: int) -> bool:
    """Whether a clean Task 1 submission of ``size`` bytes is read and scored without NumPy. With the compiled
    reader and kernel (:func:`~podium.formats.label_tokens.label_table`), always: they read, check and count
    at C speed, and NumPy takes their table without a copy where the per-image rows are wanted. In plain
    Python, in a process that has not imported NumPy (a command), up to :data:`SMALL_BYTES`: the import costs
    0.1 s of CPU, which NumPy's readers win back past about 200,000 images (3.9 MB; the crossover measured
    side by side, benchmarks/README.md); a process that has it loaded reads any file faster with it."""
    if label_tokens.compiled_reader():
        return True
    return size <= SMALL_BYTES and "numpy" not in sys.modules


LABELS = choice(
    "labels",
    "ilsvrc",
    "label space of the submission: ilsvrc = ILSVRC2012_IDs 1..1000 (meta.mat order); "
    "wnid-sorted = 0-based indices in sorted-WNID order (deep-learning frameworks), converted with meta=",
    ("ilsvrc", "wnid-sorted"),
)
META = optional_path(
    "meta", "the kit's meta.mat (needed by labels=wnid-sorted and by Task 2)", "the kit's meta.mat file"
)


def image_name(number: int) -> str:
    """The validation image of truth line ``number`` (from 1), as the kit names it, without ``.JPEG``."""
    return f"ILSVRC2012_val_{number:08d}"


def image_names(numbers: NDArray[np.integer]) -> list[str]:
    """:func:`image_name` of each number, taken from a table the process builds once.

    >>> image_names(np.array([2, 50000]))
    ['ILSVRC2012_val_00000002', 'ILSVRC2012_val_00050000']
    """
    names: list[str] = _names_below(1 << int(numbers.max(initial=0)).bit_length())[numbers].tolist()
    return names


@functools.lru_cache(maxsize=1)
def _names_below(count: int) -> NDArray[np.object_]:
    return np.array([image_name(n) for n in range(count)], dtype=object)


@dataclass(frozen=True)
class Item:
    key: str
    numbers: NDArray[np.int64]  # the truth line (from 1) of each image
    truth: NDArray[np.int64]  # (images, labels) padded with -1
    guesses: NDArray[np.float64]  # (images, 5, 1 or 5)
    written: ilsvrc.Guesses  # Task 2: a guess's box as written, for comparisons floats cannot decide
    boxes: list[list[TruthBox]] | None
    sorted_ids: NDArray[np.int64] | None  # ILSVRC2012_ID of each sorted-WNID index, when meta is given


@dataclass(frozen=True)
class Labels:
    """Task 1's clean files read without NumPy (:meth:`Ilsvrc2012Cls._small`): each image's truth label
    and its five guesses (flat, image after image) as the compiled reader's table or the files' tokens,
    and the submission's bytes (mapped: :func:`~podium.formats.files.read_mapped`)."""

    key: str
    truth: LabelTable
    guesses: LabelTable
    data: Content

    def arrays(self) -> Item:
        """The item as the NumPy path reads the same files: for the unit rows and a contest's splits."""
        truth = _label_array(self.truth, np.int64).reshape(-1, 1)
        guesses = _label_array(self.guesses, np.float64).reshape(-1, K, 1)
        numbers = np.arange(1, len(truth) + 1)
        return Item(self.key, numbers, truth, guesses, ilsvrc.Guesses(guesses, bytes(self.data)), None, None)


def _label_array(labels: LabelTable, dtype: type[np.int64] | type[np.float64]) -> NDArray[Any]:
    """Labels (of at most 4 digits: exact as integers and as doubles) as a NumPy array of ``dtype``: the compiled
    reader's table taken without a copy, or the tokens parsed by C (10x np.array of the tokens)."""
    if isinstance(labels, list):
        return np.fromstring(b" ".join(labels), dtype, sep=" ")
    return np.frombuffer(labels, np.uint16).astype(dtype)


def _arrays(item: Item | Labels) -> Item:
    return item.arrays() if isinstance(item, Labels) else item


class _TopK(Challenge[str, Item | Labels, ErrorCounts]):
    """Task 1 and 2: flat error with 1..5 guesses, one line per image."""

    checked_by_prepare = True  # the guesses are read and checked whole in prepare
    group: ClassVar[int]  # numbers per guess
    prefix: ClassVar[str]  # score name prefix

    def prepare(self, truth: Path, submission: Path, params: dict[str, Any], log: IssueLog) -> Job[str, Item | Labels]:
        path = single_file(submission, SUBMISSION_SUFFIXES, log)
        small = None if path is None else self._small(truth, path, params)
        if small is not None:
            return Job(params["labels"], [small])
        matrix = truth_labels(truth)
        ilsvrc.warn_labels_outside(matrix, truth, log)
        meta = (
            cached("ilsvrc.meta", (params["meta"],), lambda: ilsvrc.read_meta(params["meta"]))
            if params["meta"] is not None
            else None
        )
        if params["labels"] == "wnid-sorted" and meta is None:
            raise UsageError("labels=wnid-sorted needs meta=PATH/meta.mat to convert the indices")
        boxes = self._boxes(params, meta, len(matrix))
        read = None if path is None else ilsvrc.read_guesses(path, len(matrix), self.group, log)
        if path is None or read is None:
            return Job(params["labels"], [])
        sorted_ids = meta.id_of_sorted_index() if meta is not None else None
        guesses = _convert(read.values, sorted_ids) if params["labels"] == "wnid-sorted" else read.values  # type: ignore[arg-type]
        numbers = np.arange(1, len(matrix) + 1)
        if params["labels"] == "ilsvrc" and sorted_ids is not None:
            _check_label_space(matrix, guesses, sorted_ids, path.name, log)
        return Job(params["labels"], [Item(path.name, numbers, matrix, guesses, read, boxes, sorted_ids)])

    def units(self, truth: Path, params: dict[str, Any]) -> list[str]:
        """The validation images, one per truth line: ``ILSVRC2012_val_00000001`` and on."""
        return image_names(np.arange(1, len(truth_labels(truth)) + 1))

    def divide(self, context: str, item: Item | Labels, split_of: Mapping[str, str]) -> list[tuple[str, Item | Labels]]:
        """The lines of each split's images, truth, guesses and boxes alike."""
        item = _arrays(item)
        names = image_names(item.numbers)
        return [
            (
                split,
                replace(
                    item,
                    numbers=item.numbers[rows],
                    truth=item.truth[rows],
                    guesses=item.guesses[rows],
                    written=item.written.rows(rows),
                    boxes=None if item.boxes is None else [item.boxes[i] for i in rows.tolist()],
                ),
            )
            for split, rows in rows_by_split(names, split_of)
        ]

    def _boxes(self, params: dict[str, Any], meta: ilsvrc.Synsets | None, n: int) -> list[list[TruthBox]] | None:
        return None

    def _small(self, truth: Path, path: Path, params: dict[str, Any]) -> Labels | None:
        """The files read without NumPy, where the task allows it; ``None``: NumPy's readers read them."""
        return None

    @abstractmethod
    def _errors(self, item: Item, guesses: NDArray[np.float64], per_image: bool = True) -> ErrorCounts:
        """The error counts of ``guesses`` (Task 1: labels; Task 2: labels and boxes), with each image's errors
        unless ``per_image`` is false."""

    def evaluate_item(self, context: str, item: Item | Labels) -> ItemResult[ErrorCounts]:
        item = _arrays(item)
        counts = self._errors(item, item.guesses)
        errors = counts.per_image
        assert not isinstance(errors, tuple)  # NumPy's kernels keep each image's errors
        columns = np.column_stack([np.ones(len(item.numbers)), errors]).T.tolist()
        units = dict(zip(image_names(item.numbers), zip(*columns)))  # rows built by zip, in C
        details = {"images": counts.images, "per_class": _per_class(item.truth[:, 0], errors, self.prefix)}
        return ItemResult(counts, details=details, units=units)

    def score_item(self, context: str, item: Item | Labels) -> ItemResult[ErrorCounts]:
        """The error counts alone: no row per image, no sums per class (50,000 images: 3x less CPU)."""
        if isinstance(item, Labels):
            counts = label_errors(item.truth, item.guesses)
        else:
            counts = self._errors(item, item.guesses, per_image=False)
        return ItemResult(counts, details={"images": counts.images})

    def unit_columns(self, context: str) -> tuple[str, ...]:
        """Per image: 1 (it counts the images), then its error with 1..5 guesses (missed truth labels / truth labels)."""
        return ("images", *(f"{self.prefix}@{k}" for k in range(1, K + 1)))

    def scores_of_sums(self, columns: tuple[str, ...], sums: NDArray[np.float64]) -> dict[str, NDArray[np.float64]]:
        """Mean errors: the sums of the images' errors divided by the number of images."""
        with np.errstate(invalid="ignore", divide="ignore"):
            errors = sums[:, 1:] / sums[:, :1]
        scores = {f"{self.prefix}@{k}": errors[:, k - 1] for k in range(1, K + 1)}
        return scores | {self.primary: errors[:, K - 1]}

    def finalize(
        self, context: str, stats: ErrorCounts, details: dict[str, Any], log: IssueLog
    ) -> tuple[dict[str, float | int | None], dict[str, Any]]:
        scores: dict[str, float | int | None] = {f"{self.prefix}@{k}": stats.error(k) for k in range(1, 6)}
        scores[self.primary] = stats.error(5)
        parts = [d["per_class"] for d in details.values() if "per_class" in d]  # none from score_item
        per_class = self.join_details(parts) if parts else {}
        return scores, {"images": stats.images, "label_space": context, "per_class": per_class}


def truth_labels(truth: Path) -> NDArray[np.int64]:
    """The truth lines' labels (padded with -1), read once per process (:mod:`podium.formats.truth_cache`)."""
    return cached("ilsvrc.truth_labels", (truth,), lambda: ilsvrc.read_truth_labels(truth))


def _per_class(labels: NDArray[np.int64], errors: NDArray[np.float64], prefix: str) -> dict[str, dict[str, float]]:
    """Per true class (an image's first truth label): its images and the sums of their errors with 1..5 guesses.

    One pass over the images (a bincount per number of guesses), not one per class.
    """
    classes, inverse, counts = np.unique(labels, return_inverse=True, return_counts=True)
    sums = np.stack([np.bincount(inverse, weights=errors[:, k], minlength=len(classes)) for k in range(K)], axis=1)
    return {
        str(label): {"images": images} | {f"{prefix}@{k}": value for k, value in enumerate(row, start=1)}
        for label, images, row in zip(classes.tolist(), counts.tolist(), sums.tolist())
    }


def _check_label_space(
    truth: NDArray[np.int64], guesses: NDArray[np.float64], sorted_ids: NDArray[np.int64], key: str, log: IssueLog
) -> None:
    """A warning when the guessed labels are at chance level as ILSVRC2012_IDs but far better read as sorted-WNID indices.

    The labels alone decide (classification error with 5 guesses, boxes aside), once on the
    whole submission, not once per split of a contest nor per item however items are scored.
    """
    as_given = classification_errors(truth, guesses).error(5)
    if as_given < CHANCE_TOP5_ERROR:
        return
    converted = classification_errors(truth, _convert(guesses, sorted_ids)).error(5)
    if converted < as_given - 0.2:
        log.warning(
            "label_space",
            f"the labels' top-5 error {as_given:.4f} is at chance level, but read as 0-based sorted-WNID indices "
            f"they give {converted:.4f}: use --set labels=wnid-sorted if that is what they are",
            key,
        )


def _convert(guesses: NDArray[np.float64], sorted_ids: NDArray[np.int64]) -> NDArray[np.float64]:
    """Labels read as 0-based sorted-WNID indices, turned into ILSVRC2012_IDs (others never match)."""
    converted = guesses.copy()
    labels = guesses[..., 0]
    inside = np.isfinite(labels) & (labels >= 0) & (labels < len(sorted_ids))
    converted[..., 0] = np.nan
    converted[..., 0][inside] = sorted_ids[labels[inside].astype(np.int64)]
    return converted


class Ilsvrc2012Cls(_TopK):
    id = "ilsvrc2012-cls"
    title = "ILSVRC 2012 Task 1: classification, flat top-5 error"
    rules = (
        "ILSVRC 2012, Task description (image-net.org/challenges/LSVRC/2012), and the development kit's evaluation code"
    )
    parameters = (LABELS, META)
    scores = (
        *tuple(ScoreSpec(f"error@{k}", False, f"flat error with {k} guesses") for k in range(1, 6)),
        ScoreSpec("top5_error", False, "= error@5, the challenge's measure"),
        ScoreSpec("top1_error", False, "= error@1"),
    )
    primary = "top5_error"
    group = 1
    prefix = "error"

    def _errors(self, item: Item, guesses: NDArray[np.float64], per_image: bool = True) -> ErrorCounts:
        return classification_errors(item.truth, guesses, per_image)

    def _small(self, truth: Path, path: Path, params: dict[str, Any]) -> Labels | None:
        """The kit's truth and a clean submission, read without NumPy where that pays (:func:`plain_pays`) and scored
        by :func:`~podium.metrics.imagenet.label_errors` (:func:`~podium.formats.ilsvrc.guess_tokens`), with the
        numbers, document and messages of NumPy's path, which reads any other file."""
        try:
            size = path.stat().st_size
        except OSError:  # gone since it was listed: NumPy's reader says so
            return None
        if params["labels"] != "ilsvrc" or params["meta"] is not None or not plain_pays(size):
            return None
        bound = SMALL_BYTES if not label_tokens.compiled_reader() else TRUSTED.max_bytes
        labels = cached("ilsvrc.truth_tokens", (truth,), lambda: ilsvrc.truth_tokens(truth, bound), bound)
        read = None if labels is None else ilsvrc.guess_tokens(path, len(labels))
        return None if labels is None or read is None else Labels(path.name, labels, *read)

    def finalize(
        self, context: str, stats: ErrorCounts, details: dict[str, Any], log: IssueLog
    ) -> tuple[dict[str, float | int | None], dict[str, Any]]:
        scores, summary = super().finalize(context, stats, details, log)
        scores["top1_error"] = stats.error(1)
        return scores, summary

    def scores_of_sums(self, columns: tuple[str, ...], sums: NDArray[np.float64]) -> dict[str, NDArray[np.float64]]:
        scores = super().scores_of_sums(columns, sums)
        return scores | {"top1_error": scores["error@1"]}

    def write_demo(self, folder: Path) -> Demo:
        from podium.synthetic.ilsvrc2012 import write_classification

        return write_classification(folder)


class Ilsvrc2012Loc(_TopK):
    id = "ilsvrc2012-loc"
    title = "ILSVRC 2012 Task 2: classification with localization, flat top-5 error at IoU >= 0.5"
    rules = (
        "ILSVRC 2012, Task description (image-net.org/challenges/LSVRC/2012), and the development kit's evaluation code"
    )
    parameters = (
        optional_path(
            "boxes",
            "the validation boxes: a folder of VOC XML files or the official .tgz/.tar (required)",
            "an existing folder of XML files or .tgz/.tar archive",
        ),
        META,
        LABELS,
    )
    scores = (
        *tuple(ScoreSpec(f"loc_error@{k}", False, f"localization error with {k} guesses") for k in range(1, 6)),
        ScoreSpec("loc_error", False, "= loc_error@5, the challenge's measure"),
    )
    primary = "loc_error"
    group = 5
    prefix = "loc_error"

    def _boxes(self, params: dict[str, Any], meta: ilsvrc.Synsets | None, n: int) -> list[list[TruthBox]]:
        if params["boxes"] is None or meta is None:
            raise UsageError("ilsvrc2012-loc needs --set boxes=PATH (XML folder or .tgz) and --set meta=PATH/meta.mat")
        return cached(
            "ilsvrc.val_boxes",
            (params["boxes"], params["meta"]),
            lambda: ilsvrc.read_val_boxes(params["boxes"], n, meta.id_of_wnid),
            n,
        )

    def _errors(self, item: Item, guesses: NDArray[np.float64], per_image: bool = True) -> ErrorCounts:
        assert item.boxes is not None
        return localization_errors(item.truth, guesses, item.boxes, item.written.exact_corners, per_image)

    def write_demo(self, folder: Path) -> Demo:
        from podium.synthetic.ilsvrc2012 import write_localization

        return write_localization(folder)
