"""Checks that check, not score: a checks-only run (``podium validate``, the service's upload
checks) reads and checks every file as the scoring does, computes no metric, and accepts or
rejects what the full evaluation accepts or rejects, but GlaS's work bound (see below)."""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

import pytest

from podium.challenges import IDS, get
from podium.challenges.base import Challenge
from podium.core.errors import PodiumError
from podium.core.result import REJECTED, Result
from podium.scoring.engine import evaluate
from podium.testing.hostile import make_case

# GlaS's work bound (labels scattered as noise) shows only while the distances are computed: such a
# pair passes the checks and its scoring rejects it (the memory bound, checked before, stays a check).
WORK_BOUND = "its objects are scattered in pieces"
CASES = 24  # submission-side hostile cases per challenge (the corpus of tests/test_fuzzed_inputs.py)


@pytest.mark.parametrize("challenge", IDS)
def test_checks_only_computes_no_metric(tmp_path: Path, challenge: str, monkeypatch: pytest.MonkeyPatch) -> None:
    demo = get(challenge).write_demo(tmp_path / "demo")
    cls = type(get(challenge))
    scored: list[str] = []

    def counting(method: str) -> Any:
        original = getattr(cls, method)

        def counted(self: Challenge, *args: Any) -> Any:
            scored.append(method)
            return original(self, *args)

        return counted

    for method in ("evaluate_item", "finalize"):
        monkeypatch.setattr(cls, method, counting(method))
    checked = evaluate(challenge, demo.truth, demo.submission, demo.settings, checks_only=True)
    assert checked.status != REJECTED and not checked.errors and scored == []
    full = evaluate(challenge, demo.truth, demo.submission, demo.settings)
    assert "evaluate_item" in scored and "finalize" in scored  # the counter counts
    assert [w.code for w in checked.warnings] == [w.code for w in full.warnings]


def _answer(
    challenge: str, truth: Path, submission: Path, settings: dict[str, str], checks_only: bool
) -> tuple[str, Any]:
    """Accepted or rejected, with every problem (code, file, message); or the error an organizer gets."""
    try:
        result: Result = evaluate(challenge, truth, submission, settings, checks_only=checks_only)
    except PodiumError as exc:
        return "error", (type(exc).__name__, str(exc))
    accepted = "rejected" if result.status == REJECTED else "accepted"
    return accepted, [(i.code, i.file, i.message) for i in result.errors]


@pytest.mark.parametrize("challenge", IDS)
def test_checks_answer_as_the_full_evaluation_on_the_fuzz_corpus(tmp_path: Path, challenge: str) -> None:
    demo = get(challenge).write_demo(tmp_path / "demo")
    compared = 0
    for number in range(CASES * 2):
        case = make_case(challenge, demo, tmp_path / f"case{number}", number, big_mb=1)
        if case.side == "submission" and compared < CASES:
            args = case.args
            truth, submission = Path(args[args.index("--truth") + 1]), Path(args[args.index("--submission") + 1])
            settings = dict(args[i + 1].split("=", 1) for i, a in enumerate(args) if a == "--set")
            full = _answer(challenge, truth, submission, settings, checks_only=False)
            checked = _answer(challenge, truth, submission, settings, checks_only=True)
            if full[0] == "rejected" and all(message.startswith(WORK_BOUND) for _, _, message in full[1]):
                assert checked == ("accepted", []), f"#{number} {case.kind} {case.target}"  # the scoring refuses it
            else:
                assert checked == full, f"#{number} {case.kind} {case.target}"
            compared += 1
        shutil.rmtree(tmp_path / f"case{number}", ignore_errors=True)
    assert compared >= CASES // 2
