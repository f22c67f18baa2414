"""podium run: the contracts end to end with small participant programs, and the Docker command."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
import textwrap
from pathlib import Path
from typing import get_args

import numpy as np
import pytest
from click.testing import CliRunner
from PIL import Image

from conftest import SANDBOX, run, sandbox_options, save_png
from podium.cli import cli
from podium.core.result import Status, schema
from podium.runner.process import RunOutcome

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="the runner reads /proc")


def podium_run(*args: str, sandbox: str = SANDBOX) -> tuple[int, dict | str]:
    result = CliRunner().invoke(cli, ["run", *args, "--json", "-", *sandbox_options(sandbox)])
    try:
        return result.exit_code, json.loads(result.stdout)
    except json.JSONDecodeError:
        return result.exit_code, result.output


def participant(tmp_path: Path, code: str) -> list[str]:
    """``--command`` for a program in a folder of its own (never beside the truth, which it must not see)."""
    folder = tmp_path / "program"
    folder.mkdir(exist_ok=True)
    script = folder / "participant.py"
    script.write_text(textwrap.dedent(code))
    return ["--command", f"{sys.executable} {script}", "--visible", str(folder)]


@pytest.fixture
def faces(tmp_path: Path) -> tuple[Path, Path]:
    images = tmp_path / "images"
    images.mkdir()
    rows = ["image,identity"]
    for person in ("ali", "sara", "reza"):
        for k in range(3):
            name = f"{person}_{k}.jpg"
            Image.new("RGB", (160, 160)).save(images / name)
            rows.append(f"{name},{person}")
    truth = tmp_path / "truth.csv"
    truth.write_text("\n".join(rows) + "\n")
    return images, truth


CLUSTER_BY_NAME = """
    import os
    folder = open('input.txt').read().strip()
    names = sorted(os.listdir(folder))
    people = sorted({n.split('_')[0] for n in names})
    with open('team_x.csv', 'w') as f:
        for n in names:
            f.write(f"{n[:-4]}, {people.index(n.split('_')[0]) + 1}\\n")
