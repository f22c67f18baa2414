"""podium on Codabench, EvalAI and Grand Challenge: each entry point run on every challenge's demo set in the platform's own layout.

Codabench and EvalAI are checked by their own code (``../shared/platform-checks``:
Codabench's unpacker, serializers and compute worker, EvalAI's config validator and
submission worker), so that a bundle that passes here passes the upload; the tests
that need it skip, with the reason, where ../shared is absent. Those scoring runs
use the worker's layout and commands without bubblewrap (``--no-sandbox``), since a
fresh sandbox compiles Numba's kernels again (about 40 s for GlaS); one run goes
through the sandbox (:func:`test_codabench_scores_in_the_workers_sandbox`).

The formats checked, and where each is documented:
- Codabench: the scoring program reads ``input/ref`` and ``input/res`` and writes
  ``scores.json`` (keys = the leaderboard columns' keys, numbers) and
  ``detailed_results.html`` into ``output``
  (https://docs.codabench.org/latest/Organizers/Benchmark_Creation/Competition-Bundle-Structure/).
  The bundle's ``competition.yaml`` (version 2) needs what Codabench's unpacker
  reads (github.com/codalab/codabench, ``src/apps/competitions/unpackers/v2.py``):
  ``title``, ``image``, ``terms``, ``pages``, ``tasks`` with a scoring program,
  ``phases`` with tasks, sequential, and ``leaderboards`` whose columns have
  ``title``, ``key``, ``index`` and ``sorting`` asc|desc
  (https://docs.codabench.org/latest/Organizers/Benchmark_Creation/Yaml-Structure/).
- EvalAI: ``evaluate(test_annotation_file, user_submission_file, phase_codename, **kwargs)``
  returns ``{"result": [{split_codename: {label: number}}], "submission_result": ...}``
  (https://evalai.readthedocs.io/en/latest/evaluation_scripts.html); the
  leaderboard, dataset splits and phase splits of ``challenge_config.yaml``
  (https://evalai.readthedocs.io/en/latest/configuration.html).
- Grand Challenge: ``/input`` in, ``/output/metrics.json`` out with ``case`` and
  ``aggregates``; ground truth in ``/opt/ml/input/data/ground_truth``
  (https://comic.github.io/evalutils/; github.com/comic/grand-challenge.org).
"""

from __future__ import annotations

import io
import json
import math
import os
import re
import shlex
import shutil
import subprocess
import sys
import tarfile
import zipfile
from dataclasses import replace
from datetime import datetime
from pathlib import Path

import pytest
import yaml

from conftest import SHARED, meets_the_schema, require, run
from podium._version import __version__ as podium_version
from podium.challenges import IDS, get
from podium.contest import load
from podium.core.errors import UsageError
from podium.core.result import PRIVATE, PUBLIC
from podium.publish.platforms.columns import columns
from podium.publish.platforms.evalai import CODENAMES, SubmissionRejected
from podium.publish.platforms.reference import reference_of
from podium.publish.platforms.scores import SENTINEL, numbers_only, shown
from podium.scoring.engine import evaluate

REPOSITORY = Path(__file__).resolve().parents[1]
CHECKS = SHARED / "platform-checks"
CHECKS_MODULES = "import django, rest_framework, yaml, dateutil, importlib.util as u; assert u.find_spec('drf_writable_nested')"  # as setup.sh checks
PODIUM_BIN = str(Path(sys.executable).parent)  # where this environment's podium command is


@pytest.fixture(scope="session")
def platform_checks() -> Path:
    """../shared/platform-checks, with the venv its scripts run in made once (setup.sh; a check of a second when it is there)."""
    if not CHECKS.is_dir():
        pytest.skip(f"the platforms' own code is not at {CHECKS} (../shared/platform-checks)")
    where = subprocess.run(  # their own rule for where the venv is; -B: nothing written into ../shared
        [
            sys.executable,
            "-B",
            "-c",
            f"import sys; sys.path.insert(0, {str(CHECKS)!r}); import _common; print(_common.venv_dir())",
        ],
        capture_output=True,
        text=True,
        check=True,
        timeout=60,
    )
    python = Path(where.stdout.strip()) / "bin" / "python"
    if not python.exists() or subprocess.run([str(python), "-c", CHECKS_MODULES], capture_output=True).returncode != 0:
        made = subprocess.run(["sh", str(CHECKS / "setup.sh")], capture_output=True, text=True, timeout=900)
        require(
            "the platform checks' venv (Django, DRF, PyYAML from the package index)",
            None if made.returncode == 0 else made.stderr[-500:],
        )
    return CHECKS


def platform_check(checks: Path, script: str, *args: str | Path) -> subprocess.CompletedProcess[str]:
    """One of the platform checks' scripts, run as its README says (it re-runs itself with its venv's Python)."""
    return subprocess.run(
        [sys.executable, str(checks / script), *map(str, args)], capture_output=True, text=True, timeout=600
    )


def codabench_scores(checks: Path, bundle: Path, submission: Path, task: int, out: Path, *extra: str) -> dict:
    """``scores.json`` as Codabench's compute worker reads it after scoring ``submission`` on ``task``; fails the test unless Finished."""
    finished = platform_check(
        checks,
        "run_codabench_scoring.py",
        bundle,
        submission,
        "--task",
        str(task),
        "--path",
        PODIUM_BIN,
        "--out",
        out,
        *extra,
    )
    assert finished.returncode == 0 and "status: Finished" in finished.stdout, finished.stdout + finished.stderr
    return json.loads((out / "scores.json").read_text())


def evalai_rows(
    checks: Path, kit: Path, submission: Path, phase: str, annotation: Path | None = None
) -> tuple[dict[str, dict], str]:
    """The leaderboard row of each split as EvalAI's submission worker keeps it, and the worker's output; fails the test unless FINISHED.

    ``annotation``: the phase's test annotation file [default: the kit's only one].
    """
    finished = platform_check(
        checks,
        "run_evalai_evaluate.py",
        kit / "evaluation_script",
        annotation or next((kit / "annotations").iterdir()),
        submission,
        phase,
        "--config",
        kit / "challenge_config.podium.yaml",
        "--python",
        sys.executable,
    )
    assert finished.returncode == 0 and "status: FINISHED" in finished.stdout, finished.stdout + finished.stderr
    prefix = "leaderboard row, split "
    rows = [
        line.removeprefix(prefix).split(": ", 1) for line in finished.stdout.splitlines() if line.startswith(prefix)
    ]
    return {split: json.loads(row) for split, row in rows}, finished.stdout


