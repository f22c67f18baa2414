"""podium.evaluate / validate as a library: keyword parameters, typed or as text, and their refusals."""

from __future__ import annotations

from pathlib import Path

import pytest

import podium
from podium.core.errors import TruthError, UsageError


def test_typed_and_text_parameters_are_the_same(tmp_path: Path) -> None:
    demo = podium.demo("glas", tmp_path)
    parts = sorted({p.name[:5] for p in demo.truth.iterdir()})
    typed = podium.evaluate("glas", demo.truth, demo.submission, parts=parts, empty_hausdorff="inf")
    text = podium.evaluate("glas", demo.truth, demo.submission, parts=",".join(parts), empty_hausdorff="inf")
    assert typed.status == "scored" and typed.scores == text.scores
    assert typed.parameters["parts"] == tuple(parts)


def test_refusals(tmp_path: Path) -> None:
    demo = podium.demo("camera-traps", tmp_path)
    with pytest.raises(UsageError, match=r"unknown parameter 'matchin'.*did you mean matching"):
        podium.evaluate("camera-traps", demo.truth, demo.submission, matchin="optimal")
    with pytest.raises(UsageError, match="parameter min_size='zero'"):
        podium.evaluate("camera-traps", demo.truth, demo.submission, min_size="zero")
    with pytest.raises(UsageError, match="unknown challenge"):
        podium.evaluate("camera-trap", demo.truth, demo.submission)
    with pytest.raises(TruthError):
        podium.evaluate("camera-traps", demo.submission, demo.submission)
    broken = tmp_path / "broken.tsv"
    broken.write_text("Name\tBBox\tClass\nIMG_0001.JPG\t0.5 0.5\t1\n")
    rejected = podium.validate("camera-traps", demo.truth, broken)
    assert rejected.status == "rejected" and rejected.errors[0].line == 2 and rejected.errors[0].file == str(broken)


def test_top_k_error_refuses_labels_below_1_rather_than_miscount(shared: Path) -> None:
    """The kit's demo submission on the first 2,000 validation images: 1-based labels give the kit's error; the same labels 0-based
    (torchvision's convention), or a negative label, are refused with the convention named (they scored 0.5665 and raised ZeroDivisionError)."""
    from podium.metrics import top_k_error

    folder = shared / "data" / "ilsvrc2012"
    truth = [int(line) for line in (folder / "ILSVRC2012_validation_ground_truth.txt").read_text().split()[:2000]]
    guesses = [
        [int(v) for v in line.split()] for line in (folder / "demo.val.pred.txt").read_text().splitlines()[:2000]
    ]
    error = top_k_error(truth, guesses)
    assert (
        error
        == sum(t not in row for t, row in zip(truth, guesses)) / len(truth)
        == top_k_error([[t] for t in truth], guesses)
    )
    for y_true, y_guesses in (
        ([t - 1 for t in truth], [[g - 1 for g in row] for row in guesses]),
        ([-1, *truth[1:]], guesses),
    ):
        with pytest.raises(ValueError, match="labels are ILSVRC2012_IDs, 1 to 1000"):
            top_k_error(y_true, y_guesses)
