"""podium on Codabench, EvalAI and Grand Challenge: each entry point run on every challenge's demo set in the platform's own layout.

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

import importlib.util
import io
import json
import math
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

from conftest import run
from podium.challenges import IDS, get
from podium.contest import load
from podium.engine import evaluate
from podium.errors import UsageError
from podium.platforms.columns import columns
from podium.platforms.evalai import CODENAMES, SubmissionRejected
from podium.platforms.reference import reference_of
from podium.platforms.scores import SENTINEL, numbers_only
from podium.result import PRIVATE, PUBLIC

REPOSITORY = Path(__file__).resolve().parents[1]
CODABENCH_RULES = {"Add", "Add_And_Delete", "Add_And_Delete_Multiple", "Force_Last", "Force_Latest_Multiple", "Force_Best"}


@pytest.fixture(scope="module")
def contests(tmp_path_factory: pytest.TempPathFactory) -> dict:
    """Every challenge's demo set with a contest file (a public/private split drawn with a seed) beside it."""
    made = {}
    for challenge_id in IDS:
        folder = tmp_path_factory.mktemp(challenge_id)
        demo = get(challenge_id).write_demo(folder)
        measured = {p.name for p in get(challenge_id).parameters if p.role == "measured"}
        parameters = "".join(f"{key} = {json.dumps(value)}\n" for key, value in demo.settings.items() if key not in measured)
        contest_file = folder / "contest.toml"
        contest_file.write_text(
            f'id = "{challenge_id}-demo"\ntitle = "The {challenge_id} demo"\nchallenge = "{challenge_id}"\n'
            f'truth = {json.dumps(str(demo.truth))}\ntimezone = "Europe/Paris"\n[parameters]\n{parameters}'
            "[split]\npublic = 0.5\nseed = 3\n"
            '[[phase]]\nname = "Development"\nstart = 2026-01-05T00:00:00+01:00\nend = 2026-03-01T00:00:00+01:00\nsubmissions = "files"\n'
            "[quota]\nper_day = 5\ntotal = 100\n[ranking]\ndecimals = 3\nfinal = \"last\"\n"
        )  # fmt: skip
        contest = load(contest_file)
        expected = evaluate(challenge_id, contest.truth, demo.submission, contest.settings, **contest.evaluation())
        made[challenge_id] = (contest, demo, expected)
    return made


def _platform_numbers(challenge_id: str, scores: dict, keys: list[str] | None = None) -> dict:
    return numbers_only(challenge_id, scores, keys)[0]


def _assert_numbers(values: dict) -> None:
    assert values and all(isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v) for v in values.values()), values


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
def test_codabench_bundle_scores_each_split_as_podium_does(challenge_id: str, contests: dict, tmp_path: Path) -> None:
    contest, demo, expected = contests[challenge_id]
    bundle = tmp_path / "bundle.zip"
    assert run("bundle", "codabench", "--contest", str(contest.path), "-o", str(bundle), "--image", "ghcr.io/org/podium:1")[0] == 0
    with zipfile.ZipFile(bundle) as archive:
        archive.extractall(tmp_path / "bundle")
    spec = yaml.safe_load((tmp_path / "bundle" / "competition.yaml").read_text())
    keys = [c["key"] for c in spec["leaderboards"][0]["columns"]]
    assert keys == [c.key for c in columns(contest)]
    for program, split in (("scoring_program", PUBLIC), ("scoring_program_private", PRIVATE)):
        # Codabench's layout: the task's reference data in input/ref, the unpacked submission in input/res.
        shutil.rmtree(tmp_path / "app", ignore_errors=True)
        shutil.copytree(tmp_path / "bundle" / "reference_data", tmp_path / "app" / "input" / "ref")
        _submission_files(demo, tmp_path / "app" / "input" / "res")
        command = yaml.safe_load((tmp_path / "bundle" / program / "metadata.yaml").read_text())["command"]
        args = [a.replace("/app/", f"{tmp_path}/app/") for a in shlex.split(command)]
        assert args[0] == "podium"
        code, output = run(*args[1:], "--workers", "1")
        assert code == 0, output
        scores = json.loads((tmp_path / "app" / "output" / "scores.json").read_text())
        assert list(scores) == keys  # exactly the columns' keys, in their order
        _assert_numbers(scores)
        assert scores == _platform_numbers(challenge_id, expected.splits[split].scores, keys)
        assert (tmp_path / "app" / "output" / "detailed_results.html").read_text().startswith("<!doctype html>")
        assert f"{split} split" in output