def packed_three_ways(files: Path, folder: Path) -> dict[str, Path]:
    """The submission ``files`` as participants pack it: a zip of the files, a zip of one folder, ``tar czf x.tar.gz -C files .``."""
    team = folder / "team"
    shutil.copytree(files, team)
    with zipfile.ZipFile(folder / "folder.zip", "w") as archive:
        for path in sorted(team.rglob("*")):
            archive.write(path, path.relative_to(folder).as_posix())
    subprocess.run(["tar", "czf", str(folder / "dot.tar.gz"), "-C", str(files), "."], check=True)
    return {
        "files.zip": _zip_folder(files, folder / "files.zip"),
        "folder.zip": folder / "folder.zip",
        "dot.tar.gz": folder / "dot.tar.gz",
    }


@pytest.fixture(scope="module")
def contests(tmp_path_factory: pytest.TempPathFactory) -> dict:
    """Every challenge's demo set with a contest file (a public/private split drawn with a seed) beside it."""
    made = {}
    for challenge_id in IDS:
        folder = tmp_path_factory.mktemp(challenge_id)
        demo = get(challenge_id).write_demo(folder)
        measured = {p.name for p in get(challenge_id).parameters if p.role == "measured"}
        parameters = "".join(
            f"{key} = {json.dumps(value)}\n" for key, value in demo.settings.items() if key not in measured
        )
        contest_file = folder / "contest.toml"
        contest_file.write_text(
            f'id = "{challenge_id}-demo"\ntitle = "The {challenge_id} demo"\nchallenge = "{challenge_id}"\n'
            f'truth = {json.dumps(str(demo.truth))}\ntimezone = "Europe/Paris"\n[parameters]\n{parameters}'
            "[split]\npublic = 0.5\nseed = 3\n"
            '[[phase]]\nname = "Development"\nstart = 2026-01-05T00:00:00+01:00\nend = 2026-03-01T00:00:00+01:00\nsubmissions = "files"\n'
            '[quota]\nper_day = 5\ntotal = 100\n[ranking]\ndecimals = 3\nfinal = "last"\n'
            + (
                'by = "pairwise_f"\n' if challenge_id == "face-clustering" else ""
            )  # final points need a measured time: not on a platform
        )
        contest = load(contest_file)
        expected = evaluate(challenge_id, contest.truth, demo.submission, contest.settings, **contest.evaluation())
        made[challenge_id] = (contest, demo, expected)
    return made


def _platform_numbers(challenge_id: str, scores: dict, keys: list[str] | None = None) -> dict:
    return numbers_only(challenge_id, scores, keys)[0]


def _assert_numbers(values: dict) -> None:
    assert values and all(
        isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v) for v in values.values()
    ), values


def _zip_folder(folder: Path, target: Path) -> Path:
    with zipfile.ZipFile(target, "w") as archive:
        for path in sorted(folder.rglob("*")):
            if path.is_file():
                archive.write(path, path.relative_to(folder).as_posix())
    return target


def _submission_files(demo, target: Path) -> Path:
    """The demo submission's files in ``target``, as a platform unpacks an uploaded zip of them."""
    if demo.submission.is_dir():
        shutil.copytree(demo.submission, target)
    else:
        target.mkdir(parents=True)
        shutil.copy(demo.submission, target)
    return target


# --- Codabench -------------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("challenge_id", IDS)
def test_codabench_bundle_scores_each_split_as_podium_does(
    challenge_id: str, contests: dict, platform_checks: Path, tmp_path: Path
) -> None:
    """Codabench's unpacker takes each challenge's bundle; its worker scores a zip of one folder on the public task and a zip of files on
    the private one (its ``metadata`` file beside them in input/res), to ``podium evaluate``'s numbers under exactly the columns' keys."""
    contest, demo, expected = contests[challenge_id]
    bundle = tmp_path / "bundle.zip"
    assert (
        run(
            "bundle", "codabench", "--contest", str(contest.path), "-o", str(bundle), "--image", "ghcr.io/org/podium:1"
        )[0]
        == 0
    )
    checked = platform_check(platform_checks, "check_codabench_bundle.py", bundle)
    assert checked.returncode == 0 and checked.stdout.startswith("OK "), checked.stdout + checked.stderr
    keys = [c.key for c in columns(contest)]
    packed = packed_three_ways(_submission_files(demo, tmp_path / "files"), tmp_path / "packed")
    for task, split, zipped in ((0, PUBLIC, "folder.zip"), (1, PRIVATE, "files.zip")):
        out = tmp_path / f"out-{task}"
        scores = codabench_scores(platform_checks, bundle, packed[zipped], task, out, "--no-sandbox")
        assert list(scores) == keys  # exactly the columns' keys, in their order
        _assert_numbers(scores)
        assert scores == _platform_numbers(challenge_id, expected.splits[split].scores, keys)
        assert (out / "detailed_results.html").read_text().startswith("<!doctype html>")
        stdout = (out / "scoring_stdout.txt").read_text()
        assert (
            f"{split} split" in stdout and "metadata" not in stdout
        )  # the worker's own file is neither scored nor warned about


def test_codabench_bundle_says_what_podium_means(contests: dict, platform_checks: Path, tmp_path: Path) -> None:
    """What Codabench accepts is its unpacker's to say (checked above); here, that the bundle carries the contest's rules."""
    contest, _, _ = contests["glas"]
    bundle = tmp_path / "bundle.zip"
    assert (
        run(
            "bundle", "codabench", "--contest", str(contest.path), "-o", str(bundle), "--image", "ghcr.io/org/podium:1"
        )[0]
        == 0
    )
    checked = platform_check(platform_checks, "check_codabench_bundle.py", bundle)
    assert checked.returncode == 0 and checked.stdout.startswith("OK "), checked.stdout + checked.stderr
    archive = zipfile.ZipFile(bundle)
    spec = yaml.safe_load(archive.read("competition.yaml"))
    assert (
        spec["title"] == contest.title
        and spec["docker_image"] == "ghcr.io/org/podium:1"
        and spec["enable_detailed_results"] is True
    )
    phases = sorted(spec["phases"], key=lambda p: p["index"])
    assert [p["name"] for p in phases] == ["Development", "final ranking (private split)"]
    assert datetime.fromisoformat(phases[0]["start"]) == datetime.fromisoformat(
        "2026-01-04T23:00:00+00:00"
    )  # Paris midnight, in UTC
    assert (
        datetime.fromisoformat(phases[1]["start"]) - datetime.fromisoformat(phases[0]["end"])
    ).total_seconds() == 1  # Codabench's gap
    assert phases[0]["max_submissions_per_day"] == 5 and phases[0]["max_submissions"] == 100
    assert all(p["execution_time_limit"] == 300 + math.ceil(contest.units / 100) for p in phases)
    assert phases[1]["auto_migrate_to_this_phase"] is True and phases[1]["tasks"] == [1]
    assert all(
        yaml.safe_load(archive.read(f"{t['scoring_program']}metadata.yaml"))["command"].startswith("podium codabench ")
        for t in spec["tasks"]
    )
    board = spec["leaderboards"][0]
    assert board["submission_rule"] == "Force_Last"
    assert [(c["key"], c["sorting"], c["index"], c["precision"]) for c in board["columns"]] == [
        ("f1", "desc", 0, 3),
        ("object_dice", "desc", 1, 3),
        ("object_hausdorff", "asc", 2, 3),
    ]
    overview = archive.read("pages/overview.md").decode()
    assert "sum of their ranks" in overview  # GlaS's rule cannot be a column order
    assert (
        "Upload a zip of your files, or of one folder that holds them" in overview
    )  # both score alike (the worker's test above)
    assert (
        "official rules: GlaS@MICCAI 2015, Evaluation (warwick.ac.uk" in overview
    )  # by title and source, not a file shipped nowhere
    code, listing = run("challenges", "--json")
    assert code == 0 and all("seeds/" not in challenge["rules"] for challenge in json.loads(listing))
    assert archive.read("scoring_image/Dockerfile").decode() == (REPOSITORY / "Dockerfile").read_text()


