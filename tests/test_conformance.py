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

from podium.challenges import IDS, get
from podium.challenges.base import Challenge, ItemResult, Job
from podium.core.issues import IssueLog
from podium.core.parameters import resolve
from podium.core.result import _json_safe, schema
from podium.scoring import engine

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
        expected = _finalize(
            challenge, job, [r.stats for r in results], {i.key: r.details for i, r in zip(job.items, results)}
        )
        expected_units = {unit: row for r in results for unit, row in r.units.items()}
        units = challenge.units(truth, params)
        rng = np.random.default_rng(sum(map(ord, self.challenge_id)))
        for _ in range(TRIALS):
            split_of = {unit: f"g{g}" for unit, g in zip(units, rng.integers(0, GROUPS, len(units)))}
            parts = [
                (item.key, part) for item in job.items for _, part in challenge.divide(job.context, item, split_of)
            ]
            part_results = [(key, challenge.evaluate_item(job.context, part)) for key, part in parts]
            shuffled = [part_results[k][1].stats for k in rng.permutation(len(part_results))]
            details = {
                item.key: challenge.join_details([r.details for key, r in part_results if key == item.key])
                for item in job.items
            }
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
        scores, _ = _finalize(
            challenge, job, [r.stats for r in results], {i.key: r.details for i, r in zip(job.items, results)}
        )
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
        scores, _ = _finalize(
            challenge, job, [r.stats for r in results], {i.key: r.details for i, r in zip(job.items, results)}
        )
        for name in scores:
            challenge.score_spec(name)  # KeyError: an undeclared score
        for spec in challenge.scores:
            variants = [name for name in scores if name.startswith(spec.name + "/")]
            assert bool(variants) if spec.family else spec.name in scores, (
                f"{spec.name} is declared but not reported as declared"
            )
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


# --- readers: each fast path equals its slow path on random valid input --------------------------

READER_SEEDS = range(12)


def _spy(monkeypatch: pytest.MonkeyPatch, module: Any, name: str) -> list[Any]:
    """Record what ``module.name`` returns, so that a test knows its input took the fast path."""
    original, returned = getattr(module, name), []

    def recorded(*args: Any) -> Any:
        returned.append(original(*args))
        return returned[-1]

    monkeypatch.setattr(module, name, recorded)
    return returned


def _decimal(rng: np.random.Generator, low: float, high: float) -> str:
    """A random number as a participant writes it: an integer, a short or a long decimal, or exponent notation."""
    value = rng.uniform(low, high)
    return str(rng.choice([f"{value:.0f}", f"{value:.3f}", repr(float(value)), f"{value:.6e}"]))