def test_codabench_bundle_has_what_codabench_requires(contests: dict, tmp_path: Path) -> None:
    contest, _, _ = contests["glas"]
    bundle = tmp_path / "bundle.zip"
    assert run("bundle", "codabench", "--contest", str(contest.path), "-o", str(bundle), "--image", "ghcr.io/org/podium:1")[0] == 0
    archive = zipfile.ZipFile(bundle)
    names = set(archive.namelist())
    spec = yaml.safe_load(archive.read("competition.yaml"))
    assert spec["version"] == 2 and spec["title"] == contest.title and spec["docker_image"] == "ghcr.io/org/podium:1"
    assert spec["image"] in names and archive.read(spec["terms"]).strip()
    assert spec["pages"] and all(archive.read(page["file"]).strip() for page in spec["pages"])
    assert spec["enable_detailed_results"] is True
    tasks = {task["index"]: task for task in spec["tasks"]}
    assert len(tasks) == len(spec["tasks"]) == 2
    for task in tasks.values():
        assert f"{task['scoring_program']}metadata.yaml" in names
        assert yaml.safe_load(archive.read(f"{task['scoring_program']}metadata.yaml"))["command"].startswith("podium codabench ")
        assert f"{task['reference_data']}contest.toml" in names
    phases = sorted(spec["phases"], key=lambda p: p["index"])
    assert [p["name"] for p in phases] == ["Development", "final ranking (private split)"]
    assert all(p["tasks"] and set(p["tasks"]) <= set(tasks) for p in phases)
    starts = [datetime.fromisoformat(p["start"]) for p in phases]
    assert starts[0] == datetime.fromisoformat("2026-01-04T23:00:00+00:00")  # Paris midnight, written in UTC
    assert datetime.fromisoformat(phases[0]["end"]) == starts[1]  # the final phase opens as the last one closes
    assert phases[0]["max_submissions_per_day"] == 5 and phases[0]["max_submissions"] == 100
    assert phases[1]["auto_migrate_to_this_phase"] is True and phases[1]["tasks"] == [1]
    board = spec["leaderboards"][0]
    assert board["title"] and board["key"] and board["submission_rule"] in CODABENCH_RULES and board["submission_rule"] == "Force_Last"
    assert [(c["key"], c["sorting"], c["index"], c["precision"]) for c in board["columns"]] == [
        ("f1", "desc", 0, 3), ("object_dice", "desc", 1, 3), ("object_hausdorff", "asc", 2, 3)
    ]  # fmt: skip
    assert "sum of their ranks" in archive.read("pages/overview.md").decode()  # GlaS's rule cannot be a column order
    assert archive.read("scoring_image/Dockerfile").decode() == (REPOSITORY / "Dockerfile").read_text()


def test_codabench_bundle_is_the_same_bytes_each_time(contests: dict, tmp_path: Path) -> None:
    contest, _, _ = contests["ilsvrc2012-loc"]
    for name in ("a.zip", "b.zip"):
        assert run("bundle", "codabench", "--contest", str(contest.path), "-o", str(tmp_path / name), "--image", "x/podium:1")[0] == 0
    assert (tmp_path / "a.zip").read_bytes() == (tmp_path / "b.zip").read_bytes()
    names = zipfile.ZipFile(tmp_path / "a.zip").namelist()
    assert "reference_data/data/boxes/boxes/ILSVRC2012_val_00000001.xml" in names and "reference_data/data/meta/meta.mat" in names


def test_codabench_without_a_contest_takes_the_truth_from_ref(contests: dict, tmp_path: Path) -> None:
    """The scoring program of a hand-made bundle: the challenge named, ref/ holding the truth folder's files or the truth file."""
    for challenge_id in ("glas", "camera-traps"):
        _, demo, _ = contests[challenge_id]
        ref, res = tmp_path / challenge_id / "ref", tmp_path / challenge_id / "res"
        shutil.copytree(demo.truth, ref) if demo.truth.is_dir() else (ref.mkdir(parents=True), shutil.copy(demo.truth, ref))
        _submission_files(demo, res / "team")  # a zip of a folder: its one top folder is looked through
        out = tmp_path / challenge_id / "out"
        command = [sys.executable, "-m", "podium.platforms.codabench", challenge_id, "--input", str(ref.parent), "--output", str(out), "--workers", "1"]
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
    code, output = run("codabench", "fuzzy-jaccard", "--input", str(tmp_path / "input"), "--output", str(tmp_path / "out"), "--workers", "1")
    assert code == 1
    assert "podium fuzzy-jaccard: rejected" in output
    assert "error Roads: folder 'Roads' is not a class" in output and "error road/image_0001.png:" in output  # named inside the submission
    assert not (tmp_path / "out" / "scores.json").exists()
    assert "rejected" in (tmp_path / "out" / "detailed_results.html").read_text()


