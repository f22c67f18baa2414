"""The CLI contract every challenge follows: exit codes, the JSON document, the commands."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import click
import numpy as np
import pytest
from click.testing import CliRunner

from conftest import meets_the_schema, save_png
from podium._version import __version__
from podium.cli import cli
from podium.scoring import engine
from podium.synthetic.fuzzy_jaccard import write_set

DOCUMENT_KEYS = {
    "schema_version",
    "challenge",
    "status",
    "scores",
    "details",
    "warnings",
    "errors",
    "podium_version",
    "parameters",
    "signature",
}


@pytest.fixture(scope="module")
def demo(tmp_path_factory) -> tuple[Path, Path]:
    return write_set(tmp_path_factory.mktemp("set"), n_images=3, shape=(30, 40), classes=("a", "b"))


def invoke(*args: str):
    return CliRunner().invoke(cli, list(args))


def test_scored_document(demo, tmp_path: Path) -> None:
    truth, sub = demo
    out = tmp_path / "result.json"
    result = invoke("evaluate", "fuzzy-jaccard", "--truth", str(truth), "--submission", str(sub), "--json", str(out))
    assert result.exit_code == 0
    assert "fuzzy_jaccard/a" in result.stdout  # the table
    doc = json.loads(out.read_text())
    assert set(doc) == DOCUMENT_KEYS | {"units"}
    assert doc["challenge"] == "fuzzy-jaccard" and doc["status"] == "scored"
    assert doc["podium_version"] == __version__
    assert doc["parameters"] == {
        "roi": "union",
        "ignore": None,
        "unreadable": "reject",
        "rate_mp_s": 1.0,
        "startup_s": 0.0,
    }
    assert set(doc["scores"]) == {"fuzzy_jaccard", "fuzzy_jaccard/a", "fuzzy_jaccard/b"}
    assert all(isinstance(v, float) for v in doc["scores"].values())
    assert set(doc["details"]["per_image"]) == {"image_0000", "image_0001", "image_0002"}
    units = doc["units"]
    assert units["columns"] == ["intersection/a", "intersection/b", "union/a", "union/b"]
    assert set(units["rows"]) == set(doc["details"]["per_image"])
    sums = np.sum(list(units["rows"].values()), axis=0)
    assert sums.tolist() == [doc["details"]["classes"][c][key] for key in ("intersection", "union") for c in ("a", "b")]


def test_json_to_stdout_is_only_json(demo) -> None:
    truth, sub = demo
    result = invoke(
        "evaluate", "fuzzy-jaccard", "--truth", str(truth), "--submission", str(sub), "--json", "-", "--set", "roi=all"
    )
    assert result.exit_code == 0
    assert json.loads(result.stdout)["parameters"]["roi"] == "all"


def test_rejected_document_is_written(demo, tmp_path: Path) -> None:
    truth, _sub = demo
    bad = tmp_path / "sub"
    save_png(bad / "a" / "image_0000.png", np.full((30, 40), 255, np.uint8))
    out = tmp_path / "result.json"
    result = invoke("evaluate", "fuzzy-jaccard", "--truth", str(truth), "--submission", str(bad), "--json", str(out))
    assert result.exit_code == 1
    doc = json.loads(out.read_text())
    assert set(doc) == DOCUMENT_KEYS
    assert doc["status"] == "rejected" and doc["scores"] == {}
    (error,) = doc["errors"]
    assert set(error) == {"code", "message", "file", "line"}
    assert error["file"] == str(bad / "a" / "image_0000.png")


def test_submission_that_is_a_file_is_rejected(demo, tmp_path: Path) -> None:
    truth, _ = demo
    (tmp_path / "sub.zip").write_bytes(b"PK")
    result = invoke(
        "evaluate", "fuzzy-jaccard", "--truth", str(truth), "--submission", str(tmp_path / "sub.zip"), "--json", "-"
    )
    assert result.exit_code == 1
    assert json.loads(result.stdout)["errors"][0]["code"] == "not_a_folder"


@pytest.mark.parametrize(
    ("args", "fragment"),
    [
        (["evaluate", "no-such", "--truth", ".", "--submission", "."], "unknown challenge 'no-such'"),
        (["evaluate", "fuzzy-jaccard", "--truth", "TRUTH", "--submission", "missing-folder"], "does not exist"),
        (
            ["evaluate", "fuzzy-jaccard", "--truth", "TRUTH", "--submission", "SUB", "--set", "roi=most"],
            "must be one of union, all",
        ),
        (
            ["evaluate", "fuzzy-jaccard", "--truth", "TRUTH", "--submission", "SUB", "--set", "ignor=3"],
            "did you mean ignore?",
        ),
        (
            ["evaluate", "fuzzy-jaccard", "--truth", "TRUTH", "--submission", "SUB", "--set", "ignore=x"],
            "integer from 0 to 65535",
        ),
        (["evaluate", "fuzzy-jaccard", "--truth", "TRUTH", "--submission", "SUB", "--set", "roi"], "KEY=VALUE"),
        (["evaluate", "fuzzy-jaccard", "--submission", "SUB"], "--truth is required"),
        (["evaluate", "fuzzy-jaccard", "--truth", "TRUTH", "--submission", "SUB", "--workers", "0"], "--workers"),
    ],
)
def test_usage_errors_exit_2(demo, args: list[str], fragment: str) -> None:
    truth, sub = demo
    args = [str(truth) if a == "TRUTH" else str(sub) if a == "SUB" else a for a in args]
    result = invoke(*args)
    assert result.exit_code == 2
    assert fragment in result.output
    assert "Traceback" not in result.output


def test_internal_error_is_one_line_and_exit_70(demo, monkeypatch) -> None:
    truth, sub = demo

    def broken(*args, **kwargs):
        raise RuntimeError("kernel exploded\nsecond line")

    monkeypatch.setattr("podium.scoring.engine.evaluate", broken)  # the command imports it when it runs
    result = invoke("evaluate", "fuzzy-jaccard", "--truth", str(truth), "--submission", str(sub))
    assert result.exit_code == 70
    assert "internal error: RuntimeError: kernel exploded (run with --debug" in result.output
    assert "Traceback" not in result.output and "second line" not in result.output
    result = invoke("--debug", "evaluate", "fuzzy-jaccard", "--truth", str(truth), "--submission", str(sub))
    assert result.exit_code == 70
    assert "Traceback" in result.stderr


def test_validate_has_the_same_codes_and_no_scores(demo, tmp_path: Path) -> None:
    truth, sub = demo
    result = invoke("validate", "fuzzy-jaccard", "--truth", str(truth), "--submission", str(sub), "--json", "-")
    assert result.exit_code == 0
    doc = json.loads(result.stdout)
    assert doc["status"] == "scored" and doc["scores"] == {} and doc["errors"] == []
    save_png(tmp_path / "bad" / "b" / "image_0001.png", np.zeros((2, 2), np.uint8))
    result = invoke(
        "validate", "fuzzy-jaccard", "--truth", str(truth), "--submission", str(tmp_path / "bad"), "--json", "-"
    )
    assert result.exit_code == 1 and json.loads(result.stdout)["status"] == "rejected"


def test_challenges_lists_parameters_scores_and_directions() -> None:
    result = invoke("challenges", "--json")
    assert result.exit_code == 0
    (entry,) = [c for c in json.loads(result.stdout) if c["id"] == "fuzzy-jaccard"]
    assert entry["primary"] == "fuzzy_jaccard"
    assert entry["scores"][0]["higher_is_better"] is True
    assert {p["name"]: p["default"] for p in entry["parameters"]} == {
        "roi": "union",
        "ignore": None,
        "unreadable": "reject",
        "rate_mp_s": 1.0,
        "startup_s": 0.0,
    }
    assert json.loads(invoke("challenges", "fuzzy-jaccard", "--json").stdout) == entry
    listing = invoke("challenges")
    assert (
        listing.exit_code == 0
        and "fuzzy-jaccard    fuzzy_jaccard  higher" in listing.stdout
        and "roi" not in listing.stdout
    )
    tables = invoke("challenges", "fuzzy-jaccard")
    assert tables.exit_code == 0 and "roi" in tables.stdout and "fuzzy_jaccard (primary)  higher" in tables.stdout


@pytest.mark.parametrize("json_flag", [[], ["--json"]])
def test_challenges_names_every_id_when_one_is_unknown(json_flag: list[str]) -> None:
    result = invoke("challenges", "glass", *json_flag)
    assert result.exit_code == 2 and result.stdout == ""
    assert "unknown challenge 'glass' (challenges: fuzzy-jaccard, face-clustering, glas, camera-traps" in result.stderr
    assert "Traceback" not in result.output


def test_demo_scores_every_challenge(tmp_path: Path) -> None:
    result = invoke("demo", "--folder", str(tmp_path), "--workers", "1")
    assert result.exit_code == 0, result.output
    assert "fuzzy_jaccard" in result.stdout
    assert (tmp_path / "fuzzy-jaccard" / "truth" / "classes.txt").is_file()


def test_installed_command_runs_with_two_workers(demo) -> None:
    """The real entry point, in a real process, with a process pool."""
    truth, sub = demo
    command = [
        sys.executable,
        "-m",
        "podium",
        "evaluate",
        "fuzzy-jaccard",
        "--truth",
        str(truth),
        "--submission",
        str(sub),
    ]
    one = subprocess.run([*command, "--json", "-", "--workers", "1"], capture_output=True, text=True, check=True)
    two = subprocess.run([*command, "--json", "-", "--workers", "2"], capture_output=True, text=True, check=True)
    assert one.stderr == "" and two.stderr == ""  # no progress bar when stderr is not a terminal
    assert meets_the_schema(json.loads(one.stdout))["scores"] == meets_the_schema(json.loads(two.stdout))["scores"]


def test_default_workers_is_positive() -> None:
    assert engine.default_workers() >= 1


def test_a_submission_path_that_is_a_link_is_not_followed(demo, tmp_path: Path) -> None:
    truth, sub = demo
    (tmp_path / "link").symlink_to(sub)
    result = invoke(
        "evaluate", "fuzzy-jaccard", "--truth", str(truth), "--submission", str(tmp_path / "link"), "--json", "-"
    )
    assert result.exit_code == 1
    (error,) = json.loads(result.stdout)["errors"]
    assert "symbolic link" in error["message"] and error["file"] == str(tmp_path / "link")


def test_a_hard_linked_file_in_a_submission_is_refused_unread(demo, tmp_path: Path) -> None:
    import shutil

    truth, sub = demo
    copy = tmp_path / "sub"
    shutil.copytree(sub, copy)
    secret = tmp_path / "secret.png"
    shutil.copy(copy / "a" / "image_0000.png", secret)
    (copy / "a" / "image_0000.png").unlink()
    (copy / "a" / "image_0000.png").hardlink_to(secret)
    result = invoke("evaluate", "fuzzy-jaccard", "--truth", str(truth), "--submission", str(copy), "--json", "-")
    assert result.exit_code == 1
    (error,) = json.loads(result.stdout)["errors"]
    assert "hard link" in error["message"] and error["file"].endswith("image_0000.png")


def test_no_nan_or_infinity_anywhere_in_the_document(tmp_path: Path) -> None:
    from podium.challenges import get
    from podium.core.provenance import signature
    from podium.core.result import Result

    result = Result(
        "glas",
        "scored",
        {"a": float("inf"), "b": np.float64("nan"), "c": 3},
        {"x": [1.0, float("-inf"), {"y": np.float32("nan")}], "z": np.int64(4)},
        [],
        [],
    )
    result.signature = signature(
        "glas",
        get("glas").parameters,
        {"suffixes": (), "binary": "auto", "empty_hausdorff": "inf", "parts": ()},
        tmp_path,
        None,
    )
    doc = json.loads(result.to_json())
    assert doc["scores"] == {"a": None, "b": None, "c": 3} and doc["details"] == {"x": [1.0, None, {"y": None}], "z": 4}


def test_validate_says_valid(demo) -> None:
    truth, sub = demo
    result = invoke("validate", "fuzzy-jaccard", "--truth", str(truth), "--submission", str(sub))
    assert result.exit_code == 0 and "fuzzy-jaccard: valid" in result.output and "scored" not in result.output


def test_demo_commands_point_to_files_that_stay(tmp_path: Path) -> None:
    result = invoke("demo", "--folder", str(tmp_path / "demo"), "--workers", "1")
    assert result.exit_code == 0, result.output
    commands = [
        line[line.index("podium evaluate") :] for line in result.output.splitlines() if "podium evaluate" in line
    ]
    assert len(commands) == 7
    for command in commands:
        words = command.split()
        truth, submission = words[words.index("--truth") + 1], words[words.index("--submission") + 1]
        assert Path(truth).exists() and Path(submission).exists(), command


def test_serve_and_worker_take_sandbox_and_cgroup_alike() -> None:
    """serve's and worker's --sandbox and --cgroup are one declaration each (and podium run's --cgroup the same): same type, default, env var and help."""

    def option(command: str, name: str) -> dict:
        found = next(p for p in cli.get_command(click.Context(cli), command).params if p.name == name)  # type: ignore[union-attr]
        return found.to_info_dict()

    for name in ("sandbox", "cgroup"):
        assert option("serve", name) == option("worker", name), name
    assert option("run", "cgroup") == option("serve", "cgroup")
    assert option("serve", "cgroup")["envvar"] == "PODIUM_CGROUP"


def test_a_prompt_without_an_answer_is_a_usage_error_not_an_internal_one(tmp_path: Path) -> None:
    """``podium user add`` asks for the password; with standard input closed (a script, a pipe) it says how to give it (exit 2)."""
    from click.testing import CliRunner

    from podium.cli import cli

    result = CliRunner().invoke(cli, ["user", "add", "eve", "--data", str(tmp_path / "data")], input="")
    assert result.exit_code == 2 and "--password-stdin" in result.output and "internal error" not in result.output
