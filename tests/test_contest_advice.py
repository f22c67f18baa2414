"""``podium contest check`` warns of a part with no unit in a split and of a time limit below the rules' disqualification time."""

from __future__ import annotations

import json
from pathlib import Path

from click.testing import CliRunner

from podium.challenges import get
from podium.cli import cli

PHASE = '[[phase]]\nname = "one"\nstart = 2026-01-01T00:00:00Z\nend = 2026-02-01T00:00:00Z\nsubmissions = "{kind}"\n'


def _check(folder: Path, text: str) -> tuple[int, dict, str]:
    path = folder / "contest.toml"
    path.write_text(text)
    as_json = CliRunner().invoke(cli, ["contest", "check", str(path), "--json"])
    shown = CliRunner().invoke(cli, ["contest", "check", str(path)])
    return as_json.exit_code, json.loads(as_json.stdout), shown.output


def test_a_part_with_no_image_in_a_split(tmp_path: Path) -> None:
    demo = get("glas").write_demo(tmp_path / "demo")
    (tmp_path / "public.txt").write_text("testA_1\ntestA_2\n")
    head = (
        f'id = "g"\ntitle = "G"\nchallenge = "glas"\ntruth = "{demo.truth}"\n[parameters]\nparts = ["testA", "testB"]\n'
    )
    code, summary, shown = _check(tmp_path, head + '[split]\npublic_list = "public.txt"\n' + PHASE.format(kind="files"))
    assert code == 0
    assert summary["warnings"] == [
        "part testB has no unit in the public split: its scores there are none for every team"
    ]
    assert "warning: part testB has no unit in the public split" in shown
    code, summary, _ = _check(tmp_path, head + "[split]\npublic = 0.5\nseed = 7\n" + PHASE.format(kind="files"))
    assert code == 0 and summary["warnings"] == []  # the drawn half holds both parts here
    code, summary, _ = _check(tmp_path, head + PHASE.format(kind="files"))
    assert code == 0 and summary["warnings"] == []  # no split


def test_a_time_limit_below_the_disqualification_time(tmp_path: Path) -> None:
    demo = get("face-clustering").write_demo(tmp_path / "demo")
    text = (
        f'id = "f"\ntitle = "F"\nchallenge = "face-clustering"\ntruth = "{demo.truth}"\nimages = "{demo.truth.parent / "images"}"\n'
        "[parameters]\nth1_s = 60\nth2_s = 120\nram_max_mb = 4096\n"
        + PHASE.format(kind="programs")
        + "[limits]\nmemory_mb = 2048\ntime_s = {time_s}\n"
    )
    code, summary, shown = _check(tmp_path, text.format(time_s=30))
    assert code == 0 and "warning: [limits] time_s = 30 is below th2_s = 120" in shown
    assert summary["warnings"] == [
        "[limits] time_s = 30 is below th2_s = 120: a program is stopped first, so the rules' disqualification time is never reached"
    ]
    assert _check(tmp_path, text.format(time_s=120))[1]["warnings"] == []
