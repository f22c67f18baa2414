"""The scripts ``benchmarks/end_to_end.py`` measures podium against (``benchmarks/peers/``) give
podium's numbers: a ratio of times means something only between two programs that agree
(issue 40, goal 1); ``end_to_end.py`` checks the same at the real sizes before it prints a time."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from podium.scoring.engine import evaluate
from podium.synthetic.camera_traps import write_tables
from podium.synthetic.ilsvrc2012 import write_classification

PEERS = Path(__file__).resolve().parents[1] / "benchmarks" / "peers"


def _peer(script: str, truth: Path, submission: Path) -> dict[str, float]:
    done = subprocess.run(
        [sys.executable, str(PEERS / script), str(truth), str(submission)],
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    )
    return json.loads(done.stdout)


@pytest.mark.parametrize("seed", [1, 2])
def test_the_numpy_script_gives_podiums_ilsvrc_errors(tmp_path: Path, seed: int) -> None:
    demo = write_classification(tmp_path, 3000, seed=seed)
    ours = evaluate("ilsvrc2012-cls", demo.truth, demo.submission, scores_only=True).scores
    theirs = _peer("ilsvrc2012_cls.py", demo.truth, demo.submission / "team.txt")
    # podium's error is the exact fraction rounded once; the script's ``1 - mean`` rounds twice
    assert theirs == pytest.approx({f"error@{k}": ours[f"error@{k}"] for k in range(1, 6)}, rel=1e-12, abs=1e-12)


@pytest.mark.parametrize("seed", [1, 2])
def test_the_plain_python_scorer_gives_podiums_camera_trap_points(tmp_path: Path, seed: int) -> None:
    write_tables(tmp_path, 2000, seed=seed, empty_share=0.05, false_per_photo=1.5)
    truth, submission = tmp_path / "truth.tsv", tmp_path / "submission" / "team.tsv"
    ours = evaluate("camera-traps", truth, submission, scores_only=True).scores
    assert _peer("camera_traps.py", truth, submission) == {"points": ours["points"]}