"""


def test_face_clustering_run_is_scored_with_time_and_ram_points(tmp_path: Path, faces) -> None:
    images, truth = faces
    command = participant(tmp_path, CLUSTER_BY_NAME)
    limits = ["--set", "th1_s=60", "--set", "th2_s=120", "--set", "ram_max_mb=4096"]
    code, doc = podium_run("face-clustering", *command, "--images", str(images), "--truth", str(truth), *limits)
    assert code == 0, doc
    run = doc["run"]
    assert {"wall_s", "peak_memory_mb", "memory_method", "exit_code", "outcome", "stderr_tail"} <= set(run)
    assert run["outcome"] == "finished" and run["exit_code"] == 0 and run["time_limit_s"] == 120
    assert doc["scores"]["pairwise_f"] == 1.0 and doc["scores"]["nmi"] == 1.0
    assert doc["parameters"]["time_s"] == pytest.approx(run["wall_s"]) and doc["parameters"]["ram_mb"] == pytest.approx(
        run["peak_memory_mb"]
    )
    expected = 100 * (0.4 + 0.4 + 0.1 * (1 - run["wall_s"] / 60) + 0.1 * (1 - run["peak_memory_mb"] / 4096))
    assert doc["scores"]["final"] == pytest.approx(expected, abs=1e-9)


def test_no_csv_is_no_output_and_exit_1(tmp_path: Path, faces) -> None:
    images, truth = faces
    command = participant(tmp_path, "import sys; print('oops', file=sys.stderr); sys.exit(2)")
    code, doc = podium_run(
        "face-clustering", *command, "--images", str(images), "--truth", str(truth), "--time-limit", "30"
    )
    assert code == 1 and doc["status"] == "rejected"
    assert doc["run"]["outcome"] == "crashed" and doc["run"]["exit_code"] == 2 and "oops" in doc["run"]["stderr_tail"]
    assert doc["errors"][0]["code"] == "no_output" and "ended with exit code 2" in doc["errors"][0]["message"]
    command = participant(tmp_path, "pass")
    code, doc = podium_run(
        "face-clustering", *command, "--images", str(images), "--truth", str(truth), "--time-limit", "30"
    )
    assert code == 1 and doc["run"]["outcome"] == "no_output" and doc["run"]["exit_code"] == 0


def test_the_limit_stays_the_outcome_and_no_run_folder_is_left(tmp_path: Path, faces, monkeypatch) -> None:
    import tempfile

    images, truth = faces
    scratch = tmp_path / "scratch"
    scratch.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(scratch))
    command = participant(tmp_path, "import time; time.sleep(30)")
    code, output = run(
        "run",
        "face-clustering",
        *command,
        "--images",
        str(images),
        "--truth",
        str(truth),
        "--time-limit",
        "0.5",
        *sandbox_options(),
    )
    assert code == 1 and "killed at the limit" in output and "exit code None" not in output
    code, doc = podium_run(
        "face-clustering", *command, "--images", str(images), "--truth", str(truth), "--time-limit", "0.5"
    )
    assert doc["run"]["outcome"] == "timeout" and "time limit of 0.5 s" in doc["errors"][0]["message"]
    assert "workdir" not in doc["run"] and list(scratch.iterdir()) == []


def test_crash_after_writing_is_still_scored(tmp_path: Path, faces) -> None:
    images, truth = faces
    command = participant(tmp_path, textwrap.dedent(CLUSTER_BY_NAME) + "import sys; sys.exit(5)\n")
    code, doc = podium_run(
        "face-clustering", *command, "--images", str(images), "--truth", str(truth), "--time-limit", "30"
    )
    assert code == 0 and doc["run"]["outcome"] == "crashed" and doc["run"]["exit_code"] == 5
    assert doc["scores"]["pairwise_f"] == 1.0


def test_face_clustering_needs_a_time_limit(tmp_path: Path, faces) -> None:
    images, truth = faces
    code, output = podium_run("face-clustering", "--command", "true", "--images", str(images), "--truth", str(truth))
    assert code == 2 and "th2_s" in output


@pytest.fixture
def pixels(tmp_path: Path) -> tuple[Path, Path]:
    images, truth = tmp_path / "images", tmp_path / "truth"
    images.mkdir()
    truth.mkdir()
    (truth / "classes.txt").write_text("road\n")
    for k in range(4):
        Image.new("RGB", (100, 100)).save(images / f"img{k}.png")
        labels = np.zeros((100, 100), np.uint8)
        labels[:, :50] = 1
        save_png(truth / f"img{k}.png", labels)
    return images, truth


def test_fuzzy_jaccard_budget_scores_partial_output_and_broken_files_as_background(tmp_path: Path, pixels) -> None:
    images, truth = pixels
    command = participant(
        tmp_path,
        """
        import os, time
        import numpy as np
        from PIL import Image
        os.makedirs('road', exist_ok=True)
        perfect = np.zeros((100, 100), np.uint8); perfect[:, :50] = 100
        Image.fromarray(perfect).save('road/img0.png')
        Image.fromarray(perfect).save('road/img1.png')
        open('road/img2.png', 'wb').write(b'\\x89PNG\\r\\n\\x1a\\n')  # stopped mid-write
        time.sleep(60)
        """,
    )
    # 4 images of 0.01 MP = 0.04 MP; at 0.02 MP/s the budget is 2 s, plus 0.5 s to start
    settings = ["--set", "rate_mp_s=0.02", "--set", "startup_s=0.5"]
    code, doc = podium_run("fuzzy-jaccard", *command, "--images", str(images), "--truth", str(truth), *settings)
    assert code == 0, doc
    assert doc["run"]["outcome"] == "timeout" and doc["run"]["time_limit_s"] == pytest.approx(2.5)
    assert 2.5 <= doc["run"]["wall_s"] < 6
    assert doc["run"]["images_processed"] == 3 and doc["run"]["test_images"] == 4
    assert doc["scores"]["fuzzy_jaccard"] == pytest.approx(
        2 * 5000 * 100 / (4 * 5000 * 100 + 0)
    )  # 2 of 4 images perfect
    assert any(w["code"] == "bad_image" for w in doc["warnings"])


def test_a_program_that_changes_the_images_is_reported(tmp_path: Path, pixels) -> None:
    """Without a sandbox (in one, the images are read-only: test_runner_sandbox.py)."""
    images, truth = pixels
    command = participant(
        tmp_path,
        "import os; folder = open('input.txt').read().strip(); open(os.path.join(folder, 'x.png'), 'w').write('')",
    )
    code, doc = podium_run(
        "fuzzy-jaccard", *command, "--images", str(images), "--truth", str(truth), "--time-limit", "30", sandbox="none"
    )
    assert code == 1 and doc["run"]["outcome"] == "no_output"
    assert doc["warnings"][0]["code"] == "images_modified"


@pytest.mark.parametrize(
    ("args", "fragment"),
    [
        (["glas", "--command", "true"], "has no program contract"),
        (["fuzzy-jaccard"], "exactly one of --command and --image"),
        (["fuzzy-jaccard", "--command", "true", "--image", "x"], "exactly one of --command and --image"),
        (["fuzzy-jaccard", "--command", "true", "--sandbox", "docker"], "--sandbox docker runs images"),
        (["fuzzy-jaccard", "--image", "x", "--sandbox", "bwrap"], "cannot run an image"),
        (["fuzzy-jaccard", "--command", "true", "--sandbox", "none", "--gpus", "all"], "--gpus needs a sandbox"),
        (["fuzzy-jaccard", "--command", "true", "--cpus", "0"], "--cpus"),
        (["fuzzy-jaccard", "--command", "true", "--sandbox", "chroot"], "--sandbox"),
    ],
)
def test_usage_errors(tmp_path: Path, pixels, args: list[str], fragment: str) -> None:
    images, truth = pixels
    code, output = run("run", *args, "--images", str(images), "--truth", str(truth))
    assert code == 2 and fragment in output, output


def test_every_visible_folder_is_kept_away_from_the_truth(tmp_path: Path, pixels) -> None:
    images, truth = pixels
    harmless = tmp_path / "code"
    harmless.mkdir()
    for visible in ([truth.parent, harmless], [harmless, truth.parent]):  # the first of two once went unchecked
        args = [arg for folder in visible for arg in ("--visible", str(folder))]
        code, output = run(
            "run", "fuzzy-jaccard", "--command", "true", *args, "--images", str(images), "--truth", str(truth)
        )
        assert code == 2 and f"--visible {truth.parent} would show the program the truth" in output, output


def docker_engine() -> bool:
    if shutil.which("docker") is None:
        return False
    return subprocess.run(["docker", "info"], capture_output=True).returncode == 0


def test_image_without_an_engine_is_a_usage_error(tmp_path: Path, pixels) -> None:
    if docker_engine():
        pytest.skip("a Docker engine is running here")
    images, truth = pixels
    code, output = podium_run(
        "fuzzy-jaccard", "--image", "alpine", "--images", str(images), "--truth", str(truth), "--time-limit", "5"
    )
    assert code == 2 and "Docker" in output


@pytest.mark.parametrize(
    ("trick", "code_name"),
    [
        ("import os; os.remove('input.txt'); os.mkdir('input.txt'); open('team.csv', 'w').write('x')", "malformed"),
        ("import os, shutil; here = os.getcwd(); os.chdir('/'); shutil.rmtree(here)", "workdir_replaced"),
        (
            "import os, shutil; here = os.getcwd(); os.chdir('/'); shutil.rmtree(here); os.symlink('/etc', here)",
            "workdir_replaced",
        ),
        (
            "import os, shutil; here = os.getcwd(); os.chdir('/'); shutil.rmtree(here); open(here, 'w').write('x')",
            "workdir_replaced",
        ),
    ],
)
def test_a_program_that_replaces_its_input_or_its_folder_is_rejected_not_a_crash(
    tmp_path: Path, faces, trick: str, code_name: str
) -> None:
    """Without a sandbox (in one, the working folder is a mount point it cannot replace: test_runner_sandbox.py)."""
    images, truth = faces
    command = participant(tmp_path, trick)
    code, doc = podium_run(
        "face-clustering",
        *command,
        "--images",
        str(images),
        "--truth",
        str(truth),
        "--time-limit",
        "30",
        sandbox="none",
    )
    assert code == 1 and doc["status"] == "rejected", doc
    assert any(e["code"] == code_name for e in doc["errors"]), doc["errors"]


def test_a_program_contest_gives_the_images_limits_and_split(tmp_path: Path, faces) -> None:
    _images, _truth = faces
    (tmp_path / "contest.toml").write_text(
        'id = "faces"\ntitle = "Faces"\nchallenge = "face-clustering"\ntruth = "truth.csv"\nimages = "images"\n\n'
        "[parameters]\nth1_s = 60\nth2_s = 120\nram_max_mb = 4096\n\n[split]\npublic = 0.3\nseed = 1\n\n"
        '[[phase]]\nname = "test"\nstart = 2026-01-01T00:00:00Z\nend = 2026-02-01T00:00:00Z\nsubmissions = "programs"\n\n'
        "[limits]\ntime_s = 30\nmemory_mb = 2000\ncpus = 1\n"
    )
    command = participant(tmp_path, CLUSTER_BY_NAME)
    code, doc = podium_run("--contest", str(tmp_path / "contest.toml"), *command)
    assert code == 0, doc
    report = doc["run"]
    assert report["time_limit_s"] == 30 and report["memory_limit_mb"] == 2000 and report["cpus"] == 1
    assert doc["splits"]["public"]["units"] == 3 and doc["splits"]["private"]["units"] == 6  # round(0.3 x 9) = 3
    assert (
        doc["parameters"]["time_s"] == pytest.approx(report["wall_s"])
        and doc["splits"]["public"]["scores"]["nmi"] == 1.0
    )
    assert doc["signature"]["contest"]["id"] == "faces" and doc["signature"]["submission"].startswith("sha256:")
    code, output = run("run", "--contest", str(tmp_path / "contest.toml"), *command, "--memory-limit", "100")
    assert code == 2 and "--memory-limit: the contest file fixes it" in output


def test_the_result_schema_names_the_typed_statuses_and_outcomes() -> None:
    """The schema's words for a result's status and a run's outcome are the types' (``no_output``: a finished run that wrote nothing)."""
    properties = schema()["properties"]
    assert properties["status"]["enum"] == list(get_args(Status))
    assert properties["run"]["properties"]["outcome"]["enum"] == [*get_args(RunOutcome), "no_output"]


def test_a_kept_workdir_on_another_file_system_takes_the_files_not_a_pipe_nor_a_sparse_flood(
    tmp_path: Path, faces, sandbox: None
) -> None:
    """In a sandbox the program writes in the run's folder, moved into --workdir once it ended; across file systems
    (/dev/shm here) that is a copy: a pipe the program left stopped it (podium: internal error, exit 70), and sparse
    files, which take no disk where written, would be written whole there (a disk filled from a few KB)."""
    images, truth = faces
    shm = Path("/dev/shm")
    if not shm.is_dir() or shm.stat().st_dev == tmp_path.stat().st_dev:
        pytest.skip("needs /dev/shm on another file system than the temporary folder")
    kept = Path(tempfile.mkdtemp(dir=shm)) / "work"

    def kept_run(code: str, into: Path) -> tuple[int, dict | str]:
        command = participant(tmp_path, CLUSTER_BY_NAME + code)
        options = ("--images", str(images), "--truth", str(truth), "--time-limit", "30", "--workdir", str(into))
        return podium_run("face-clustering", *command, *options)

    try:
        code, doc = kept_run("    os.mkfifo('pipe'); os.makedirs('a/b'); os.symlink('/etc', 'a/b/l')\n", kept)
        assert code == 0 and doc["status"] == "scored", doc  # the pipe left out, nothing to score in it
        assert (
            (kept / "team_x.csv").is_file() and not (kept / "pipe").exists() and os.readlink(kept / "a/b/l") == "/etc"
        )
        sparse = "".join(f"    open('s{i}', 'wb').truncate(900 << 20)\n" for i in range(4))  # 3.6 GB said, none taken
        code, doc = kept_run(sparse, kept / "2")
        assert code == 1 and doc["errors"][0]["code"] == "workdir_not_kept", doc
        assert "more than 1,073,741,824 bytes" in doc["errors"][0]["message"]
        assert sum(p.stat().st_blocks for p in (kept / "2").rglob("*") if p.is_file()) * 512 < 2 << 30
    finally:
        shutil.rmtree(kept.parent, ignore_errors=True)
