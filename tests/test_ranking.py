"""Competition ranking, rank sums, rounding and the podium rank command."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from conftest import run
from podium.challenges import get
from podium.ranking.ranks import Team, competition_ranks, rank_teams


@pytest.mark.parametrize(
    ("values", "higher", "ranks"),
    [
        ([0.9, 0.8, 0.9, 0.7], True, [1, 3, 1, 4]),
        ([3.0, 1.0, 1.0, 2.0], False, [4, 1, 1, 3]),
        ([0.5, None, 0.5, None], True, [1, 3, 1, 3]),
        ([1.0, 1.0, 1.0], True, [1, 1, 1]),
        ([], True, []),
    ],
)
def test_standard_competition_ranking(values, higher, ranks) -> None:
    assert competition_ranks(values, higher) == ranks


def glas_team(name: str, f1: float, dice: float, haus: float, status: str = "scored") -> Team:
    return Team(name, status, {"f1": f1, "object_dice": dice, "object_hausdorff": haus})


def test_glas_rank_sum_with_ties() -> None:
    teams = [
        glas_team("A", 0.90, 0.80, 50.0),  # ranks 1, 3, 2 -> 6
        glas_team("B", 0.90, 0.85, 60.0),  # ranks 1, 1, 3 -> 5
        glas_team("C", 0.80, 0.85, 40.0),  # ranks 3, 1, 1 -> 5
        glas_team("D", 0.70, 0.70, 90.0),  # ranks 4, 4, 4 -> 12
    ]
    rank_teams(get("glas"), teams)
    assert [(t.name, t.rank_sum, t.rank) for t in teams] == [("B", 5, 1), ("C", 5, 1), ("A", 6, 3), ("D", 12, 4)]


def test_decimals_round_before_ranking() -> None:
    teams = [glas_team("A", 0.9004, 0.8, 50.0), glas_team("B", 0.9001, 0.8, 50.0)]
    rank_teams(get("glas"), teams)
    assert [t.ranks["f1"] for t in teams] == [1, 2]
    teams = [glas_team("A", 0.9004, 0.8, 50.0), glas_team("B", 0.9001, 0.8, 50.0)]
    rank_teams(get("glas"), teams, decimals=3)
    assert [t.rank for t in teams] == [1, 1]


def test_glas_parts_give_six_criteria() -> None:
    scores = {f"{s}/{p}": 0.5 for s in ("f1", "object_dice", "object_hausdorff") for p in ("testA", "testB")}
    criteria = get("glas").ranking_criteria(set(scores) | {"f1", "object_dice", "object_hausdorff"})
    assert [c.name for c in criteria] == [
        f"{s}/{p}" for p in ("testA", "testB") for s in ("f1", "object_dice", "object_hausdorff")
    ]
    assert [c.higher_is_better for c in criteria] == [True, True, False] * 2


def test_a_null_score_ranks_last_and_a_team_without_a_score_is_not_ranked() -> None:
    teams = [
        Team("ok", "scored", {"fuzzy_jaccard": 0.5}),
        Team("bad", "rejected", {}),
        Team("best", "scored", {"fuzzy_jaccard": 0.7}),
        Team("null", "scored", {"fuzzy_jaccard": None}),
        Team("also", "none", {}),
    ]
    rank_teams(get("fuzzy-jaccard"), teams)
    ranked = [(t.name, t.rank, t.ranks) for t in teams]
    assert ranked == [
        ("best", 1, {"fuzzy_jaccard": 1}),
        ("ok", 2, {"fuzzy_jaccard": 2}),
        ("null", 3, {"fuzzy_jaccard": 3}),
        ("also", None, {}),
        ("bad", None, {}),
    ]


def test_teams_without_a_score_alone_are_none_ranked_and_rank_sums_skip_them() -> None:
    """The only team of a new contest, with nothing scored, was "rank 1" (the last rank of a board of one)."""
    alone = [Team("new", "none", {})]
    rank_teams(get("glas"), alone)
    assert (alone[0].rank, alone[0].rank_sum, alone[0].ranks) == (None, None, {})
    scores = {"f1": 0.9, "object_dice": 0.8, "object_hausdorff": 50.0}
    teams = [Team("failed", "rejected", {}), Team("a", "scored", scores), Team("b", "scored", dict(scores))]
    rank_teams(get("glas"), teams)
    assert [(t.name, t.rank, t.rank_sum) for t in teams] == [("a", 1, 3), ("b", 1, 3), ("failed", None, None)]


def write_result(path: Path, challenge: str, **scores: float) -> Path:
    """A scored document of ``challenge`` whose signature is that of its default parameters on one truth."""
    signature = {"challenge": challenge, "parameters": {}, "truth": "sha256:" + "0" * 64, "contest": None}
    path.write_text(json.dumps({"challenge": challenge, "status": "scored", "scores": scores, "signature": signature}))
    return path


def test_rank_command(tmp_path: Path) -> None:
    a = write_result(tmp_path / "team_a.json", "glas", f1=0.9, object_dice=0.8, object_hausdorff=50.0)
    b = write_result(tmp_path / "team_b.json", "glas", f1=0.9, object_dice=0.9, object_hausdorff=40.0)
    code, output = run("rank", "glas", str(a), str(b), "--json", "-")
    board = json.loads(output)
    assert code == 0 and [(t["name"], t["rank"], t["rank_sum"]) for t in board["teams"]] == [
        ("team_b", 1, 3),
        ("team_a", 2, 5),
    ]
    code, output = run("rank", "glas", str(a), str(b), "--name", "Alpha", "--name", "Beta")
    assert code == 0 and "Alpha" in output and "rank sum" in output
    tied = write_result(tmp_path / "team_c.json", "glas", f1=0.9, object_dice=0.8004, object_hausdorff=50.0)
    code, output = run("rank", "glas", str(a), str(tied), "--decimals", "3")
    rows = [line for line in output.splitlines() if "team_" in line]  # the scores as they are ranked: one tie, one text
    assert code == 0 and all("0.800 (1)" in row and "0.900 (1)" in row and "50.000 (1)" in row for row in rows), output


@pytest.mark.parametrize(
    ("content", "fragment"),
    [("{not json", "is not a podium result document"), ('{"challenge": "glas"}', "is not a podium result document")],
)
def test_rank_command_refuses_bad_documents(tmp_path: Path, content: str, fragment: str) -> None:
    (tmp_path / "x.json").write_text(content)
    code, output = run("rank", "glas", str(tmp_path / "x.json"))
    assert code == 2 and fragment in output


def test_rank_command_refuses_other_challenges_and_name_mismatch(tmp_path: Path) -> None:
    a = write_result(tmp_path / "a.json", "fuzzy-jaccard", fuzzy_jaccard=0.5)
    code, output = run("rank", "glas", str(a))
    assert code == 2 and "is a result of 'fuzzy-jaccard'" in output
    code, output = run("rank", "fuzzy-jaccard", str(a), "--name", "x", "--name", "y")
    assert code == 2 and "--name was given 2 times for 1 results" in output


@pytest.mark.parametrize(
    ("document", "fragment"),
    [
        ('{"challenge": "camera-traps", "status": "scored", "scores": null}', "scores of type NoneType"),
        ('{"challenge": "camera-traps", "status": "scored", "scores": "0.5"}', "scores of type str"),
        ('{"challenge": "camera-traps", "status": "scored", "scores": [0.5]}', "scores of type list"),
        ('{"challenge": "camera-traps", "status": "scored", "scores": {"score": "0.5"}}', "score 'score' is str"),
        ('{"challenge": "camera-traps", "status": "scored", "scores": {"score": [1]}}', "score 'score' is list"),
        ('{"challenge": "camera-traps", "status": "scored", "scores": {"score": {"a": 1}}}', "score 'score' is dict"),
        ('{"challenge": "camera-traps", "status": "scored", "scores": {"score": true}}', "a boolean"),
        (
            '{"challenge": "camera-traps", "status": "scored", "scores": {"score": ' + "9" * 5000 + "}}",
            "not valid JSON",
        ),
        ('{"challenge": "camera-traps", "status": "scored", "scores": {"score": ' + "9" * 400 + "}}", "too large"),
        ('{"challenge": "camera-traps", "status": "scored", "scores": {"score": NaN}}', "NaN is not a number"),
        (
            '{"challenge": "camera-traps", "status": "scored", "scores": {"score": -Infinity}}',
            "-Infinity is not a number",
        ),
        ('{"challenge": "camera-traps", "status": "SCORED", "scores": {}}', "status 'SCORED'"),
        ('{"challenge": "camera-traps", "status": [], "scores": {}}', "status '[]'"),
        ("[" * 100_000 + "]" * 100_000, "nested too deeply"),
        ("[1, 2]", "needs challenge, status and scores"),
        ("\xff", "not UTF-8"),
        ('{"challenge": "camera-traps", "status": "scored", "scores": {}, "signature": "x"}', "signature of type str"),
        (
            '{"challenge": "camera-traps", "status": "scored", "scores": {}, "signature": {"parameters": [1]}}',
            "signature.parameters of type list",
        ),
        (
            '{"challenge": "camera-traps", "status": "scored", "scores": {}, "signature": {"contest": [1]}}',
            "signature.contest of type list",
        ),
        (
            '{"challenge": "camera-traps", "status": "scored", "scores": {}, "signature": {"contest": {"split": 3}}}',
            "signature.contest.split of type int",
        ),
    ],
)
def test_hostile_result_documents_are_refused_by_name(tmp_path: Path, document: str, fragment: str) -> None:
    good = tmp_path / "good.json"
    good.write_text(json.dumps({"challenge": "camera-traps", "status": "scored", "scores": {"score": 0.5}}))
    bad = tmp_path / "bad.json"
    bad.write_bytes(document.encode("latin-1") if document == "\xff" else document.encode())
    code, output = run("rank", "camera-traps", str(good), str(bad), "--json", "-")
    assert code == 2 and fragment in output and "bad.json" in output, output
