"""Camera-trap photos that floats cannot decide (IoUs exactly at one half, each box written
differently) cost integer arithmetic, not fractions, and a bounded memory of known IoUs."""

from __future__ import annotations

from fractions import Fraction
from typing import Any

import numpy as np
import pytest

from podium.formats.text import TextSpans
from podium.metrics import detection_points
from podium.metrics.detection_boxes import Boxes

SHIFTS = [
    (0.0, 0.0, 0.1, 0.2),
    (0.0, -0.05, 0.2, 0.1),
    (0.0, 0.05, 0.2, 0.1),
    (-0.05, 0.0, 0.1, 0.2),
    (0.05, 0.0, 0.1, 0.2),
]  # IoU 1/2 with a 0.2 square


def _ties(n_photos: int) -> tuple[Boxes, Boxes]:
    """Per photo one 0.2 square and five predictions at IoU exactly 1/2 with it, every text distinct."""
    truth_texts, pred_texts, pred_photo = [], [], []
    for photo in range(n_photos):
        c = 0.3 + photo / 1e6
        truth_texts.append(f"{c:.6f} {c:.6f} 0.2 0.2")
        for k, (dx, dy, w, h) in enumerate(SHIFTS):
            zeros = "0" * ((photo + k) % 3)
            pred_texts.append(f"{c + dx:.6f}{zeros} {c + dy:.6f} {w}{zeros} {h}")
            pred_photo.append(photo)

    def boxes(photo: list[int], texts: list[str]) -> Boxes:
        xywh = np.array([t.split() for t in texts], dtype=np.float64)
        return Boxes(np.array(photo, np.int64), xywh, np.ones(len(texts), np.int8), TextSpans.of(texts))

    return boxes(pred_photo, pred_texts), boxes(list(range(n_photos)), truth_texts)


@pytest.mark.parametrize("compiled", [False, True])
def test_exact_ties_make_one_fraction_a_pair(monkeypatch: pytest.MonkeyPatch, compiled: bool) -> None:
    """0.8.5 parsed each of a pair's eight decimals into a Fraction and computed in fractions
    (17 s for 50,000 photos); now each pair makes one fraction, from integer products."""
    made: list[Any] = []

    class Counted(Fraction):
        def __new__(cls, *args: Any, **kwargs: Any) -> Counted:
            made.append(args)
            return super().__new__(cls, *args, **kwargs)

    monkeypatch.setattr(detection_points, "Fraction", Counted)
    monkeypatch.setattr(detection_points, "_compiled_pays", lambda pred, truth: compiled)
    pred, truth = _ties(200)
    matching = detection_points.greedy_matching(pred, truth)
    assert matching.exact_photos == 200 and (matching.truth_of == -1).all()  # exactly 1/2 never matches
    assert len(made) <= 5 * 200 + 200  # a fraction per pair, and one half per photo


def test_exact_ious_equal_the_fractions_of_the_text(monkeypatch: pytest.MonkeyPatch) -> None:
    """The integers of :meth:`Boxes.exact` give the IoU the boxes' decimals give in fractions, exponents included."""
    rng = np.random.default_rng(7)
    texts = [
        " ".join(
            rng.choice([f"{v:.{rng.integers(0, 9)}f}", f"{v:.3e}", repr(float(v)), f"-{v:.2f}", f"+{v:.1f}"])
            for v in rng.uniform(0.01, 0.9, 4)
        )
        for _ in range(300)
    ]
    boxes = Boxes(np.zeros(300, np.int64), np.zeros((300, 4)), np.zeros(300, np.int8), texts)
    for i in range(0, 300, 2):
        (a, a_over), (b, b_over) = boxes.exact(i), boxes.exact(i + 1)
        assert [Fraction(v, a_over) for v in a] == [Fraction(t) for t in texts[i].split()]
        fractions = [[Fraction(t) for t in texts[k].split()] for k in (i, i + 1)]
        over = a_over * b_over
        assert detection_points.exact_iou(
            [v * b_over for v in a], [v * a_over for v in b]
        ) == detection_points.exact_iou(*fractions), (over, texts[i])


def test_known_ious_stay_bounded(monkeypatch: pytest.MonkeyPatch) -> None:
    """Boxes all written differently would grow the table of known IoUs by a pair each: it is emptied at ``KNOWN_IOUS``."""
    sizes: list[int] = []
    original = detection_points._exact_greedy

    def spied(*args: Any) -> None:
        original(*args)
        sizes.append(len(args[-1]))

    monkeypatch.setattr(detection_points, "KNOWN_IOUS", 40)
    monkeypatch.setattr(detection_points, "_exact_greedy", spied)
    detection_points.greedy_matching(*_ties(100))
    assert len(sizes) == 100 and max(sizes) <= 40 + 5
