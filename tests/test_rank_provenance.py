"""podium rank reads the signatures: it refuses results that cannot be compared, and says what they were scored with."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from conftest import run
from podium.challenges import get


@pytest.fixture(scope="module")
def jaccard(tmp_path_factory: pytest.TempPathFactory):
    return get("fuzzy-jaccard").write_demo(tmp_path_factory.mktemp("jaccard"))


def evaluate(path: Path, *args: str) -> Path:
    code, output = run("evaluate", *args, "--json", str(path), "--workers", "1", "--quiet")
    assert code in (0, 1), output
    return path


def jaccard_result(tmp_path: Path, demo, name: str, *settings: str, truth: Path | None = None) -> Path:
    return evaluate(
        tmp_path / f"{name}.json",
        "fuzzy-jaccard",
        "--truth",
        str(truth or demo.truth),
        "--submission",
        str(demo.submission),
        *settings,
    )


def test_comparable_results_are_ranked_with_their_signature(tmp_path: Path, jaccard) -> None:
    a, b = jaccard_result(tmp_path, jaccard, "a"), jaccard_result(tmp_path, jaccard, "b")
    code, output = run("rank", "fuzzy-jaccard", str(a), str(b))
    assert code == 0, output
    signature = json.loads(a.read_text())["signature"]
    assert (
        f"signature: fuzzy-jaccard · podium {signature['podium_version']} · truth {signature['truth'][:19]}" in output
    )
    assert "roi=union" in output
    assert "rank sum" not in output  # fuzzy-jaccard ranks by one score
    code, output = run("rank", "fuzzy-jaccard", str(a), str(b), "--json", "-")
    board = json.loads(output)
    assert board["mixed"] == [] and len(board["signatures"]) == 1 and board["signatures"][0]["teams"] == ["a", "b"]


def test_results_of_other_parameters_are_refused_unless_mixed_is_allowed(tmp_path: Path, jaccard) -> None:
    union = jaccard_result(tmp_path, jaccard, "union")
    every = jaccard_result(tmp_path, jaccard, "every", "--set", "roi=all")
    code, output = run("rank", "fuzzy-jaccard", str(union), str(every))
    assert code == 2
    assert 'they differ in challenge parameters: union.json has roi="union"; every.json has roi="all"' in output
    code, output = run("rank", "fuzzy-jaccard", str(union), str(every), "--allow-mixed")
    assert code == 0 and "mixed: they differ in challenge parameters" in output
    assert "signature (union)" in output and "signature (every)" in output


def test_results_on_another_truth_are_refused(tmp_path: Path, jaccard) -> None:
    other = tmp_path / "other-truth"
    shutil.copytree(jaccard.truth, other)
    first = sorted(other.glob("*.png"))[0]
    first.write_bytes(first.read_bytes())  # same content: same fingerprint, wherever the folder is
    same = jaccard_result(tmp_path, jaccard, "same", truth=other)
    a = jaccard_result(tmp_path, jaccard, "a")
    assert run("rank", "fuzzy-jaccard", str(a), str(same))[0] == 0
    (other / "classes.txt").write_text((other / "classes.txt").read_text() + "\n")
    changed = jaccard_result(tmp_path, jaccard, "changed", truth=other)
    code, output = run("rank", "fuzzy-jaccard", str(a), str(changed))
    assert (
        code == 2
        and "they differ in truth fingerprint: a.json has sha256:" in output
        and "changed.json has sha256:" in output
    )


def test_measurements_differ_between_teams_and_do_not_count(tmp_path: Path) -> None:
    demo = get("face-clustering").write_demo(tmp_path / "faces")
    rules = ["--set", "th1_s=600", "--set", "th2_s=1200", "--set", "ram_max_mb=4096"]
    fast = evaluate(
        tmp_path / "fast.json",
        "face-clustering",
        "--truth",
        str(demo.truth),
        "--submission",
        str(demo.submission),
        *rules,
        "--set",
        "time_s=10",
        "--set",
        "ram_mb=100",
    )
    slow = evaluate(
        tmp_path / "slow.json",
        "face-clustering",
        "--truth",
        str(demo.truth),
        "--submission",
        str(demo.submission),
        *rules,
        "--set",
        "time_s=500",
        "--set",
        "ram_mb=100",
    )
    code, output = run("rank", "face-clustering", str(slow), str(fast), "--json", "-")
    assert code == 0, output
    assert [t["name"] for t in json.loads(output)["teams"]] == ["fast", "slow"]
    other = evaluate(
        tmp_path / "other.json",
        "face-clustering",
        "--truth",
        str(demo.truth),
        "--submission",
        str(demo.submission),
        *rules[:-1],
        "ram_max_mb=2048",
    )
    code, output = run("rank", "face-clustering", str(fast), str(other))
    assert code == 2 and "fast.json has ram_max_mb=4096.0; other.json has ram_max_mb=2048.0" in output


def test_unsigned_results_are_refused(tmp_path: Path, jaccard) -> None:
    a = jaccard_result(tmp_path, jaccard, "a")
    old = tmp_path / "old.json"
    doc = json.loads(a.read_text())
    del doc["signature"]
    old.write_text(json.dumps(doc))
    code, output = run("rank", "fuzzy-jaccard", str(a), str(old))
    assert code == 2 and "old.json has no signature" in output


@pytest.fixture
def two_contests(tmp_path: Path):
    demo = get("glas").write_demo(tmp_path / "glas")
    text = (
        'id = "{id}"\ntitle = "GlaS"\nchallenge = "glas"\ntruth = "glas/truth"\n\n[split]\npublic = 0.5\nseed = {seed}\n\n'
        '[[phase]]\nname = "test"\nstart = 2026-01-01T00:00:00Z\nend = 2026-02-01T00:00:00Z\nsubmissions = "files"\n\n[ranking]\nby = "{by}"\n'
    )
    (tmp_path / "one.toml").write_text(text.format(id="one", seed=1, by="f1"))
    (tmp_path / "two.toml").write_text(text.format(id="two", seed=2, by="object_dice"))
    return demo, tmp_path / "one.toml", tmp_path / "two.toml"


def test_split_results_rank_by_split_and_refuse_another_split(tmp_path: Path, two_contests) -> None:
    demo, one, two = two_contests
    a = evaluate(tmp_path / "a.json", "--contest", str(one), "--submission", str(demo.submission))
    b = evaluate(tmp_path / "b.json", "--contest", str(one), "--submission", str(demo.submission))
    c = evaluate(tmp_path / "c.json", "--contest", str(two), "--submission", str(demo.submission))
    code, output = run("rank", "glas", str(a), str(b), "--split", "public", "--json", "-")
    board = json.loads(output)
    assert code == 0 and board["split"] == "public"
    assert board["teams"][0]["scores"] == json.loads(a.read_text())["splits"]["public"]["scores"]
    code, output = run("rank", "glas", str(a), str(c), "--split", "private")
    assert code == 2 and "they differ in split: a.json has sha256:" in output
    assert run("rank", "glas", str(a), str(c))[0] == 0  # the whole test set is the same
    plain = evaluate(tmp_path / "plain.json", "glas", "--truth", str(demo.truth), "--submission", str(demo.submission))
    code, output = run("rank", "glas", str(a), str(plain), "--split", "public")
    assert code == 2 and "plain.json has no public split" in output


def test_rank_takes_the_contest_rule_and_refuses_other_contests(tmp_path: Path, two_contests) -> None:
    demo, one, two = two_contests
    a = evaluate(tmp_path / "a.json", "--contest", str(one), "--submission", str(demo.submission))
    c = evaluate(tmp_path / "c.json", "--contest", str(two), "--submission", str(demo.submission))
    code, output = run("rank", "--contest", str(one), str(a), "--json", "-")
    board = json.loads(output)
    assert (
        code == 0 and board["by"] == "f1" and [c["name"] for c in board["criteria"]] == ["f1"] and not board["rank_sum"]
    )
    code, output = run("rank", "--contest", str(one), str(a), str(c))
    assert code == 2 and "c.json was not scored in the contest one" in output
    code, output = run("rank", "glas", str(a), "--by", "object_dice", "--json", "-")
    assert code == 0 and [c["name"] for c in json.loads(output)["criteria"]] == ["object_dice"]
    code, output = run("rank", "glas", str(a), "--by", "dice")
    assert code == 2 and "--by dice: not a score of glas" in output
