"""podium.evaluate / validate as a library: keyword parameters, typed or as text, and their refusals."""

from __future__ import annotations

from pathlib import Path

import pytest

import podium
from podium.errors import TruthError, UsageError


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