def test_codabench_refuses_keys_that_are_not_scores(contests: dict, tmp_path: Path) -> None:
    _, demo, _ = contests["glas"]
    shutil.copytree(demo.truth, tmp_path / "input" / "ref")
    _submission_files(demo, tmp_path / "input" / "res")
    code, output = run("codabench", "glas", "--input", str(tmp_path / "input"), "--output", str(tmp_path / "out"), "--keys", "f1,accuracy")
    assert code == 2 and "--keys accuracy: not scores of glas" in output


def test_an_undefined_score_becomes_the_losing_sentinel(contests: dict) -> None:
    """Face-clustering's final score needs a measured time and memory: on a platform of files it is null."""
    contest, _, expected = contests["face-clustering"]
    public = expected.splits[PUBLIC].scores
    assert public["final"] is None
    numbers, notes = numbers_only("face-clustering", public, [c.key for c in columns(contest)])
    assert numbers["final"] == -SENTINEL and "final is undefined (null)" in notes[0]
    assert numbers_only("glas", {"object_hausdorff": None, "f1": 0})[0] == {"object_hausdorff": SENTINEL, "f1": 0}  # 0 is a number, not null
    assert numbers_only("ilsvrc2012-fine", {"ap/3": None, "ap/4": 0.5})[0] == {"ap/4": 0.5}  # per-class AP is descriptive: a null is left out
    assert SENTINEL < 10**10  # Codabench's score column: a decimal with ten integer digits


# --- EvalAI ----------------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("challenge_id", IDS)
def test_evalai_evaluate_fills_each_split_and_shows_only_the_public_one(challenge_id: str, contests: dict, tmp_path: Path) -> None:
    contest, demo, expected = contests[challenge_id]
    kit = tmp_path / "kit"
    assert run("bundle", "evalai", "--contest", str(contest.path), "-o", str(kit))[0] == 0
    config = yaml.safe_load((kit / "challenge_config.podium.yaml").read_text())
    codenames = {split["codename"] for split in config["dataset_splits"]}
    assert codenames == {"public_split", "private_split"}
    assert config["leaderboard"][0]["schema"]["labels"] == [c.key for c in columns(contest)]
    phase = config["challenge_phases"][0]
    assert phase["codename"] == "development" and phase["start_date"] == "2026-01-04 23:00:00" and phase["max_submissions_per_day"] == 5
    visibility = {s["dataset_split_id"]: s["visibility"] for s in config["challenge_phase_splits"]}
    private_id = next(s["id"] for s in config["dataset_splits"] if s["codename"] == "private_split")
    assert visibility[private_id] == 1 and set(visibility.values()) == {1, 3}  # 1: the host only; 3: public

    # EvalAI's worker unzips the evaluation script, imports it and calls evaluate() with the phase's annotation file.
    spec = importlib.util.spec_from_file_location(f"evaluation_script_{challenge_id.replace('-', '_')}", kit / "evaluation_script" / "__init__.py")
    assert spec is not None and spec.loader is not None
    script = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = script
    spec.loader.exec_module(script)
    submission = _zip_folder(_submission_files(demo, tmp_path / "files"), tmp_path / "submission.zip")
    output = script.evaluate(str(kit / phase["test_annotation_file"]), str(submission), phase["codename"], submission_metadata={"id": 7})
    assert output["result"] == [
        {"public_split": _platform_numbers(challenge_id, expected.splits[PUBLIC].scores)},
        {"private_split": _platform_numbers(challenge_id, expected.splits[PRIVATE].scores)},
    ]
    for entry in output["result"]:
        (codename, values), = entry.items()
        assert codename in codenames
        _assert_numbers(values)
    assert output["submission_result"] == output["result"][0]  # what the participant reads: the public split only


