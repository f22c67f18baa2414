"""The organizers' scoring code, transcribed line for line into Python: the baseline when Octave is absent.

GlaS (MICCAI 2015), evaluation v6 by K. Sirinukunwattana (``F1score.m``, ``ObjectDice.m``,
``ObjectHausdorff.m``, from evaluation_v6.zip on the GlaS contest site):

- Every object is an ``S == label`` mask of the whole image; its partner is the ``mode`` of the
  other side's labels under it (the smallest on ties, as MATLAB's ``mode``), background dropped.
- ``Hausdorff(A, B)``: the image's pixel coordinates masked by A and by B, then
  ``knnsearch`` both ways (a k-d tree in MATLAB for two columns; SciPy's ``cKDTree`` here), the
  larger of the two largest nearest distances. An object that overlaps nothing takes the
  other side's object with the smallest such distance (the first on ties, as ``min``).
- ``F1score``: TP are segmented objects covering more than half of their partner; FP the other
  segmented objects; FN, in this code, the ground-truth objects that are nobody's partner. (The
  rules' text, which podium follows, also counts as FN a partner covered by half or less: the
  two F1 differ only when some segmented object is a false positive that has a partner.)

ILSVRC 2012 development kit, ``evaluation/eval_flat.m`` (Task 1): ``dlmread`` both files, pad the
guesses with a 0 column, and per image ``min over guesses of (truth ~= guess)``, averaged.

These functions are deliberately as slow as the code they transcribe: the per-object loops and
whole-image masks are the point of comparison. ``tests/test_official_transcription.py`` checks them
against podium.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
from numpy.typing import NDArray
from scipy.spatial import cKDTree


def _labels(image: NDArray[np.integer]) -> NDArray[np.float32]:
    """``unique(single(S))`` without the background, as the code converts every label image to single."""
    values = np.unique(image.astype(np.float32))
    return values[values != 0]


def _mode(values: NDArray[np.float32]) -> np.float32:
    """MATLAB's ``mode``: the most frequent value, the smallest on ties."""
    uniques, counts = np.unique(values, return_counts=True)
    return uniques[np.argmax(counts)]


def hausdorff(a: NDArray[np.bool_], b: NDArray[np.bool_]) -> float:
    """``Hausdorff(S, G)`` of the v6 code: 0 if both are empty, infinity if one is."""
    if not a.any() and not b.any():
        return 0.0
    if not a.any() or not b.any():
        return float("inf")
    x, y = np.argwhere(b).astype(np.float64), np.argwhere(a).astype(np.float64)
    dist1 = cKDTree(y).query(x)[0].max()  # knnsearch(y, x)
    dist2 = cKDTree(x).query(y)[0].max()  # knnsearch(x, y)
    return float(max(dist1, dist2))


def f1_score(s: NDArray[np.integer], g: NDArray[np.integer]) -> float:
    """``F1score(S, G)``."""
    seg, gt = s.astype(np.float32), g.astype(np.float32)
    list_s, list_g = _labels(s), _labels(g)
    if not list_s.size and not list_g.size:
        return 1.0
    if not list_s.size or not list_g.size:
        return 0.0
    partner = np.zeros(len(list_s), dtype=np.float32)
    for i, label in enumerate(list_s):
        under = gt[seg == label]
        under = under[under != 0]
        if under.size:
            partner[i] = _mode(under)  # histc then max: the first, i.e. smallest, most frequent label
    tp = 0
    for i, label in enumerate(list_s):
        if partner[i] != 0:
            overlap = np.sum((seg == label) & (gt == partner[i]))
            tp += overlap / np.sum(gt == partner[i]) > 0.5
    fp = len(list_s) - tp
    fn = len(np.setdiff1d(list_g, partner[partner != 0]))
    with np.errstate(invalid="ignore", divide="ignore"):  # 0/0 is NaN, as in MATLAB
        precision, recall = np.float64(tp) / (tp + fp), np.float64(tp) / (tp + fn)
        return float(2 * precision * recall / (precision + recall))


def _object_mean(s: NDArray[np.integer], g: NDArray[np.integer], term, alone) -> float:  # type: ignore[no-untyped-def]
    """``(temp1 + temp2) / 2`` of ObjectDice and ObjectHausdorff: each side's objects, area-weighted."""
    seg, gt = s.astype(np.float32), g.astype(np.float32)
    total = 0.0
    for own, other in ((seg, gt), (gt, seg)):
        own_area = np.sum(own > 0)
        side = 0.0
        for label in _labels(own):
            mask = own == label
            under = other[mask]
            under = under[under != 0]
            partner = other == _mode(under) if under.size else alone(mask, other)
            side += np.sum(mask) / own_area * term(mask, partner)
        total += side
    return total / 2


def object_dice(s: NDArray[np.integer], g: NDArray[np.integer]) -> float:
    """``ObjectDice(S, G)``: an object that overlaps nothing is compared with an empty mask (Dice 0)."""
    if not _labels(s).size and not _labels(g).size:
        return 1.0
    if not _labels(s).size or not _labels(g).size:
        return 0.0
    return _object_mean(
        s, g, lambda a, b: 2 * np.sum(a & b) / (np.sum(a) + np.sum(b)), lambda mask, other: np.zeros_like(mask)
    )


def object_hausdorff(s: NDArray[np.integer], g: NDArray[np.integer]) -> float:
    """``ObjectHausdorff(S, G)``: an object that overlaps nothing takes the other side's nearest object."""

    def nearest(mask: NDArray[np.bool_], other: NDArray[np.float32]) -> NDArray[np.bool_]:
        labels = _labels(other)
        distances = [hausdorff(other == label, mask) for label in labels]
        return other == labels[int(np.argmin(distances))]

    return _object_mean(s, g, lambda a, b: hausdorff(b, a), nearest)


def eval_flat(predict_file: Path, gtruth_file: Path, max_num_pred_per_image: int) -> float:
    """``eval_flat.m`` of the ILSVRC 2012 kit: the flat error with the first ``max_num_pred_per_image`` guesses."""
    pred = np.loadtxt(predict_file, ndmin=2)
    gt = np.loadtxt(gtruth_file, ndmin=2)
    pred = pred[:, :max_num_pred_per_image]
    assert pred.shape[0] == gt.shape[0]
    pred = np.column_stack([pred, np.zeros(pred.shape[0])])
    c = np.zeros(pred.shape[0])
    for j in range(gt.shape[1]):
        c += np.min(gt[:, j : j + 1] != pred, axis=1)
    n = np.sum(gt != 0, axis=1)
    return float(np.sum(c / n) / pred.shape[0])
