"""The engine (and the result document, for details) checks the challenge contract and names the rule a challenge broke."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from podium.challenges.base import Challenge, ItemResult, Job, ScoreSpec
from podium.core.errors import ContractError
from podium.core.issues import Issue, IssueLog
from podium.metrics.state import Statistics, summed
from podium.scoring import engine
from podium.synthetic.demo import Demo


@dataclass(frozen=True)
class Count(Statistics):
    n: int = summed()


@dataclass(frozen=True)
class Item:
    key: Any


@dataclass
class Toy(Challenge[str, Item, Count]):
    """A challenge of one item per line of the submission; ``flaw`` names the rule it breaks."""

    flaw: str = ""
    id = "toy"
    title = "toy"
    rules = ""
    parameters = ()
    scores = (ScoreSpec("n", True, "items"),)
    primary = "n"
    keys: list[Any] = field(default_factory=lambda: ["a", "b"])

    def prepare(self, truth: Path, submission: Path, params: dict[str, Any], log: IssueLog) -> Job[str, Item]:
        keys = {"key": [1, "b"], "repeated": ["a", "a"], "empty": []}.get(self.flaw, self.keys)
        return Job(str(truth), [Item(k) for k in keys])

    def evaluate_item(self, context: str, item: Item) -> ItemResult[Count]:
        if self.flaw == "truth" and item.key == "b":
            return ItemResult(Count(), errors=[Issue("bad", "broken", str(Path(context) / "b.png"))])
        details = {"seen": {item.key}} if self.flaw == "details" else {"seen": [item.key]}
        units = {item.key: (1.0, 2.0) if self.flaw == "units" else (1.0,)}
        return ItemResult(Count(1), details=details, units=units)

    def finalize(
        self, context: str, stats: Count, details: dict[str, Any], log: IssueLog
    ) -> tuple[dict[str, float | int | None], dict[str, Any]]:
        return {"n": stats.n}, {"per_item": details}

    def unit_columns(self, context: str) -> tuple[str, ...]:
        return ("n",)

    def write_demo(self, folder: Path) -> Demo:
        raise NotImplementedError

    def units(self, truth: Path, params: dict[str, Any]) -> list[str]:
        return ["a", "b"]


@pytest.fixture
def files(tmp_path: Path) -> tuple[Path, Path]:
    (tmp_path / "truth").mkdir()
    (tmp_path / "submission.txt").write_text("a\nb\n")
    return tmp_path / "truth", tmp_path / "submission.txt"


def test_a_challenge_that_keeps_the_contract_is_scored(
    files: tuple[Path, Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(engine, "get", lambda _: Toy())
    result = engine.evaluate("toy", *files)
    assert result.status == "scored" and result.scores == {"n": 2}


@pytest.mark.parametrize(
    ("flaw", "message"),
    [
        ("key", "every item must have a str key"),
        ("repeated", "item keys must be unique ('a' is repeated)"),
        ("empty", "prepare planned no item and logged no error"),
        ("truth", "reports a problem of the truth"),
        ("units", "unit row without one value per unit column"),
    ],
)
def test_each_broken_rule_is_named(
    flaw: str, message: str, files: tuple[Path, Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(engine, "get", lambda _: Toy(flaw))
    with pytest.raises(ContractError, match=f"^toy: .*{re.escape(message)}"):
        engine.evaluate("toy", *files)


def test_details_that_are_not_json_are_refused_by_the_document(
    files: tuple[Path, Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(engine, "get", lambda _: Toy("details"))
    result = engine.evaluate("toy", *files)
    with pytest.raises(ContractError, match=r"^toy: the details are not JSON \(a set is not JSON\)"):
        result.to_json()
