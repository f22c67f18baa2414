"""Metric kernels on NumPy arrays: a one-shot function per score on in-memory arrays, and mergeable statistics.

No I/O. The loops NumPy cannot express in few passes (GlaS: :mod:`~podium.metrics.label_scan`) are compiled with Numba;
the camera-trap matching's float decisions are compiled too (:mod:`~podium.metrics.detection_matching`), beside
their NumPy version for processes without Numba.

The one-shot functions, in scikit-learn style (each module documents its formulas and conventions):

- fuzzy Jaccard (:mod:`~podium.metrics.fuzzy_jaccard`): :func:`fuzzy_jaccard_score`;
- clustering (:mod:`~podium.metrics.clustering`): :func:`pairwise_f_score`, :func:`bcubed_f_score`, :func:`nmi_score`;
- GlaS objects (:mod:`~podium.metrics.object_segmentation`): :func:`object_f1_score`,
  :func:`object_dice_score`, :func:`object_hausdorff_distance`;
- camera-trap points (:mod:`~podium.metrics.detection_points`): :func:`point_counts`, :func:`camera_trap_score`;
- ILSVRC (:mod:`~podium.metrics.imagenet`): :func:`top_k_error`, :func:`localization_error`;
- average precision (:mod:`~podium.metrics.average_precision`): :func:`average_precision_score`.

Each is imported on first use, so that ``import podium.metrics`` stays cheap.

>>> from podium import metrics
>>> metrics.top_k_error([3, 7], [[3, 1], [1, 7]], k=1)
0.5
"""

from __future__ import annotations

from importlib import import_module
from typing import TYPE_CHECKING, Any

_WHERE = {
    "fuzzy_jaccard_score": "fuzzy_jaccard",
    "pairwise_f_score": "clustering",
    "bcubed_f_score": "clustering",
    "nmi_score": "clustering",
    "object_f1_score": "object_segmentation",
    "object_dice_score": "object_segmentation",
    "object_hausdorff_distance": "object_segmentation",
    "point_counts": "detection_points",
    "camera_trap_score": "detection_points",
    "top_k_error": "imagenet",
    "localization_error": "imagenet",
    "average_precision_score": "average_precision",
}
__all__ = [
    "average_precision_score",
    "bcubed_f_score",
    "camera_trap_score",
    "fuzzy_jaccard_score",
    "localization_error",
    "nmi_score",
    "object_dice_score",
    "object_f1_score",
    "object_hausdorff_distance",
    "pairwise_f_score",
    "point_counts",
    "top_k_error",
]

if TYPE_CHECKING:
    from podium.metrics.average_precision import average_precision_score
    from podium.metrics.clustering import bcubed_f_score, nmi_score, pairwise_f_score
    from podium.metrics.detection_points import camera_trap_score, point_counts
    from podium.metrics.fuzzy_jaccard import fuzzy_jaccard_score
    from podium.metrics.imagenet import localization_error, top_k_error
    from podium.metrics.object_segmentation import object_dice_score, object_f1_score, object_hausdorff_distance


def __getattr__(name: str) -> Any:
    if name not in _WHERE:
        raise AttributeError(f"module 'podium.metrics' has no attribute {name!r}")
    return getattr(import_module(f"podium.metrics.{_WHERE[name]}"), name)


def __dir__() -> list[str]:
    return sorted({*globals(), *__all__})
