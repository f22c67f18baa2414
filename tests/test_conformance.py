"""The conformance suite: what every challenge must satisfy, checked the same way for each.

A challenge joins by a subclass of :class:`ChallengeConformance` naming its id
(a test below fails for a registered challenge without one). The cases are the
challenge's demo; a subclass may override :meth:`ChallengeConformance.case`.

- Merging: the items cut into random groups of units (:meth:`Challenge.divide`)
  and their statistics merged in a random order give exactly the scores and
  details of the whole, and the same unit rows.
- Unit rows: their column sums, given to :meth:`Challenge.scores_of_sums`, give
  the scores :meth:`Challenge.finalize` gives (the bootstrap's formulas are the
  challenge's).
- Score keys: each is a declared score (or ``declared/<variant>``), and each
  declared score appears.
- The document: strict JSON (no NaN, no infinity), valid against the schema, in
  full and public views, with a split.
"""

from __future__ import annotations

import json
import math
from functools import reduce
from pathlib import Path
from typing import Any

import jsonschema
import numpy as np
import pytest

from podium import engine
from podium.challenges import IDS, get
from podium.challenges.base import Challenge, ItemResult, Job
from podium.issues import IssueLog
from podium.parameters import resolve
from podium.result import _json_safe, schema

TRIALS = 4  # random groupings per challenge
GROUPS = 4


class ChallengeConformance:
    challenge_id: str

    @pytest.fixture(scope="class")
    @classmethod
    def case(cls, tmp_path_factory: pytest.TempPathFactory) -> tuple[Challenge, Path, Path, dict[str, Any]]:
        """The challenge, a truth, a submission and the resolved parameters (by default its demo)."""
        challenge = get(cls.challenge_id)
        demo = challenge.write_demo(tmp_path_factory.mktemp(cls.challenge_id))
        return challenge, demo.truth, demo.submission, resolve(challenge.parameters, demo.settings)

    @pytest.fixture(scope="class")
    @classmethod
    def whole(cls, case: tuple[Challenge, Path, Path, dict[str, Any]]) -> tuple[Job, list[ItemResult[Any]]]:
        challenge, truth, submission, params = case
        log = IssueLog()
        job = challenge.prepare(truth, submission, params, log)
        assert job.items and not log.errors, "the case must be a valid submission"
        return job, [challenge.evaluate_item(job.context, item) for item in job.items]

    def test_random_parts_merge_to_the_whole(self, case, whole) -> None:
        challenge, truth, _, params = case
        job, results = whole
        expected = _finalize(challenge, job, [r.stats for r in results], {i.key: r.details for i, r in zip(job.items, results)})
        expected_units = {unit: row for r in results for unit, row in r.units.items()}
        units = challenge.units(truth, params)
        rng = np.random.default_rng(sum(map(ord, self.challenge_id)))
        for _ in range(TRIALS):
            split_of = {unit: f"g{g}" for unit, g in zip(units, rng.integers(0, GROUPS, len(units)))}
            parts = [(item.key, part) for item in job.items for _, part in challenge.divide(job.context, item, split_of)]
            part_results = [(key, challenge.evaluate_item(job.context, part)) for key, part in parts]
            shuffled = [part_results[k][1].stats for k in rng.permutation(len(part_results))]
            details = {item.key: challenge.join_details([r.details for key, r in part_results if key == item.key]) for item in job.items}
            assert _finalize(challenge, job, shuffled, details) == expected
            assert {unit: row for _, r in part_results for unit, row in r.units.items()} == expected_units

    def test_unit_rows_give_the_scores(self, whole) -> None:
        job, results = whole
        challenge = get(self.challenge_id)
        columns = challenge.unit_columns(job.context)
        if not columns:  # no bootstrap: then no formula from sums either
            with pytest.raises(NotImplementedError):
                challenge.scores_of_sums(columns, np.zeros((1, 0)))
            return
        rows = np.array([row for r in results for row in r.units.values()], dtype=np.float64)
        assert rows.shape[1] == len(columns)
        from_sums = challenge.scores_of_sums(columns, rows.sum(axis=0, keepdims=True))
        scores, _ = _finalize(challenge, job, [r.stats for r in results], {i.key: r.details for i, r in zip(job.items, results)})
        assert from_sums, "scores_of_sums gives no score"
        for name, values in from_sums.items():
            value = float(values[0])
            assert name in scores
            if scores[name] is None:
                assert math.isnan(value), name
            else:
                assert value == pytest.approx(scores[name], rel=1e-12, abs=1e-12), name

    def test_score_keys_are_the_declared_scores(self, case, whole) -> None:
        challenge = case[0]
        job, results = whole
        scores, _ = _finalize(challenge, job, [r.stats for r in results], {i.key: r.details for i, r in zip(job.items, results)})
        for name in scores:
            challenge.score_spec(name)  # KeyError: an undeclared score
        for spec in challenge.scores:
            variants = [name for name in scores if name.startswith(spec.name + "/")]
            assert (bool(variants) if spec.family else spec.name in scores), f"{spec.name} is declared but not reported as declared"
        assert challenge.primary in scores

    def test_document_is_strict_json_and_valid(self, case) -> None:
        challenge, truth, submission, params = case
        units = challenge.units(truth, params)
        split_of = {unit: ("public" if k % 2 else "private") for k, unit in enumerate(units)}
        settings = {p.name: _text(params[p.name]) for p in challenge.parameters if params[p.name] != p.default}
        result = engine.evaluate(self.challenge_id, truth, submission, settings, split_of=split_of)
        assert result.status == "scored", result.errors
        for public in (False, True):
            document = json.loads(result.to_json(public=public), parse_constant=_refuse)
            jsonschema.validate(document, schema())


def _finalize(challenge: Challenge, job: Job, stats: list[Any], details: dict[str, Any]) -> tuple[Any, Any]:
    scores, summary = challenge.finalize(job.context, reduce(lambda a, b: a.merge(b), stats), details, IssueLog())
    return _json_safe(scores), _json_safe(summary)


def _text(value: Any) -> str:
    return ",".join(value) if isinstance(value, tuple) else str(value)


def _refuse(constant: str) -> None:
    raise AssertionError(f"the document holds {constant}")


class TestFuzzyJaccard(ChallengeConformance):
    challenge_id = "fuzzy-jaccard"


class TestFaceClustering(ChallengeConformance):
    challenge_id = "face-clustering"


class TestGlaS(ChallengeConformance):
    challenge_id = "glas"


class TestCameraTraps(ChallengeConformance):
    challenge_id = "camera-traps"


class TestIlsvrcCls(ChallengeConformance):
    challenge_id = "ilsvrc2012-cls"


class TestIlsvrcLoc(ChallengeConformance):
    challenge_id = "ilsvrc2012-loc"


class TestIlsvrcFine(ChallengeConformance):
    challenge_id = "ilsvrc2012-fine"


def test_every_challenge_is_checked() -> None:
    checked = {cls.challenge_id for cls in ChallengeConformance.__subclasses__()}
    assert checked == set(IDS)
