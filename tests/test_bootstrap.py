"""Unit statistics and the paired bootstrap of ``podium rank --bootstrap``.

The unit rows of every challenge that has them must give back the document's
scores exactly when summed (whole test set and each split), and a bootstrap
resample must equal scoring the resampled test set by the challenge's own
metric code (an independent path: ``ErrorCounts`` counts in fractions).
"""

from __future__ import annotations

import json
import math
import random
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner

from podium.challenges import IDS, get
from podium.cli import cli
from podium.core.parameters import resolve
from podium.metrics.imagenet import classification_errors
from podium.ranking.bootstrap import CHUNK, bootstrap, ranks_of, resamplable
from podium.ranking.documents import Units
from podium.ranking.ranks import Team, rank_teams
from podium.scoring.engine import evaluate

RESAMPLABLE = [i for i in IDS if resamplable(get(i))]


@pytest.fixture(scope="module")
def demos(tmp_path_factory: pytest.TempPathFactory) -> dict:
    folder = tmp_path_factory.mktemp("demos")
    return {challenge_id: get(challenge_id).write_demo(folder / challenge_id) for challenge_id in IDS}


def test_which_challenges_resample() -> None:
    assert sorted(RESAMPLABLE) == ["camera-traps", "fuzzy-jaccard", "glas", "ilsvrc2012-cls", "ilsvrc2012-loc"]


def _close(a: float | None, b: float) -> bool:
    return (a is None and math.isnan(b)) or (a is not None and math.isclose(a, b, rel_tol=1e-12, abs_tol=1e-12))


