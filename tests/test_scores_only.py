"""A run that shows only the scores (``podium evaluate`` without ``--json``): the same scores, splits
and problems as the full evaluation, without its unit table, and a command that loads nothing it
does not run (issue 40, goal 1)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from podium.challenges import IDS, get
from podium.core.parameters import resolve
from podium.core.result import Result
from podium.scoring.engine import evaluate

NO_UNIT_STATISTICS = {"face-clustering", "ilsvrc2012-fine"}  # their scores are not sums over units


def _shown(result: Result) -> tuple[object, ...]:
    """What the table and the problem listing show."""
    splits = {
        name: (split.units, json.dumps(split.scores), [(i.code, i.message) for i in split.warnings])
        for name, split in (result.splits or {}).items()
    }
    problems = [(i.code, i.file, i.line, i.message) for i in result.errors + result.warnings + result.score_warnings]
    return result.status, json.dumps(result.scores, sort_keys=True), splits, problems


@pytest.mark.parametrize("challenge", IDS)
@pytest.mark.parametrize("split", [False, True])
def test_scores_only_shows_what_the_full_evaluation_shows(tmp_path: Path, challenge: str, split: bool) -> None:
    demo = get(challenge).write_demo(tmp_path / "demo")
    units = get(challenge).units(demo.truth, resolve(get(challenge).parameters, demo.settings))
    split_of = {unit: ("public" if k % 3 else "private") for k, unit in enumerate(units)} if split else None
    full = evaluate(challenge, demo.truth, demo.submission, demo.settings, split_of=split_of)
    lean = evaluate(challenge, demo.truth, demo.submission, demo.settings, split_of=split_of, scores_only=True)
    assert _shown(lean) == _shown(full)
    assert lean.units is None and (full.units is None) == (challenge in NO_UNIT_STATISTICS)
    assert {**lean.signature, "created": None} == {**full.signature, "created": None}


LOADED = """import json, runpy, sys
sys.argv = ["podium", *sys.argv[1:]]
try:
    runpy.run_module("podium", run_name="__main__")
except SystemExit:
    pass
print("--- modules ---", json.dumps(sorted(sys.modules)), file=sys.stderr)
"""


def test_the_command_loads_no_pool_no_contest_reader_no_archive_module(tmp_path: Path) -> None:
    """A table challenge scored in this process: no multiprocessing, no contest reader, no tarfile or zipfile (0.1 s of CPU)."""
    demo = get("ilsvrc2012-cls").write_demo(tmp_path / "demo")
    done = subprocess.run(
        [
            sys.executable,
            "-c",
            LOADED,
            "evaluate",
            "ilsvrc2012-cls",
            "--truth",
            str(demo.truth),
            "--submission",
            str(demo.submission),
        ],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert "top5_error" in done.stdout, done.stderr
    modules = set(json.loads(done.stderr.rpartition("--- modules ---")[2]))
    unneeded = {"multiprocessing", "concurrent.futures.process", "podium.contest.definition", "tarfile", "zipfile"}
    unneeded |= {"podium.runner.disk", "subprocess", "fractions", "decimal"}  # run's limits, Task 2's corners
    assert not modules & unneeded, sorted(modules & unneeded)