@pytest.mark.parametrize("seed", READER_SEEDS)
def test_camera_trap_table_fast_path(seed: int, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from podium.formats import detection_table

    rng = np.random.default_rng(seed)
    photos = [f"IMG_{k:04d}.JPG" for k in range(int(rng.integers(1, 40)))]
    rows = []
    for name in photos:
        for _ in range(int(rng.integers(0, 4))):
            w, h = rng.uniform(0.01, 0.5, 2)
            box = [rng.uniform(w / 2, 1 - w / 2), rng.uniform(h / 2, 1 - h / 2), w, h]
            rows.append(
                f"{name}\t{' '.join(f'{v:.{int(rng.integers(3, 17))}f}' for v in box)}\t{rng.choice(['0', '1', 'True', 'false'])}"
            )
        if rng.random() < 0.2:
            rows.append(f"{name}\t\t")  # a photo without animals
    path = tmp_path / "table.tsv"
    path.write_text("Name\tBBox\tClass\n" + "\n".join(rows) + "\n")
    known = detection_table.Table.of(detection_table._no_boxes(), photos)
    fast_log, slow_log = IssueLog(), IssueLog()
    monkeypatch.setattr(
        detection_table, "_scanned", lambda *args: None
    )  # the compiled way: tests/test_detection_scan.py
    taken = _spy(monkeypatch, detection_table, "_read_clean")
    fast = detection_table.read_table(path, fast_log, known)
    assert taken[0] is not None, "the input did not take the fast path"
    monkeypatch.setattr(detection_table, "_read_clean", lambda *args: None)
    slow = detection_table.read_table(path, slow_log, known)
    assert fast is not None and slow is not None, (fast_log.errors, slow_log.errors)
    for field in ("photo", "xywh", "cls"):
        np.testing.assert_array_equal(getattr(fast.boxes, field), getattr(slow.boxes, field))
    assert list(fast.boxes.texts) == list(slow.boxes.texts) and fast.photos == slow.photos
    assert fast_log.warnings == slow_log.warnings


@pytest.mark.parametrize("seed", READER_SEEDS)
@pytest.mark.parametrize("group", [1, 5])
def test_ilsvrc_guesses_fast_path(seed: int, group: int, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from podium.formats import ilsvrc

    rng = np.random.default_rng(seed)
    n = int(rng.integers(1, 60))
    corner = (
        (lambda: str(int(rng.integers(0, 500)))) if seed % 2 else (lambda: _decimal(rng, 0, 500))
    )  # integers only: NumPy's integer reader
    lines = []
    for _ in range(n):
        guesses = []
        for _ in range(5):
            guesses.append(str(int(rng.integers(1, 1001))))
            if group == 5:
                guesses += [corner() for _ in range(4)]
        lines.append(" ".join(guesses))
    path = tmp_path / "guesses.txt"
    path.write_text("\n".join(lines) + "\n")
    taken = _spy(monkeypatch, ilsvrc, "_clean_labels" if group == 1 else "_full_lines")  # Task 1: from the bytes
    fast = ilsvrc.read_guesses(path, n, group, IssueLog())
    assert taken[0] is not None, "the input did not take the fast path"
    monkeypatch.setattr(ilsvrc, "_clean_labels", lambda *args: None)
    monkeypatch.setattr(ilsvrc, "_full_lines", lambda *args: None)
    slow = ilsvrc.read_guesses(path, n, group, IssueLog())
    assert fast is not None and slow is not None
    np.testing.assert_array_equal(fast.values, slow.values)
    assert fast.lines == slow.lines


@pytest.mark.parametrize("seed", READER_SEEDS)
def test_voc_xml_fast_path(seed: int, monkeypatch: pytest.MonkeyPatch) -> None:
    from podium.formats import ilsvrc

    rng = np.random.default_rng(seed)
    wnids = {f"n{k:08d}": k + 1 for k in range(20)}
    objects = "".join(
        f"<object><name>{rng.choice(list(wnids))}</name><pose>Unspecified</pose><bndbox>"
        + "".join(
            f"<{tag}>{_decimal(rng, 0, 500) if rng.random() < 0.3 else int(rng.integers(0, 500))}</{tag}>"
            for tag in ("xmin", "ymin", "xmax", "ymax")
        )
        + "</bndbox></object>\n"
        for _ in range(int(rng.integers(1, 6)))
    )
    data = f'<?xml version="1.0"?>\n<annotation><folder>val</folder><size><width>500</width></size>\n{objects}</annotation>'.encode()
    slow = _spy(monkeypatch, ilsvrc, "_parse_xml_tree")
    fast = ilsvrc._parse_xml(data, wnids)
    assert not slow, "the input did not take the fast path"
    assert fast == ilsvrc._parse_xml_tree(data, wnids)


@pytest.mark.parametrize("seed", READER_SEEDS)
def test_clustering_csv_fast_path(seed: int, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from podium.formats import clustering_csv
    from podium.synthetic.face_clustering import write_csvs

    rng = np.random.default_rng(seed)
    truth_path, _ = write_csvs(tmp_path, int(rng.integers(2, 80)), 7, seed)
    truth = clustering_csv.read_truth(truth_path)
    order = rng.permutation(len(truth.names)) if rng.random() < 0.5 else np.arange(len(truth.names))
    names = [truth.stems[i] if rng.random() < 0.5 else truth.names[i] for i in order]
    clusters = np.unique(rng.integers(0, 9, len(names)), return_inverse=True)[1] + 1  # numbers 1..K, each used
    path = tmp_path / "team.csv"
    path.write_text("".join(f"{name},{' ' * int(rng.integers(0, 2))}{c}\n" for name, c in zip(names, clusters)))
    monkeypatch.setattr(clustering_csv, "ARROW_BYTES", 0)  # pyarrow at any size
    taken = _spy(monkeypatch, clustering_csv, "_read_clean")
    fast = clustering_csv.read_submission(path, truth, "ignore", IssueLog())
    assert taken and taken[0] is not None, "the input did not take the fast path"
    monkeypatch.setattr(clustering_csv, "_read_clean", lambda *args: None)  # rows through the csv module
    slow = clustering_csv.read_submission(path, truth, "ignore", IssueLog())
    assert fast is not None and slow is not None
    np.testing.assert_array_equal(fast, slow)