def test_evalai_takes_a_plain_truth_file_and_rejects_with_every_problem(contests: dict, tmp_path: Path) -> None:
    from podium.platforms.evalai import evaluate as evalai_evaluate

    _, demo, _ = contests["camera-traps"]
    submission = next(demo.submission.iterdir()) if demo.submission.is_dir() else demo.submission
    (tmp_path / "annotations").mkdir()
    truth = Path(shutil.copy(demo.truth, tmp_path / "annotations"))  # alone: beside the demo's contest.toml it would be that contest's
    output = evalai_evaluate(str(truth), str(submission), "test", challenge="camera-traps")
    assert output["result"] == [{CODENAMES[None]: _platform_numbers("camera-traps", evaluate("camera-traps", demo.truth, demo.submission).scores)}]
    broken = tmp_path / "broken.csv"
    broken.write_text(submission.read_text().replace("\n", "\nnot,a,row\n", 1))
    with pytest.raises(SubmissionRejected, match="podium camera-traps: rejected"):
        evalai_evaluate(str(truth), str(broken), "test", challenge="camera-traps")


# --- Grand Challenge -------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("challenge_id", IDS)
def test_grand_challenge_writes_cases_and_aggregates_of_the_public_split(challenge_id: str, contests: dict, tmp_path: Path) -> None:
    contest, demo, expected = contests[challenge_id]
    tarball = tmp_path / "ground_truth.tar.gz"
    assert run("bundle", "reference", "--contest", str(contest.path), "-o", str(tarball))[0] == 0
    ground_truth = tmp_path / "opt" / "ml" / "input" / "data" / "ground_truth"  # where the phase's ground truth is extracted
    with tarfile.open(tarball) as archive:
        archive.extractall(ground_truth, filter="data")
    submission = _submission_files(demo, tmp_path / "input")
    code, output = run("grand-challenge", "--input", str(submission), "--output", str(tmp_path / "output"), "--ground-truth", str(ground_truth), "--workers", "1")
    assert code == 0, output
    metrics = json.loads((tmp_path / "output" / "metrics.json").read_text())
    assert set(metrics) == {"case", "aggregates", "podium"}
    assert metrics["aggregates"] == _platform_numbers(challenge_id, expected.splits[PUBLIC].scores)
    _assert_numbers(metrics["aggregates"])
    public_units = {unit for unit, split in contest.split.split_of.items() if split == PUBLIC}
    assert set(metrics["case"]) <= public_units  # no private unit, not even its name
    if challenge_id not in ("face-clustering", "ilsvrc2012-fine"):  # a partition, an AP per class: no per-item cases
        assert metrics["case"] and all(isinstance(v, dict) and v for v in metrics["case"].values())
    assert metrics["podium"]["split"] == PUBLIC and metrics["podium"]["signature"]["contest"]["id"] == contest.id


def test_grand_challenge_rejection_ends_stderr_with_the_line_the_participant_sees(contests: dict, tmp_path: Path) -> None:
    contest, _, _ = contests["glas"]
    tarball = tmp_path / "gt.tar.gz"
    assert run("bundle", "reference", "--contest", str(contest.path), "-o", str(tarball))[0] == 0
    with tarfile.open(tarball) as archive:
        archive.extractall(tmp_path / "gt", filter="data")
    (tmp_path / "input").mkdir()
    (tmp_path / "input" / "testA_1.png").write_bytes(b"\x89PNG broken")
    command = [sys.executable, "-m", "podium", "grand-challenge", "--input", str(tmp_path / "input"), "--output", str(tmp_path / "out"), "--ground-truth", str(tmp_path / "gt")]
    finished = subprocess.run(command, capture_output=True, text=True, timeout=120)
    assert finished.returncode == 1
    assert finished.stderr.strip().splitlines()[-1].startswith("rejected: ")
    assert not (tmp_path / "out" / "metrics.json").exists()


# --- the reference folder and the image ------------------------------------------------------------------------------


