"""The pixel-level example participant runs end to end under podium run (the budget rule too)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import sandbox_options

EXAMPLE = Path(__file__).resolve().parents[1] / "examples" / "fuzzy_jaccard_thresholds"
pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="the runner reads /proc")


@pytest.fixture(scope="module")
def tiles(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("tiles")
    subprocess.run([sys.executable, str(EXAMPLE / "make_set.py"), str(out), "--images", "4", "--size", "256"], check=True)
    return out


def podium_run(tiles: Path, *extra: str) -> dict:
    command = [sys.executable, "-m", "podium", "run", "fuzzy-jaccard", "--images", str(tiles / "images"),
               "--truth", str(tiles / "truth"), "--json", "-", "--quiet", *sandbox_options(), "--visible", str(EXAMPLE), *extra]  # fmt: skip
    return json.loads(subprocess.run(command, capture_output=True, text=True, check=True).stdout)


def test_threshold_participant_is_scored(tiles: Path) -> None:
    doc = podium_run(tiles, "--command", f"{sys.executable} {EXAMPLE / 'participant.py'}", "--set", "startup_s=20")
    assert doc["status"] == "scored" and doc["run"]["outcome"] == "finished"
    assert doc["run"]["images_processed"] == 4 and doc["scores"]["fuzzy_jaccard"] > 0.4


def test_budget_stops_a_slow_participant_and_scores_what_it_wrote(tiles: Path) -> None:
    # 4 x 0.066 MP at 0.1 MP/s = 2.6 s, plus 1 s to start; the participant needs 3 s per image
    command = f"{sys.executable} {EXAMPLE / 'participant.py'} --slow 3"
    doc = podium_run(tiles, "--command", command, "--set", "rate_mp_s=0.1", "--set", "startup_s=1")
    assert doc["run"]["outcome"] == "timeout" and doc["status"] == "scored"
    assert 1 <= doc["run"]["images_processed"] < 4
    assert any(w["code"] == "missing_images" for w in doc["warnings"])