def test_phases_that_touch_are_refused_for_codabench_and_warned_of_by_contest_check(
    contests: dict, platform_checks: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Codabench's unpacker refuses a phase that starts when the one before it ends; podium serve takes it, so contest check warns."""
    contest, _, _ = contests["camera-traps"]
    text = contest.path.read_text().replace(
        'submissions = "files"\n',
        'submissions = "files"\n[[phase]]\nname = "Final"\nstart = 2026-03-01T00:00:00+01:00\nend = 2026-03-08T00:00:00+01:00\nsubmissions = "files"\n',
    )
    touching = tmp_path / "contest.toml"
    touching.write_text(text)
    check = subprocess.run(
        [sys.executable, "-m", "podium", "contest", "check", str(touching)], capture_output=True, text=True, timeout=120
    )
    assert check.returncode == 0 and "warning: phase 'Final' starts when phase 'Development' ends" in check.stderr, (
        check.stderr
    )
    code, output = run(
        "bundle", "codabench", "--contest", str(touching), "-o", str(tmp_path / "refused.zip"), "--image", "x/podium:1"
    )
    assert code == 2 and "Codabench refuses phases that touch" in output and not (tmp_path / "refused.zip").exists()

    import podium.publish.platforms.codabench_bundle as codabench_bundle  # the bundle written all the same: Codabench's own refusal

    monkeypatch.setattr(codabench_bundle, "codabench_conflicts", lambda contest: [])
    assert (
        run(
            "bundle",
            "codabench",
            "--contest",
            str(touching),
            "-o",
            str(tmp_path / "touching.zip"),
            "--image",
            "x/podium:1",
        )[0]
        == 0
    )
    refused = platform_check(platform_checks, "check_codabench_bundle.py", tmp_path / "touching.zip")
    assert (
        refused.returncode == 1
        and "Phases dates conflict. Phase: Final should start after Phase: Development has ended"
        in refused.stdout + refused.stderr
    )
    monkeypatch.undo()
    apart = tmp_path / "apart.toml"
    apart.write_text(
        touching.read_text().replace("start = 2026-03-01T00:00:00+01:00", "start = 2026-03-01T00:00:01+01:00")
    )
    assert (
        "warning"
        not in subprocess.run(
            [sys.executable, "-m", "podium", "contest", "check", str(apart)],
            capture_output=True,
            text=True,
            timeout=120,
        ).stderr
    )
    assert (
        run("bundle", "codabench", "--contest", str(apart), "-o", str(tmp_path / "apart.zip"), "--image", "x/podium:1")[
            0
        ]
        == 0
    )
    accepted = platform_check(platform_checks, "check_codabench_bundle.py", tmp_path / "apart.zip")
    assert accepted.returncode == 0, accepted.stdout + accepted.stderr


def test_codabench_bundle_is_the_same_bytes_each_time(contests: dict, tmp_path: Path) -> None:
    contest, _, _ = contests["ilsvrc2012-loc"]
    for name in ("a.zip", "b.zip"):
        assert (
            run(
                "bundle",
                "codabench",
                "--contest",
                str(contest.path),
                "-o",
                str(tmp_path / name),
                "--image",
                "x/podium:1",
            )[0]
            == 0
        )
    assert (tmp_path / "a.zip").read_bytes() == (tmp_path / "b.zip").read_bytes()
    names = zipfile.ZipFile(tmp_path / "a.zip").namelist()
    assert (
        "reference_data/data/boxes/boxes/ILSVRC2012_val_00000001.xml" in names
        and "reference_data/data/meta/meta.mat" in names
    )


def test_a_final_phase_shows_the_private_split_as_its_leaderboard_row_does(contests: dict) -> None:
    """The private task's detailed report: the private split's scores and units, not the whole test set's beside the private row."""
    from podium.publish.report import render_report

    contest, _, expected = contests["glas"]
    part = shown(expected, PRIVATE)
    private, whole = expected.splits[PRIVATE].scores, expected.scores
    assert part.document["scores"] == part.scores == private and set(part.document["splits"]) == {PRIVATE}
    assert set(part.document["units"]["rows"]) == {
        unit for unit, split in contest.split.split_of.items() if split == PRIVATE
    }
    meets_the_schema(json.loads(json.dumps(part.document)))
    page = render_report(part.document, "your submission")
    assert private["object_hausdorff"] != whole["object_hausdorff"]
    assert f"{private['object_hausdorff']:.6f}" in page and f"{whole['object_hausdorff']:.6f}" not in page


def test_codabench_without_a_contest_takes_the_truth_from_ref(contests: dict, tmp_path: Path) -> None:
    """The scoring program of a hand-made bundle: the challenge named, ref/ holding the truth folder's files or the truth file."""
    for challenge_id in ("glas", "camera-traps"):
        _, demo, _ = contests[challenge_id]
        ref, res = tmp_path / challenge_id / "ref", tmp_path / challenge_id / "res"
        shutil.copytree(demo.truth, ref) if demo.truth.is_dir() else (
            ref.mkdir(parents=True),
            shutil.copy(demo.truth, ref),
        )
        _submission_files(demo, res / "team")  # a zip of a folder: its one top folder is looked through
        out = tmp_path / challenge_id / "out"
        command = [
            sys.executable,
            "-m",
            "podium",
            "codabench",
            challenge_id,
            "--input",
            str(ref.parent),
            "--output",
            str(out),
            "--workers",
            "1",
        ]
        finished = subprocess.run(command, capture_output=True, text=True, timeout=120)
        assert finished.returncode == 0, finished.stderr
        expected = evaluate(challenge_id, demo.truth, demo.submission)
        assert json.loads((out / "scores.json").read_text()) == _platform_numbers(challenge_id, expected.scores)


def test_codabench_rejection_exits_1_with_every_problem_in_the_log(contests: dict, tmp_path: Path) -> None:
    _, demo, _ = contests["fuzzy-jaccard"]
    ref, res = tmp_path / "input" / "ref", tmp_path / "input" / "res"
    shutil.copytree(demo.truth, ref)
    _submission_files(demo, res)
    (res / "Roads").mkdir()
    (res / "road" / "image_0001.png").write_bytes(b"not a png")
    code, output = run(
        "codabench",
        "fuzzy-jaccard",
        "--input",
        str(tmp_path / "input"),
        "--output",
        str(tmp_path / "out"),
        "--workers",
        "1",
    )
    assert code == 1
    assert "podium fuzzy-jaccard: rejected" in output
    assert (
        "error Roads: folder 'Roads' is not a class" in output and "error road/image_0001.png:" in output
    )  # named inside the submission
    assert not (tmp_path / "out" / "scores.json").exists()
    assert "rejected" in (tmp_path / "out" / "detailed_results.html").read_text()


def test_codabench_copies_links_and_fifos_beside_its_metadata_as_what_they_are(contests: dict, tmp_path: Path) -> None:
    """Files beside the worker's metadata are staged without it: a link stays a link and a FIFO a FIFO, refused by name, never opened."""
    _, demo, _ = contests["glas"]
    shutil.copytree(demo.truth, tmp_path / "input" / "ref")
    res = _submission_files(demo, tmp_path / "input" / "res")
    (res / "metadata").write_text("exitCode: 0\n")
    first, second, *_ = sorted(p.name for p in res.glob("*.png"))
    (res / first).unlink()
    (res / first).symlink_to(
        demo.truth / next(iter(sorted(p.name for p in demo.truth.iterdir())))
    )  # the truth, through a link
    (res / second).unlink()
    os.mkfifo(res / second)  # opening it would block for ever
    code, output = run(
        "codabench", "glas", "--input", str(tmp_path / "input"), "--output", str(tmp_path / "out"), "--workers", "1"
    )
    assert (
        code == 1
        and f"error {first}: is a symbolic link" in output
        and f"error {second}: is not a regular file" in output
    ), output
    assert (
        "metadata" not in output and (res / "metadata").is_file() and (res / first).is_symlink()
    )  # the platform's folder as it was


def test_codabench_refuses_keys_that_are_not_scores(contests: dict, tmp_path: Path) -> None:
    _, demo, _ = contests["glas"]
    shutil.copytree(demo.truth, tmp_path / "input" / "ref")
    _submission_files(demo, tmp_path / "input" / "res")
    code, output = run(
        "codabench",
        "glas",
        "--input",
        str(tmp_path / "input"),
        "--output",
        str(tmp_path / "out"),
        "--keys",
        "f1,accuracy",
    )
    assert code == 2 and "--keys accuracy: not scores of glas" in output


def test_an_undefined_score_becomes_the_losing_sentinel() -> None:
    assert numbers_only("glas", {"object_hausdorff": None, "f1": 0})[0] == {
        "object_hausdorff": SENTINEL,
        "f1": 0,
    }  # 0 is a number, not null
    assert numbers_only("ilsvrc2012-fine", {"ap/3": None, "ap/4": 0.5})[0] == {
        "ap/4": 0.5
    }  # per-class AP is descriptive: a null is left out
    assert SENTINEL < 10**10  # Codabench's score column: a decimal with ten integer digits


def test_a_score_that_needs_measurements_is_no_column_and_cannot_rank(contests: dict, tmp_path: Path) -> None:
    """Face-clustering's final points need a measured time and memory, which no platform of files has: every team would get -1e9."""
    contest, _, expected = contests["face-clustering"]  # ranked by pairwise_f (the fixture's [ranking] by)
    assert expected.splits[PUBLIC].scores["final"] is None
    keys = [c.key for c in columns(contest)]
    assert keys[0] == "pairwise_f" and "final" not in keys
    numbers, notes = numbers_only("face-clustering", expected.splits[PUBLIC].scores)
    assert "final" not in numbers and "final is undefined without a measured time and memory: left out" in notes
    by_final = tmp_path / "contest.toml"
    by_final.write_text(contest.path.read_text().replace('by = "pairwise_f"\n', ""))
    assert load(by_final).ranking.by is None  # the challenge's rule: final points
    for args in (
        ["codabench", "--image", "x/podium:1", "-o", str(tmp_path / "b.zip")],
        ["evalai", "-o", str(tmp_path / "kit")],
    ):
        code, output = run("bundle", args[0], "--contest", str(by_final), *args[1:])
        assert (
            code == 2
            and "ranks by final, which needs the running time and memory" in output
            and "[ranking] by = one of pairwise_f" in output
        ), output


# --- EvalAI ----------------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("challenge_id", IDS)
def test_evalai_evaluate_fills_each_split_and_shows_only_the_public_one(
    challenge_id: str, contests: dict, platform_checks: Path, tmp_path: Path
) -> None:
    contest, demo, expected = contests[challenge_id]
    kit = tmp_path / "kit"
    assert run("bundle", "evalai", "--contest", str(contest.path), "-o", str(kit))[0] == 0
    config = yaml.safe_load((kit / "challenge_config.podium.yaml").read_text())
    codenames = {split["codename"] for split in config["dataset_splits"]}
    assert codenames == {"public_split", "private_split"}
    assert config["leaderboard"][0]["schema"]["labels"] == [c.key for c in columns(contest)]
    phase = config["challenge_phases"][0]
    assert (
        phase["codename"] == "development"
        and phase["start_date"] == "2026-01-04 23:00:00"
        and phase["max_submissions_per_day"] == 5
    )
    visibility = {s["dataset_split_id"]: s["visibility"] for s in config["challenge_phase_splits"]}
    private_id = next(s["id"] for s in config["dataset_splits"] if s["codename"] == "private_split")
    assert visibility[private_id] == 1 and set(visibility.values()) == {1, 3}  # 1: the host only; 3: public

    checked = platform_check(platform_checks, "check_evalai_config.py", kit / "challenge_config.podium.yaml")
    assert checked.returncode == 0 and checked.stdout.strip().splitlines()[-1].startswith("OK "), (
        checked.stdout + checked.stderr
    )

    # EvalAI's submission worker: the script extracted and imported as a package, evaluate() called, its result checked
    submission = _zip_folder(_submission_files(demo, tmp_path / "files"), tmp_path / "submission.zip")
    rows, stdout = evalai_rows(platform_checks, kit, submission, phase["codename"])
    assert rows == {
        CODENAMES[split]: _platform_numbers(challenge_id, expected.splits[split].scores) for split in (PUBLIC, PRIVATE)
    }
    for values in rows.values():
        _assert_numbers(values)
    assert (
        "pip install -r" in stdout and "requirements.txt before importing the script" in stdout
    )  # the worker installs podium
    assert (kit / "evaluation_script" / "requirements.txt").read_text().splitlines()[-1] == f"podium=={podium_version}"
    shown_file = next(line for line in stdout.splitlines() if line.startswith("submission_result.json: "))
    assert (
        shown_file.startswith('submission_result.json: {"public_split": ') and "private_split" not in shown_file
    )  # the public split only


def test_evalai_takes_a_plain_truth_file_and_rejects_with_every_problem(contests: dict, tmp_path: Path) -> None:
    from podium.publish.platforms.evalai import evaluate as evalai_evaluate

    _, demo, _ = contests["camera-traps"]
    submission = next(demo.submission.iterdir()) if demo.submission.is_dir() else demo.submission
    (tmp_path / "annotations").mkdir()
    truth = Path(
        shutil.copy(demo.truth, tmp_path / "annotations")
    )  # alone: beside the demo's contest.toml it would be that contest's
    output = evalai_evaluate(str(truth), str(submission), "test", challenge="camera-traps")
    assert output["result"] == [
        {
            CODENAMES[None]: _platform_numbers(
                "camera-traps", evaluate("camera-traps", demo.truth, demo.submission).scores
            )
        }
    ]
    broken = tmp_path / "broken.csv"
    broken.write_text(submission.read_text().replace("\n", "\nnot,a,row\n", 1))
    with pytest.raises(SubmissionRejected, match="podium camera-traps: rejected"):
        evalai_evaluate(str(truth), str(broken), "test", challenge="camera-traps")


# --- Grand Challenge -------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("challenge_id", IDS)
def test_grand_challenge_writes_cases_and_aggregates_of_the_public_split(
    challenge_id: str, contests: dict, tmp_path: Path
) -> None:
    contest, demo, expected = contests[challenge_id]
    tarball = tmp_path / "ground_truth.tar.gz"
    assert run("bundle", "reference", "--contest", str(contest.path), "-o", str(tarball))[0] == 0
    ground_truth = (
        tmp_path / "opt" / "ml" / "input" / "data" / "ground_truth"
    )  # where the phase's ground truth is extracted
    with tarfile.open(tarball) as archive:
        archive.extractall(ground_truth, filter="data")
    _submission_files(
        demo, tmp_path / "input" / "team"
    )  # a zip of one folder, extracted beside the platform's inputs.json
    (tmp_path / "input" / "inputs.json").write_text("[]")
    input_dir = str(tmp_path / "input")
    code, output = run(
        "grand-challenge",
        "--input",
        input_dir,
        "--output",
        str(tmp_path / "output"),
        "--ground-truth",
        str(ground_truth),
        "--workers",
        "1",
    )
    assert code == 0 and "inputs.json" not in output, output
    metrics = json.loads((tmp_path / "output" / "metrics.json").read_text())
    assert set(metrics) == {"case", "aggregates", "podium"}
    assert metrics["aggregates"] == _platform_numbers(challenge_id, expected.splits[PUBLIC].scores)
    _assert_numbers(metrics["aggregates"])
    public_units = {unit for unit, split in contest.split.split_of.items() if split == PUBLIC}
    assert set(metrics["case"]) <= public_units  # no private unit, not even its name
    if challenge_id not in ("face-clustering", "ilsvrc2012-fine"):  # a partition, an AP per class: no per-item cases
        assert metrics["case"] and all(isinstance(v, dict) and v for v in metrics["case"].values())
    assert metrics["podium"]["split"] == PUBLIC and metrics["podium"]["signature"]["contest"]["id"] == contest.id


def test_grand_challenge_rejection_ends_stderr_with_the_line_the_participant_sees(
    contests: dict, tmp_path: Path
) -> None:
    contest, _, _ = contests["glas"]
    tarball = tmp_path / "gt.tar.gz"
    assert run("bundle", "reference", "--contest", str(contest.path), "-o", str(tarball))[0] == 0
    with tarfile.open(tarball) as archive:
        archive.extractall(tmp_path / "gt", filter="data")
    (tmp_path / "input").mkdir()
    (tmp_path / "input" / "testA_1.png").write_bytes(b"\x89PNG broken")
    command = [
        sys.executable,
        "-m",
        "podium",
        "grand-challenge",
        "--input",
        str(tmp_path / "input"),
        "--output",
        str(tmp_path / "out"),
        "--ground-truth",
        str(tmp_path / "gt"),
    ]
    finished = subprocess.run(command, capture_output=True, text=True, timeout=120)
    assert finished.returncode == 1
    assert (
        finished.stderr.strip().splitlines()[-1].startswith("rejected: 1 problem(s), the first: testA_1.png: ")
    )  # named in the submission
    assert not (tmp_path / "out" / "metrics.json").exists()


# --- degenerate submissions in every entry point ---------------------------------------------------------------------


def _degenerate(demo, folder: Path) -> dict[str, Path]:
    """The submission folders a platform unpacks from a zip of nothing, of one item (the first file; two lines of a table), of garbage."""
    made = {"empty": folder / "empty", "one item": folder / "one", "all rejected": folder / "garbage"}
    made["empty"].mkdir(parents=True)
    files = _submission_files(demo, folder / "all")
    shutil.copytree(files, made["one item"])
    shutil.copytree(files, made["all rejected"])
    paths = sorted(p for p in made["one item"].rglob("*") if p.is_file())
    if len(paths) == 1:  # a table: its header and first row
        paths[0].write_text("".join(paths[0].read_text().splitlines(keepends=True)[:2]))
    for path in paths[1:]:
        path.unlink()
    for path in made["all rejected"].rglob("*"):
        if path.is_file():
            path.write_bytes(b"not what the format says\n")
    return made


@pytest.mark.parametrize("challenge_id", IDS)
def test_degenerate_submissions_get_the_same_verdict_in_every_entry_point(
    challenge_id: str, contests: dict, tmp_path: Path
) -> None:
    """Empty, one item, all rejected: evaluate, report, codabench, grand-challenge and EvalAI's evaluate agree, and none fails inside podium."""
    from podium.publish.platforms.evalai import evaluate as evalai_evaluate

    contest, demo, _ = contests[challenge_id]
    reference = tmp_path / "reference"
    assert run("bundle", "reference", "--contest", str(contest.path), "-o", str(tmp_path / "reference.tar.gz"))[0] == 0
    with tarfile.open(tmp_path / "reference.tar.gz") as archive:
        archive.extractall(reference, filter="data")
    for case, submission in _degenerate(demo, tmp_path / "submissions").items():
        where = f"{challenge_id}, {case}"
        result = tmp_path / f"{case}.json"
        code, output = run(
            "evaluate",
            "--contest",
            str(contest.path),
            "--submission",
            str(submission),
            "--json",
            str(result),
            "--workers",
            "1",
        )
        scored = code == 0
        assert code in (0, 1) and "internal error" not in output, (where, output)
        code, output = run("report", str(result), "-o", str(tmp_path / f"{case}.html"))
        assert code == 0, (where, output)

        app = tmp_path / case / "app"
        shutil.copytree(reference, app / "input" / "ref")
        shutil.copytree(submission, app / "input" / "res")
        (app / "input" / "res" / "metadata").write_text("exitCode: 0\n")  # as Codabench's worker leaves it
        code, output = run(
            "codabench", "--input", str(app / "input"), "--output", str(app / "output"), "--workers", "1"
        )
        assert code == (0 if scored else 1) and "internal error" not in output, (where, output)
        assert (app / "output" / "detailed_results.html").is_file() and (
            app / "output" / "scores.json"
        ).is_file() == scored, where
        if scored:
            _assert_numbers(json.loads((app / "output" / "scores.json").read_text()))

        code, output = run(
            "grand-challenge",
            "--input",
            str(submission),
            "--output",
            str(tmp_path / case / "gc"),
            "--ground-truth",
            str(reference),
            "--workers",
            "1",
        )
        assert code == (0 if scored else 1) and "internal error" not in output, (where, output)
        assert (tmp_path / case / "gc" / "metrics.json").is_file() == scored, where

        packed = _zip_folder(
            submission, tmp_path / f"{case}.zip"
        )  # an empty zip is refused as such, by evaluate as by EvalAI's entry
        scored = run("evaluate", "--contest", str(contest.path), "--submission", str(packed), "--workers", "1")[0] == 0
        if scored:
            assert all(
                _assert_numbers(values) is None
                for entry in evalai_evaluate(str(tmp_path / "reference.tar.gz"), str(packed), "test")["result"]
                for values in entry.values()
            )
        else:
            with pytest.raises(SubmissionRejected, match="rejected"):
                evalai_evaluate(str(tmp_path / "reference.tar.gz"), str(packed), "test")


# --- the reference folder and the image ------------------------------------------------------------------------------


def test_reference_folder_keeps_a_list_split_and_refuses_program_contests(tmp_path: Path) -> None:
    demo = get("camera-traps").write_demo(tmp_path / "demo")
    units = get("camera-traps").units(demo.truth, {})
    (tmp_path / "public.txt").write_text("\n".join(units[:7]) + "\n")
    contest_file = tmp_path / "contest.toml"
    contest_file.write_text(
        f'id = "ct"\ntitle = "T\\u00e9st \\"quoted\\""\nchallenge = "camera-traps"\ntruth = {json.dumps(str(demo.truth))}\n'
        '[split]\npublic_list = "public.txt"\n[[phase]]\nname = "one"\nstart = 2026-01-01T00:00:00Z\nend = 2026-02-01T00:00:00Z\nsubmissions = "files"\n'
    )
    tarball = tmp_path / "reference.tar.gz"
    assert run("bundle", "reference", "--contest", str(contest_file), "-o", str(tarball))[0] == 0
    with tarfile.open(tarball) as archive:
        archive.extractall(tmp_path / "reference", filter="data")
    copy = load(tmp_path / "reference" / "contest.toml")
    original = load(contest_file)
    assert copy.title == 'Tést "quoted"' and copy.split.split_of == original.split.split_of
    assert copy.stamp()["split"]["fingerprint"] == original.stamp()["split"]["fingerprint"]
    programs = replace(original, phases=(original.phases[0].model_copy(update={"submissions": "programs"}),))
    with pytest.raises(UsageError, match="phase one takes programs"):
        reference_of(programs)


def test_the_dockerfile_is_podiums_and_pins_every_package() -> None:
    """No Docker engine runs here: the image is checked by its file, and its entry points are run directly above."""
    from podium.publish.platforms.image import DOCKERFILE, DOCKERIGNORE

    text = (REPOSITORY / "Dockerfile").read_text()
    assert text == DOCKERFILE and (REPOSITORY / ".dockerignore").read_text() == DOCKERIGNORE
    lines = [line for line in text.splitlines() if line and not line.startswith("#")]
    assert lines[0].startswith("FROM python:3.12-slim")
    for line in lines:
        if line.startswith("COPY "):
            assert all((REPOSITORY / source).exists() for source in line.split()[1:-1])
    assert "pip install --constraint constraints.txt ." in text
    assert json.loads(lines[-1].removeprefix("CMD ")) == ["podium", "grand-challenge"]
    pinned = {
        line.split("==")[0].lower().replace("_", "-")
        for line in (REPOSITORY / "constraints.txt").read_text().splitlines()
        if "==" in line
    }
    import tomllib

    dependencies = tomllib.loads((REPOSITORY / "pyproject.toml").read_text())["project"]["dependencies"]
    names = {dep.split(">")[0].split("[")[0].split("=")[0].strip().lower().replace("_", "-") for dep in dependencies}
    assert names - pinned == set()


# --- the package: scoring without the web stack ----------------------------------------------------------------------

WITHOUT_SERVICE = """
import importlib.abc, sys
class Absent(importlib.abc.MetaPathFinder):  # as if podium were installed without its service extra
    def find_spec(self, name, path, target=None):
        if name.split(".")[0] in {"fastapi", "starlette", "uvicorn", "sqlalchemy", "alembic", "psycopg", "prometheus_client"}:
            raise ModuleNotFoundError(f"No module named {name!r}", name=name)
sys.meta_path.insert(0, Absent())
sys.argv[0] = "podium"
if sys.argv[1] == "python":
    exec(sys.argv[2])
else:
    from podium.cli import main
    main()
"""


def test_scoring_needs_no_web_stack_and_serve_says_which_extra(contests: dict, tmp_path: Path) -> None:
    """The web stack is the extra podium[service]: every scoring command and entry point works without it; serve says what to install."""
    import tomllib

    project = tomllib.loads((REPOSITORY / "pyproject.toml").read_text())["project"]
    web = {
        "fastapi",
        "uvicorn",
        "sqlalchemy",
        "alembic",
        "psycopg",
        "prometheus-client",
        "markdown-it-py",
        "uvloop",
        "httptools",
    }
    assert not {dep.split(">")[0].split("[")[0] for dep in project["dependencies"]} & web
    assert {dep.split(">")[0].split("[")[0] for dep in project["optional-dependencies"]["service"]} == web
    assert "service" in project["optional-dependencies"]["test"][0]  # make setup installs what the tests need
    contest, demo, _ = contests["glas"]
    script = tmp_path / "without_service.py"
    script.write_text(WITHOUT_SERVICE)

    def podium(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run([sys.executable, str(script), *args], capture_output=True, text=True, timeout=300)

    for args in (
        ["evaluate", "--contest", str(contest.path), "--submission", str(demo.submission), "--workers", "1"],
        ["bundle", "codabench", "--contest", str(contest.path), "-o", str(tmp_path / "b.zip"), "--image", "x/podium:1"],
        ["bundle", "evalai", "--contest", str(contest.path), "-o", str(tmp_path / "kit")],
        [
            "python",
            "import podium; print(podium.metrics.object_f1_score.__name__)",
        ],  # podium.metrics with no import of it first
    ):
        finished = podium(*args)
        assert finished.returncode == 0, (args, finished.stdout, finished.stderr)
    for args in (
        ["serve", "--contest", str(contest.path), "--data", str(tmp_path / "data")],
        ["team", "add", "a", "--contest", str(contest.path), "--data", str(tmp_path / "data")],
    ):
        finished = podium(*args)
        assert (
            finished.returncode == 2
            and "pip install 'podium[service]'" in finished.stderr
            and "Traceback" not in finished.stderr
        ), finished.stderr


# --- archives everywhere ---------------------------------------------------------------------------------------------


def test_evaluate_takes_a_zip_or_tar_gz_and_names_problems_inside_it(contests: dict, tmp_path: Path) -> None:
    _, demo, _ = contests["fuzzy-jaccard"]
    folder_scores = evaluate("fuzzy-jaccard", demo.truth, demo.submission).scores
    packed = _zip_folder(demo.submission, tmp_path / "team.zip")
    assert evaluate("fuzzy-jaccard", demo.truth, packed).scores == folder_scores
    with tarfile.open(tmp_path / "team.tar.gz", "w:gz") as archive:
        archive.add(
            demo.submission, arcname="team"
        )  # one top folder: looked through, macOS's __MACOSX beside it ignored
        info = tarfile.TarInfo("__MACOSX/team/._image_0000.png")
        info.size = 4
        archive.addfile(info, io.BytesIO(b"fork"))
    assert evaluate("fuzzy-jaccard", demo.truth, tmp_path / "team.tar.gz").scores == folder_scores
    broken = tmp_path / "broken"
    shutil.copytree(demo.submission, broken / "team")
    (broken / "team" / "road" / "image_0001.png").write_bytes(b"nope")
    result = evaluate("fuzzy-jaccard", demo.truth, _zip_folder(broken, tmp_path / "broken.zip"))
    assert result.status == "rejected"
    assert [e.file for e in result.errors] == [f"{tmp_path / 'broken.zip'}/team/road/image_0001.png"]


def test_unsafe_archives_are_rejected_with_a_clear_message(contests: dict, tmp_path: Path) -> None:
    _, demo, _ = contests["glas"]
    slip = tmp_path / "slip.zip"
    with zipfile.ZipFile(slip, "w") as archive:
        archive.writestr("../outside.png", b"x")
    link = tmp_path / "link.tar.gz"
    with tarfile.open(link, "w:gz") as archive:
        info = tarfile.TarInfo("truth.png")
        info.type, info.linkname = tarfile.SYMTYPE, "/etc/passwd"
        archive.addfile(info)
    bomb = tmp_path / "bomb.zip"
    with zipfile.ZipFile(bomb, "w", zipfile.ZIP_DEFLATED) as archive:
        archive.writestr("testA_1.png", bytes(50 << 20))
    for path, words in ((slip, "'..'"), (link, "a link or a special file"), (bomb, "times its packed size")):
        code, output = run("evaluate", "glas", "--truth", str(demo.truth), "--submission", str(path))
        assert code == 1 and words in output and "Traceback" not in output, output
    assert not (tmp_path / "outside.png").exists()


def test_platform_entries_refuse_an_unusable_layout_with_exit_2(contests: dict, tmp_path: Path) -> None:
    """The organizer's side of the layout (exit 2, one message), never a rejection of the team or a traceback."""
    from podium.publish.platforms.evalai import evaluate as evalai_evaluate

    contest, demo, _ = contests["glas"]
    (tmp_path / "input" / "ref").mkdir(parents=True)
    cases = [
        (
            ["codabench", "--input", str(tmp_path / "input")],
            "name the CHALLENGE, or put a contest.toml in the reference folder",
        ),
        (
            ["codabench", "glas", "--input", str(tmp_path / "input"), "--truth", "truth"],
            "--truth truth: no such file or folder in the reference folder",
        ),
        (["codabench", "glas", "--input", str(tmp_path / "nowhere")], "the reference folder"),
        (
            ["grand-challenge", "--input", str(tmp_path / "none"), "--ground-truth", str(contest.path.parent)],
            "no submission folder",
        ),
        (
            [
                "grand-challenge",
                "--input",
                str(demo.submission),
                "--ground-truth",
                str(contest.path.parent),
                "--set",
                "parts=testA",
            ],
            "fixes the truth and the parameters",
        ),
        (
            [
                "grand-challenge",
                "camera-traps",
                "--input",
                str(demo.submission),
                "--ground-truth",
                str(contest.path.parent),
            ],
            "holds a glas contest",
        ),
    ]
    for args, words in cases:
        code, output = run(*args)
        assert code == 2 and words in output and "Traceback" not in output, (args, output)
    shutil.copytree(demo.truth, tmp_path / "input" / "ref", dirs_exist_ok=True)
    code, output = run("codabench", "glas", "--input", str(tmp_path / "input"), "--output", str(tmp_path / "out"))
    assert code == 2 and "no submission folder" in output and "input/res" in output
    (tmp_path / "bad.tar.gz").write_bytes(b"\x1f\x8b broken")
    with pytest.raises(UsageError, match=r"the test annotation file .*bad\.tar\.gz"):
        evalai_evaluate(str(tmp_path / "bad.tar.gz"), str(demo.submission), "test")
    with pytest.raises(UsageError, match="does not exist"):
        evalai_evaluate(str(tmp_path / "none.tar.gz"), str(demo.submission), "test")


# --- the example contests, through the platforms' own code --------------------------------------------------------------

EXAMPLES = REPOSITORY / "examples" / "contests"


@pytest.fixture(scope="module")
def example_contests(tmp_path_factory: pytest.TempPathFactory) -> dict[str, tuple[Path, Path | None]]:
    """Each example contest file and the submission folder to score with it: ``demo`` beside a demo set as ``make demo`` writes it."""
    root = tmp_path_factory.mktemp("checkout")
    for name in ("demo", "face-clustering"):
        shutil.copytree(EXAMPLES / name, root / "examples" / "contests" / name)
    demo = get("glas").write_demo(root / "demo-data" / "glas")
    get("face-clustering").write_demo(root / "demo-data" / "face-clustering")
    made: dict[str, tuple[Path, Path | None]] = {
        "demo": (root / "examples" / "contests" / "demo" / "contest.toml", demo.submission)
    }
    fixture = SHARED / "data" / "glas-fixture" / "submission"
    made["glas-fixture"] = (EXAMPLES / "glas-fixture" / "contest.toml", fixture if fixture.is_dir() else None)
    made["face-clustering"] = (
        root / "examples" / "contests" / "face-clustering" / "contest.toml",
        None,
    )  # programs: no files to submit
    made["ilsvrc2012-tasks"] = (
        EXAMPLES / "ilsvrc2012-tasks" / "contest.toml",
        None,
    )  # three tracks: a bundle takes one (test_tracks.py)
    made["camera-traps-phases"] = (
        EXAMPLES / "camera-traps-phases" / "contest.toml",
        None,
    )  # phases on their own data: test_phase_data.py takes a two-phase contest through both platforms
    assert {path.parent.name for path in EXAMPLES.glob("*/contest.toml")} == set(made)  # every example contest is here
    return made


@pytest.mark.parametrize("name", ["demo", "glas-fixture"])
def test_each_example_contest_loads_on_codabench_and_evalai_and_scores_as_podium_does(
    name: str, example_contests: dict, platform_checks: Path, tmp_path: Path
) -> None:
    """Codabench's unpacker takes the bundle and its worker scores a zip of files and a zip of a folder on each task; EvalAI's validator
    takes the kit and its worker scores the zips and a tar.gz of '.'; every number is ``podium evaluate``'s."""
    contest_file, submission = example_contests[name]
    if submission is None:
        pytest.skip(f"the {name} contest's data is not at {SHARED / 'data'}")
    contest = load(contest_file)
    expected = evaluate(contest.challenge, contest.truth, submission, contest.settings, **contest.evaluation())
    keys = [c.key for c in columns(contest)]
    bundle = tmp_path / "bundle.zip"
    assert (
        run(
            "bundle", "codabench", "--contest", str(contest_file), "-o", str(bundle), "--image", "ghcr.io/org/podium:1"
        )[0]
        == 0
    )
    checked = platform_check(platform_checks, "check_codabench_bundle.py", bundle)
    assert checked.returncode == 0 and checked.stdout.startswith("OK "), checked.stdout + checked.stderr
    packed = packed_three_ways(submission, tmp_path / "packed")
    for packing in packed.values():  # the participant's own check: podium evaluate of each
        assert (
            evaluate(contest.challenge, contest.truth, packing, contest.settings, **contest.evaluation()).splits
            == expected.splits
        )
    overview = zipfile.ZipFile(bundle).read("pages/overview.md").decode()
    command = re.search(r"`(podium evaluate [^`]+)`", overview)
    assert (
        command is not None
    )  # the command the overview gives participants, run as they would: the contest's parameters in it
    args = [
        {"TRUTH": str(contest.truth), "YOUR_SUBMISSION": str(packed["folder.zip"])}.get(a, a)
        for a in shlex.split(command.group(1))[1:]
    ]
    assert run(*args, "--json", str(tmp_path / "local.json"))[0] == 0
    assert json.loads((tmp_path / "local.json").read_text())["scores"] == json.loads(json.dumps(expected.scores))
    for task, split, zipped in ((0, PUBLIC, "folder.zip"), (1, PRIVATE, "files.zip"), (0, PUBLIC, "files.zip")):
        scores = codabench_scores(
            platform_checks, bundle, packed[zipped], task, tmp_path / f"out-{task}-{zipped}", "--no-sandbox"
        )
        assert scores == numbers_only(contest.challenge, expected.splits[split].scores, keys)[0], (task, zipped)

    kit = tmp_path / "kit"
    code, output = run("bundle", "evalai", "--contest", str(contest_file), "-o", str(kit))
    assert code == 0, output
    checked = platform_check(platform_checks, "check_evalai_config.py", kit / "challenge_config.podium.yaml")
    assert checked.returncode == 0 and checked.stdout.strip().splitlines()[-1].startswith("OK "), (
        checked.stdout + checked.stderr
    )
    phase = yaml.safe_load((kit / "challenge_config.podium.yaml").read_text())["challenge_phases"][-1]["codename"]
    for packing in packed.values():
        rows, _ = evalai_rows(platform_checks, kit, packing, phase)
        assert rows == {
            CODENAMES[split]: numbers_only(contest.challenge, expected.splits[split].scores)[0]
            for split in (PUBLIC, PRIVATE)
        }, packing.name


def test_the_example_contest_of_programs_is_refused_with_the_reason(example_contests: dict) -> None:
    """Platform bundles score files: face-clustering's example takes programs (time and RAM measured), which no bundle runs."""
    contest_file, _ = example_contests["face-clustering"]
    for args in (["codabench", "--image", "x/podium:1", "-o", "b.zip"], ["evalai", "-o", "kit"]):
        code, output = run("bundle", args[0], "--contest", str(contest_file), *args[1:])
        assert code == 2 and "phase test takes programs" in output and "Traceback" not in output, output


def test_codabench_scores_in_the_workers_sandbox(
    example_contests: dict, platform_checks: Path, sandbox: None, tmp_path: Path
) -> None:
    """The one sandboxed run: the worker's mounts only (/app/program, /app/input, ...), no network, an empty home (Numba compiles again)."""
    contest_file, submission = example_contests["demo"]
    contest = load(contest_file)
    bundle = tmp_path / "bundle.zip"
    assert (
        run("bundle", "codabench", "--contest", str(contest_file), "-o", str(bundle), "--image", "x/podium:1")[0] == 0
    )
    spec = yaml.safe_load(zipfile.ZipFile(bundle).read("competition.yaml"))
    packed = packed_three_ways(submission, tmp_path / "packed")
    finished = platform_check(
        platform_checks,
        "run_codabench_scoring.py",
        bundle,
        packed["folder.zip"],
        "--task",
        "1",
        "--path",
        PODIUM_BIN,
        "--out",
        tmp_path / "out",
    )
    assert "mode: bubblewrap" in finished.stdout and "status: Finished" in finished.stdout, (
        finished.stdout + finished.stderr
    )
    expected = evaluate("glas", contest.truth, submission, contest.settings, **contest.evaluation())
    keys = [c.key for c in columns(contest)]
    assert (
        json.loads((tmp_path / "out" / "scores.json").read_text())
        == numbers_only("glas", expected.splits[PRIVATE].scores, keys)[0]
    )
    seconds = re.search(r"\(([\d.]+) s wall", finished.stdout)
    assert (
        seconds is not None and float(seconds.group(1)) < min(p["execution_time_limit"] for p in spec["phases"]) / 2
    )  # room for a loaded worker