def test_reference_folder_keeps_a_list_split_and_refuses_program_contests(tmp_path: Path) -> None:
    demo = get("camera-traps").write_demo(tmp_path / "demo")
    units = get("camera-traps").units(demo.truth, {})
    (tmp_path / "public.txt").write_text("\n".join(units[:7]) + "\n")
    contest_file = tmp_path / "contest.toml"
    contest_file.write_text(
        f'id = "ct"\ntitle = "T\\u00e9st \\"quoted\\""\nchallenge = "camera-traps"\ntruth = {json.dumps(str(demo.truth))}\n'
        '[split]\npublic_list = "public.txt"\n[[phase]]\nname = "one"\nstart = 2026-01-01T00:00:00Z\nend = 2026-02-01T00:00:00Z\nsubmissions = "files"\n'
    )  # fmt: skip
    tarball = tmp_path / "reference.tar.gz"
    assert run("bundle", "reference", "--contest", str(contest_file), "-o", str(tarball))[0] == 0
    with tarfile.open(tarball) as archive:
        archive.extractall(tmp_path / "reference", filter="data")
    copy = load(tmp_path / "reference" / "contest.toml")
    original = load(contest_file)
    assert copy.title == 'Tést "quoted"' and copy.split.split_of == original.split.split_of
    assert copy.stamp()["split"]["fingerprint"] == original.stamp()["split"]["fingerprint"]
    programs = replace(original, phases=(replace(original.phases[0], submissions="programs"),))
    with pytest.raises(UsageError, match="phase one takes programs"):
        reference_of(programs)


def test_the_dockerfile_is_podiums_and_pins_every_package() -> None:
    """No Docker engine runs here: the image is checked by its file, and its entry points are run directly above."""
    from podium.platforms.image import DOCKERFILE, DOCKERIGNORE

    text = (REPOSITORY / "Dockerfile").read_text()
    assert text == DOCKERFILE and (REPOSITORY / ".dockerignore").read_text() == DOCKERIGNORE
    lines = [line for line in text.splitlines() if line and not line.startswith("#")]
    assert lines[0].startswith("FROM python:3.12-slim")
    for line in lines:
        if line.startswith("COPY "):
            assert all((REPOSITORY / source).exists() for source in line.split()[1:-1])
    assert "pip install --constraint constraints.txt ." in text
    assert json.loads(lines[-1].removeprefix("CMD ")) == ["podium", "grand-challenge"]
    pinned = {line.split("==")[0].lower().replace("_", "-") for line in (REPOSITORY / "constraints.txt").read_text().splitlines() if "==" in line}
    import tomllib

    dependencies = tomllib.loads((REPOSITORY / "pyproject.toml").read_text())["project"]["dependencies"]
    names = {dep.split(">")[0].split("[")[0].split("=")[0].strip().lower().replace("_", "-") for dep in dependencies}
    assert names - pinned == set()


# --- archives everywhere ---------------------------------------------------------------------------------------------


def test_evaluate_takes_a_zip_or_tar_gz_and_names_problems_inside_it(contests: dict, tmp_path: Path) -> None:
    _, demo, _ = contests["fuzzy-jaccard"]
    folder_scores = evaluate("fuzzy-jaccard", demo.truth, demo.submission).scores
    packed = _zip_folder(demo.submission, tmp_path / "team.zip")
    assert evaluate("fuzzy-jaccard", demo.truth, packed).scores == folder_scores
    with tarfile.open(tmp_path / "team.tar.gz", "w:gz") as archive:
        archive.add(demo.submission, arcname="team")  # one top folder: looked through, macOS's __MACOSX beside it ignored
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
    from podium.platforms.evalai import evaluate as evalai_evaluate

    contest, demo, _ = contests["glas"]
    (tmp_path / "input" / "ref").mkdir(parents=True)
    cases = [
        (["codabench", "--input", str(tmp_path / "input")], "name the CHALLENGE, or put a contest.toml in the reference folder"),
        (["codabench", "glas", "--input", str(tmp_path / "input"), "--truth", "truth"], "--truth truth: no such file or folder in the reference folder"),
        (["codabench", "glas", "--input", str(tmp_path / "nowhere")], "the reference folder"),
        (["grand-challenge", "--input", str(tmp_path / "none"), "--ground-truth", str(contest.path.parent)], "no submission folder"),
        (["grand-challenge", "--input", str(demo.submission), "--ground-truth", str(contest.path.parent), "--set", "parts=testA"], "fixes the truth and the parameters"),
        (["grand-challenge", "camera-traps", "--input", str(demo.submission), "--ground-truth", str(contest.path.parent)], "holds a glas contest"),
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