@pytest.mark.parametrize("challenge_id", RESAMPLABLE)
def test_summed_unit_rows_give_the_scores(challenge_id: str, demos: dict) -> None:
    demo, challenge = demos[challenge_id], get(challenge_id)
    units = challenge.units(demo.truth, resolve(challenge.parameters, demo.settings))
    rng = random.Random(7)
    public = set(rng.sample(units, len(units) // 3))
    split_of = {u: "public" if u in public else "private" for u in units}
    result = evaluate(challenge_id, demo.truth, demo.submission, demo.settings, split_of=split_of)
    document = json.loads(result.to_json())
    table = document["units"]
    assert sorted(table["rows"]) == sorted(units)  # every unit, the empty ones too
    assert table["split"] == split_of
    criteria = [spec.name for spec in challenge.ranking_criteria(set(result.scores))]
    for name, scores, keep in [("whole", result.scores, set(units))] + [
        (s, result.splits[s].scores, {u for u in units if split_of[u] == s}) for s in ("public", "private")
    ]:
        rows = np.array([table["rows"][u] for u in sorted(keep)], dtype=float)
        summed = challenge.scores_of_sums(tuple(table["columns"]), rows.sum(axis=0, keepdims=True))
        for criterion in criteria:
            assert _close(scores[criterion], summed[criterion][0]), (name, criterion)
    public_view = json.loads(result.to_json(public=True))
    assert sorted(public_view["units"]["rows"]) == sorted(public) and "split" not in public_view["units"]


def _draws(n: int, resamples: int, seed: int) -> list[np.ndarray]:
    """The resamples the bootstrap draws: the same generator, in the same chunks."""
    rng = np.random.default_rng(seed)
    return [
        row
        for start in range(0, resamples, CHUNK)
        for row in rng.integers(0, n, size=(min(CHUNK, resamples - start), n))
    ]


def test_resamples_equal_scoring_the_resampled_test_set() -> None:
    rng = np.random.default_rng(3)
    n = 300
    truth = rng.integers(1, 11, size=(n, 1))
    teams = [
        np.where(rng.random((n, 5, 1)) < p, truth[:, None, :], rng.integers(1, 11, size=(n, 5, 1))).astype(float)
        for p in (0.3, 0.25, 0.1)
    ]
    challenge = get("ilsvrc2012-cls")
    columns = challenge.unit_columns("ilsvrc")
    tables = []
    for guesses in teams:
        per_image = classification_errors(truth, guesses).per_image
        tables.append(Units(columns, {f"u{i:03d}": [1.0, *row] for i, row in enumerate(per_image.tolist())}))
    spec = challenge.score_spec("top5_error")
    confidences = bootstrap(challenge, [spec], False, tables, 500, seed=11)
    expected_scores, expected_ranks = [], []
    for draw in _draws(n, 500, 11):
        order = np.argsort([f"u{i:03d}" for i in range(n)])  # units are resampled in name order
        picked = order[draw]
        errors = [classification_errors(truth[picked], guesses[picked]).error(5) for guesses in teams]
        expected_scores.append(errors)
        named = [Team(str(i), "scored", {"top5_error": e}) for i, e in enumerate(errors)]
        rank_teams(challenge, named)
        expected_ranks.append([t.rank for t in sorted(named, key=lambda t: int(t.name))])
    scores, ranks = np.array(expected_scores), np.array(expected_ranks)
    for team, confidence in enumerate(confidences):
        assert confidence is not None
        low, high = np.percentile(scores[:, team], [2.5, 97.5])
        assert confidence.score.low == pytest.approx(low, abs=1e-12) and confidence.score.high == pytest.approx(
            high, abs=1e-12
        )
        assert (confidence.rank.low, confidence.rank.high) == tuple(
            np.percentile(ranks[:, team], [2.5, 97.5], method="inverted_cdf")
        )
        firsts = ranks == 1
        assert confidence.first == pytest.approx(
            np.mean(firsts[:, team] / firsts.sum(axis=1)), abs=1e-12
        )  # a tie for first splits it
    assert confidences[0].first > confidences[1].first > confidences[2].first == 0


def _units(values: list[float]) -> Units:
    return Units(
        ("images", "error@1", "error@2", "error@3", "error@4", "error@5"),
        {f"u{i}": [1.0, v, v, v, v, v] for i, v in enumerate(values)},
    )


def test_better_on_every_unit_is_always_first_and_ties_share() -> None:
    challenge = get("ilsvrc2012-cls")
    spec = challenge.score_spec("top5_error")
    good, bad = _units([0, 0, 0.5, 0, 0, 0.5]), _units([1, 1, 1, 1, 1, 1])
    first, second, rejected = bootstrap(challenge, [spec], False, [good, bad, None], 200)
    assert first is not None and second is not None and rejected is None
    assert (first.rank.low, first.rank.high, first.first) == (1, 1, 1.0)
    assert (second.rank.low, second.rank.high, second.first) == (2, 2, 0.0)
    assert second.score.low == second.score.high == 1.0
    a, b = bootstrap(challenge, [spec], False, [good, good], 200)
    assert a == b and a is not None and a.first == 0.5  # a tie shares rank 1 in every resample, and the first place
    tied = bootstrap(challenge, [spec], False, [good] * 21, 100)
    assert math.fsum(c.first for c in tied if c is not None) == pytest.approx(
        1.0
    )  # 21 tied teams: 1/21 each, not 100% each


def test_a_teams_score_interval_is_its_own_whoever_else_is_ranked() -> None:
    """All teams are scored at once, per part (GlaS' testA and testB pool their own images): each team's score
    interval is the one it gets alone, in the same draws, wherever it stands among the others."""
    challenge = get("glas")
    columns = challenge.unit_columns(None)
    rng = np.random.default_rng(5)
    units = [f"testA_{i}" for i in range(5)] + [f"testB_{i}" for i in range(4)]
    tables = [
        Units(columns, {u: [float(v) for v in rng.integers(0, 20, len(columns))] for u in units}) for _ in range(6)
    ]
    for name in ("f1/testA", "object_dice/testB", "object_hausdorff"):
        spec = challenge.score_spec(name)
        together = bootstrap(challenge, [spec], False, [tables[0], None, *tables[1:]], 300)
        alone = [bootstrap(challenge, [spec], False, [table], 300)[0] for table in tables]
        assert together[1] is None
        assert [c.score for c in together if c is not None] == [c.score for c in alone if c is not None], name


def test_the_seed_decides_the_draw() -> None:
    challenge = get("ilsvrc2012-cls")
    spec = challenge.score_spec("top5_error")
    values = [float(v) for v in np.random.default_rng(0).integers(0, 2, 200)]
    runs = [bootstrap(challenge, [spec], False, [_units(values)], 300, seed=s)[0] for s in (1, 1, 2)]
    assert runs[0] == runs[1] != runs[2]


def test_different_units_are_refused() -> None:
    challenge = get("ilsvrc2012-cls")
    spec = challenge.score_spec("top5_error")
    with pytest.raises(Exception, match="same units"):
        bootstrap(challenge, [spec], False, [_units([0, 1]), _units([0, 1, 1])], 100)


def test_ranks_of_ties_and_missing() -> None:
    ranks = ranks_of(np.array([[1.0, np.nan, 1.0, 0.5]]), higher_is_better=False)
    assert ranks.tolist() == [[2, 4, 2, 1]]


def test_rank_command_bootstrap(demos: dict, tmp_path: Path) -> None:
    demo = demos["glas"]
    paths = []
    for name, submission in (("good", demo.submission), ("empty", tmp_path / "empty")):
        submission.mkdir(exist_ok=True)
        path = tmp_path / f"{name}.json"
        path.write_text(evaluate("glas", demo.truth, submission).to_json())
        paths.append(str(path))
    run = CliRunner().invoke(cli, ["rank", "glas", *paths, "--bootstrap", "200", "--json", "-"])
    assert run.exit_code == 0, run.output
    board = json.loads(run.stdout)
    assert board["bootstrap"] == {"resamples": 200, "seed": 0, "level": 0.95, "score": "f1"}
    good, empty = board["teams"]
    assert good["name"] == "good" and good["confidence"]["first"] == 1.0 and good["confidence"]["rank"] == [1, 1]
    assert empty["confidence"]["score"] == [0.0, 0.0]
    table = CliRunner().invoke(cli, ["rank", "glas", *paths, "--bootstrap", "200"], env={"COLUMNS": "200"})
    assert "100.0%" in table.stdout and "rank 95%" in table.stdout
    too_few = CliRunner().invoke(cli, ["rank", "glas", *paths, "--bootstrap", "10"])
    assert too_few.exit_code == 2


def test_rank_command_bootstrap_refusals(demos: dict, tmp_path: Path) -> None:
    demo = demos["ilsvrc2012-fine"]
    fine = tmp_path / "fine.json"
    fine.write_text(evaluate("ilsvrc2012-fine", demo.truth, demo.submission, demo.settings).to_json())
    run = CliRunner().invoke(cli, ["rank", "ilsvrc2012-fine", str(fine), "--bootstrap", "100"])
    assert run.exit_code == 2 and "not functions of sums over units" in run.output
    old = tmp_path / "old.json"
    document = json.loads(evaluate("glas", demos["glas"].truth, demos["glas"].submission).to_json())
    old.write_text(json.dumps({k: v for k, v in document.items() if k != "units"}))
    run = CliRunner().invoke(cli, ["rank", "glas", str(old), "--bootstrap", "100"])
    assert run.exit_code == 2 and "no unit statistics" in run.output
    broken = tmp_path / "broken.json"
    broken.write_text(json.dumps(document | {"units": {"columns": ["tp"], "rows": {"a": [1, 2]}}}))
    run = CliRunner().invoke(cli, ["rank", "glas", str(broken)])
    assert run.exit_code == 2 and "must hold 1 numbers" in run.output
    foreign = tmp_path / "foreign.json"
    foreign.write_text(
        json.dumps(document | {"units": {"columns": ["tp"], "rows": {k: [1] for k in document["units"]["rows"]}}})
    )
    run = CliRunner().invoke(cli, ["rank", "glas", str(foreign), "--bootstrap", "100"])
    assert run.exit_code == 2 and "are not those of glas" in run.output  # columns glas does not compute from
    split = tmp_path / "split.json"
    split.write_text(json.dumps(document | {"units": document["units"] | {"split": [1]}}))
    run = CliRunner().invoke(cli, ["rank", "glas", str(split)])
    assert run.exit_code == 2 and "units.split must map" in run.output


def test_per_part_scores_resample_their_part_only(demos: dict, tmp_path: Path) -> None:
    """GlaS with ``parts``: each part's scores pool that part's images (blocker 1 of issue 35: exit 2 before)."""
    demo = demos["glas"]
    contest = tmp_path / "contest.toml"
    contest.write_text(
        f'id = "parts"\ntitle = "Parts"\nchallenge = "glas"\ntruth = "{demo.truth}"\n[parameters]\nparts = ["testA", "testB"]\n'
        '[[phase]]\nname = "one"\nstart = 2026-01-01T00:00:00Z\nend = 2026-02-01T00:00:00Z\nsubmissions = "files"\n'
    )
    worse_on_b = tmp_path / "worse-on-b"
    worse_on_b.mkdir()
    for image in demo.submission.glob("testA*"):  # Test A as it is, Test B missing (scored as empty)
        (worse_on_b / image.name).write_bytes(image.read_bytes())
    paths = []
    for name, submission in (("good", demo.submission), ("worse-on-b", worse_on_b)):
        run = CliRunner().invoke(
            cli,
            [
                "evaluate",
                "--contest",
                str(contest),
                "--submission",
                str(submission),
                "--json",
                str(tmp_path / f"{name}.json"),
            ],
        )
        assert run.exit_code == 0, run.output
        paths.append(str(tmp_path / f"{name}.json"))
    run = CliRunner().invoke(cli, ["rank", "--contest", str(contest), *paths, "--bootstrap", "200", "--json", "-"])
    assert run.exit_code == 0, run.output
    board = json.loads(run.stdout)
    assert board["bootstrap"]["score"] == "f1/testA"
    good, worse = sorted(board["teams"], key=lambda t: t["name"])
    assert (
        good["confidence"]["score"] == worse["confidence"]["score"]
    )  # the same Test A images: the same resampled f1/testA
    low, high = good["confidence"]["score"]
    assert low <= good["scores"]["f1/testA"] <= high
    assert good["confidence"]["rank"] == [1, 1] and worse["confidence"]["rank"] == [
        2,
        2,
    ]  # Test B decides every resample
