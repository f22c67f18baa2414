"""Docker mode on a real engine: a private dockerd (tests/docker_engine.py), images built locally, never pulled.

Every test here runs containers for real; without an engine they skip with the
reason, and fail in CI (``CI=true``).
"""

from __future__ import annotations

import gzip
import io
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import tarfile
import time
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest

import docker_engine
import test_runner_disk
import test_runner_run
from conftest import require, run
from podium.runner import volume
from podium.runner.docker import LABEL_OWNER, LABEL_RUN, docker_command, read_peak, reap_leftovers
from podium.runner.docker_images import Image as EngineImage
from podium.runner.docker_images import check_reference
from podium.runner.volume import SLACK_BYTES
from podium.runner.workdir import RUN_PREFIX, remove_abandoned, temporary_folder
from test_sandbox_secrets import planted_tmpdir

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="Docker mode runs on Linux")
faces = test_runner_run.faces  # the fixture: nine face images of three people, and the truth

# Clusters the faces by the name before "_", as tests/test_runner_run.py's CLUSTER_BY_NAME does, in busybox sh.
CLUSTER_BY_NAME = """
folder=$(cat input.txt)
for f in $(ls "$folder"); do
    person=${f%%_*}
    case $person in ali) k=1;; sara) k=2;; *) k=3;; esac
    echo "${f%.jpg}, $k"
done > team_x.csv
"""

SERVICE_FACES = """images = "{images}"
[parameters]
th1_s = 60
th2_s = 120
ram_max_mb = 4096
[limits]
memory_mb = 256
"""


@pytest.fixture(scope="module")
def engine() -> Iterator[docker_engine.Engine]:
    require("a Docker engine", docker_engine.problem())
    started = docker_engine.Engine()
    try:
        started.start()
    except RuntimeError as exc:
        started.remove()
        require("a Docker engine", str(exc))
    saved = {key: os.environ.get(key) for key in started.environ}
    os.environ.update(started.environ)
    try:
        yield started
    finally:
        for key, value in saved.items():
            if value is None:
                os.environ.pop(key, None)
            else:
                os.environ[key] = value
        started.remove()


def podium_run(images: Path, truth: Path, image: str, *extra: str) -> tuple[int, dict | str]:
    code, output = run(
        "run",
        "face-clustering",
        "--image",
        image,
        "--images",
        str(images),
        "--truth",
        str(truth),
        "--json",
        "-",
        *extra,
    )
    try:
        return code, json.JSONDecoder().raw_decode(output[output.index("{") :])[0]
    except ValueError:
        return code, output


def containers(engine: docker_engine.Engine) -> list[str]:
    """Every container podium made that the engine still holds, running or not."""
    return engine.docker("ps", "--all", "--quiet", "--filter", f"label={LABEL_RUN}").stdout.split()


def test_references_that_are_options_or_text_are_refused() -> None:
    for good in (
        "busybox",
        "team/face:1",
        "registry.example.org:5000/a/b_c:v1.2",
        "sha256:" + "a" * 64,
        "x@sha256:" + "0" * 64,
    ):
        check_reference(good)
    for bad in ("--privileged", "-v/:/host", "a b", "team/face:1 --privileged", "", "UPPER/case", "x;rm", "a:b:c"):
        with pytest.raises(Exception, match="not a Docker image reference"):
            check_reference(bad)


def test_the_create_command_line(tmp_path: Path) -> None:
    command = docker_command(
        EngineImage("sha256:" + "1" * 64, False, ()), "podium-x", tmp_path / "work", tmp_path / "images", 2048
    )
    assert command[:2] == ["docker", "create"] and command[-1] == "sha256:" + "1" * 64
    for option, value in (
        ("--network", "none"),
        ("--log-driver", "none"),
        ("--pull", "never"),
        ("--memory", "2048m"),
        ("--memory-swap", "2048m"),
        ("--shm-size", "2048m"),
    ):
        assert command[command.index(option) + 1] == value, option
    assert "--read-only" in command and f"{LABEL_RUN}=podium-x" in command
    assert "PATH=/usr/local/bin:/usr/bin:/bin" in command and "HOME=/tmp" in command and "TMPDIR=/tmp" in command
    assert f"type=bind,source={(tmp_path / 'images').resolve()},destination=/sandbox/images,readonly" in command
    assert (
        f"type=bind,source={(tmp_path / 'work').resolve()},destination=/work" in command and "--volume" not in command
    )
    assert "PATH=/usr/local/bin:/usr/bin:/bin" not in docker_command(
        EngineImage("x", True, ()), "podium-x", tmp_path, tmp_path, None
    )


def test_container_peak_is_read_from_its_cgroup(tmp_path: Path) -> None:
    scope = tmp_path / "system.slice" / "docker-abc123.scope"
    scope.mkdir(parents=True)
    (scope / "memory.peak").write_text("734003200\n")
    assert read_peak("abc123", tmp_path) == 734003200
    v1 = tmp_path / "memory" / "docker" / "def456"
    v1.mkdir(parents=True)
    (v1 / "memory.max_usage_in_bytes").write_text("1048576\n")
    assert read_peak("def456", tmp_path) == 1048576
    assert read_peak("missing", tmp_path) is None


def test_an_image_is_scored_and_its_time_is_the_programs(engine: docker_engine.Engine, faces) -> None:
    images, truth = faces
    image_id = engine.import_image(
        "podium-test/face:root", {"program.sh": "sleep 1\n" + CLUSTER_BY_NAME + "echo done >&2\n"}
    )
    started = time.monotonic()
    code, doc = podium_run(images, truth, "podium-test/face:root", "--time-limit", "30")
    elapsed = time.monotonic() - started
    assert code == 0, doc
    assert isinstance(doc, dict) and doc["scores"]["pairwise_f"] == 1.0
    run_ = doc["run"]
    assert (
        run_["outcome"] == "finished"
        and run_["exit_code"] == 0
        and run_["sandbox"] == "docker"
        and run_["stderr_tail"] == "done"
    )
    assert (
        run_["image"] == image_id
        and run_["memory_method"] == "the container's cgroup peak"
        and 0 < run_["peak_memory_mb"] < 50
    )
    # the program's second (to a sample, 10 ms; its script's few ms, 0.37 s more at load 16 on 2 cores), not the
    # engine's start-up of the container (0.4 s or more)
    assert 0.98 <= run_["wall_s"] < 1.4, run_
    assert elapsed > run_["wall_s"] + 0.2
    assert containers(engine) == []


def test_an_image_that_runs_as_another_user_writes_its_output(
    engine: docker_engine.Engine, faces, tmp_path: Path
) -> None:
    images, truth = faces
    engine.import_image("podium-test/face:player", {"program.sh": "id -u >&2\n" + CLUSTER_BY_NAME}, user="1000:1000")
    code, doc = podium_run(
        images, truth, "podium-test/face:player", "--time-limit", "30", "--workdir", str(tmp_path / "kept")
    )
    assert code == 0, doc
    assert isinstance(doc, dict) and doc["scores"]["pairwise_f"] == 1.0 and doc["run"]["stderr_tail"] == "1000"
    assert sorted(path.name for path in tmp_path.iterdir()) == [
        "images",
        "kept",
        "truth.csv",
    ]  # no .cid file beside the folder


def test_the_environment_is_the_contracts_and_the_root_is_read_only(engine: docker_engine.Engine, faces) -> None:
    images, truth = faces
    program = 'cat input.txt >&2; echo "$HOME $TMPDIR $PATH" >&2; touch /etc/x 2>/dev/null && echo root-writable >&2; df -m /dev/shm | tail -1 >&2\n'
    engine.import_image("podium-test/face:env", {"program.sh": program})
    _code, doc = podium_run(images, truth, "podium-test/face:env", "--time-limit", "30", "--memory-limit", "200")
    assert isinstance(doc, dict)
    lines = doc["run"]["stderr_tail"].splitlines()
    assert lines[0] == "/sandbox/images" and str(images) not in doc["run"]["stderr_tail"]  # no server path
    assert lines[1] == "/tmp /tmp /usr/local/bin:/usr/bin:/bin" and "root-writable" not in lines
    assert lines[-1].split()[1] == "200"  # /dev/shm: the memory limit, not the engine's 64 MB


@pytest.mark.parametrize("reference", ["--privileged", "-v/:/host", "podium-test/face:root --privileged"])
def test_an_image_reference_that_is_an_option_is_a_usage_error(
    engine: docker_engine.Engine, faces, reference: str
) -> None:
    images, truth = faces
    code, output = podium_run(images, truth, reference, "--time-limit", "30")
    assert code == 2 and "is not a Docker image reference" in str(output) and containers(engine) == []


def test_a_missing_image_is_never_pulled(engine: docker_engine.Engine, faces) -> None:
    images, truth = faces
    started = time.monotonic()
    code, output = podium_run(images, truth, "podium-test/absent:1", "--time-limit", "30")
    assert code == 2 and "is not on this Docker engine; podium never pulls" in str(output), output
    assert time.monotonic() - started < 10 and containers(engine) == []


def test_memory_the_oom_killer_and_a_kill_by_the_program(engine: docker_engine.Engine, faces) -> None:
    images, truth = faces
    engine.import_image("podium-test/face:hog", {"program.sh": "dd if=/dev/zero of=/dev/null bs=300M count=1\n"})
    _code, doc = podium_run(images, truth, "podium-test/face:hog", "--time-limit", "30", "--memory-limit", "100")
    assert (
        isinstance(doc, dict)
        and doc["run"]["outcome"] == "memory_limit"
        and "memory limit of 100 MB" in doc["errors"][0]["message"]
    )
    assert test_runner_disk.mounts_left() == []
    engine.import_image("podium-test/face:suicide", {"program.sh": "sh -c 'kill -9 $$'; exit $?\n"})
    _code, doc = podium_run(images, truth, "podium-test/face:suicide", "--time-limit", "30", "--memory-limit", "100")
    assert isinstance(doc, dict) and doc["run"]["outcome"] == "crashed" and doc["run"]["exit_code"] == 137, doc["run"]
    assert test_runner_disk.mounts_left() == []  # the run's file system, after a memory kill and a crash


def test_an_image_without_a_program_is_the_teams_and_an_engine_error_is_not(
    engine: docker_engine.Engine, faces
) -> None:
    images, truth = faces
    engine.import_image("podium-test/face:empty", cmd=["/nothing-here"])
    code, doc = podium_run(images, truth, "podium-test/face:empty", "--time-limit", "30")
    assert code == 1 and isinstance(doc, dict) and doc["run"]["outcome"] == "crashed" and doc["run"]["exit_code"] == 127
    assert "/nothing-here" in doc["run"]["stderr_tail"]
    engine.import_image("podium-test/face:fine", {"program.sh": CLUSTER_BY_NAME})
    code, output = podium_run(images, truth, "podium-test/face:fine", "--time-limit", "30", "--gpus", "all")
    assert code == 2 and "Docker engine could not" in str(output), (
        output
    )  # no GPU here: Docker's own failure (its exit 125)
    assert containers(engine) == []


def test_the_time_limit_kills_the_container(engine: docker_engine.Engine, faces) -> None:
    images, truth = faces
    engine.import_image("podium-test/face:sleeper", {"program.sh": "sleep 60\n"})
    started = time.monotonic()
    _code, doc = podium_run(images, truth, "podium-test/face:sleeper", "--time-limit", "1")
    assert isinstance(doc, dict) and doc["run"]["outcome"] == "timeout" and 0.98 <= doc["run"]["wall_s"] < 2.0, doc[
        "run"
    ]
    assert time.monotonic() - started < 10 and containers(engine) == []
    started = time.monotonic()
    _code, doc = podium_run(
        images, truth, "podium-test/face:sleeper", "--time-limit", "0.01"
    )  # over before the container starts
    assert isinstance(doc, dict) and doc["run"]["outcome"] == "timeout", doc["run"]
    assert time.monotonic() - started < 10 and containers(engine) == [] and test_runner_disk.mounts_left() == []


def test_a_stderr_flood_costs_no_disk_and_no_time(engine: docker_engine.Engine, faces) -> None:
    images, truth = faces
    engine.import_image("podium-test/face:flood", {"program.sh": "yes 0123456789abcdefghijklmnopqrstuvwxyz >&2\n"})
    logs = Path(engine.folder) / "docker" / "containers"
    largest = [0]

    def watch(process: subprocess.Popen[bytes]) -> None:
        while process.poll() is None:
            sizes = [path.stat().st_size for path in logs.glob("*/*.log") if path.exists()]
            largest[0] = max(largest[0], sum(sizes))
            time.sleep(0.05)

    command = [
        sys.executable,
        "-m",
        "podium",
        "run",
        "face-clustering",
        "--image",
        "podium-test/face:flood",
        "--images",
        str(images),
    ]
    process = subprocess.Popen(
        [*command, "--truth", str(truth), "--time-limit", "3", "--json", "-"],
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
    )
    watch(process)
    doc = json.loads(process.communicate()[0])
    # the flood neither stops the watch nor delays the kill: a second past the limit at most (3.6 s at load 20)
    assert doc["run"]["outcome"] == "timeout" and doc["run"]["wall_s"] < 4, doc["run"]
    assert doc["run"]["stderr_tail"].splitlines()[-2] == "0123456789abcdefghijklmnopqrstuvwxyz"
    assert largest[0] == 0


def _podium_in_background(images: Path, truth: Path, image: str) -> subprocess.Popen[bytes]:
    command = [
        sys.executable,
        "-m",
        "podium",
        "run",
        "face-clustering",
        "--image",
        image,
        "--images",
        str(images),
        "--truth",
        str(truth),
    ]
    return subprocess.Popen([*command, "--time-limit", "30"], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)


def _wait_for(check, seconds: float) -> bool:  # type: ignore[no-untyped-def]
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if check():
            return True
        time.sleep(0.1)
    return False


@pytest.mark.parametrize("number", [signal.SIGKILL, signal.SIGTERM, signal.SIGINT])
def test_no_container_outlives_podium(engine: docker_engine.Engine, faces, number: int) -> None:
    images, truth = faces
    engine.import_image("podium-test/face:sleeper", {"program.sh": "sleep 60\n"})
    podium = _podium_in_background(images, truth, "podium-test/face:sleeper")
    running = lambda: engine.docker("ps", "--quiet", "--filter", f"label={LABEL_RUN}").stdout.split()
    assert _wait_for(running, 30), "the container never started"
    podium.send_signal(number)
    podium.wait(timeout=60)  # SIGINT and SIGTERM: podium removes the container first (10 s was too few at load 20)
    assert _wait_for(lambda: containers(engine) == [], 5), engine.docker("ps", "--all").stdout


def test_a_worker_reaps_the_containers_of_dead_podiums_only(engine: docker_engine.Engine) -> None:
    engine.import_image("podium-test/face:sleeper", {"program.sh": "sleep 60\n"})
    gone = subprocess.Popen(["true"])
    gone.wait()
    hostname = os.uname().nodename
    from podium.runner.docker import owner

    for name, label in (
        ("podium-dead", f"{hostname}/{gone.pid}/1"),
        ("podium-alive", owner()),
        ("podium-elsewhere", "another-host/1/1"),
    ):
        engine.docker(
            "create",
            "--name",
            name,
            "--label",
            f"{LABEL_OWNER}={label}",
            "--label",
            f"{LABEL_RUN}={name}",
            "podium-test/face:sleeper",
        )
    try:
        assert reap_leftovers() == ["podium-dead"]
        assert sorted(engine.docker("ps", "--all", "--format", "{{.Names}}").stdout.split()) == [
            "podium-alive",
            "podium-elsewhere",
        ]
    finally:
        engine.docker("rm", "--force", "podium-alive", "podium-elsewhere", check=False)


def test_a_teams_archive_is_loaded_by_id_and_renames_no_image(engine: docker_engine.Engine, tmp_path: Path) -> None:
    from podium.runner.docker_images import load_image

    team = engine.import_image("podium-test/victim:1", {"program.sh": "echo team\n"})
    archive = tmp_path / "team.tar"
    engine.docker("save", "-o", str(archive), "podium-test/victim:1")
    organizers = engine.import_image(
        "podium-test/victim:1", {"program.sh": "echo organizer\n"}
    )  # the name now means another image
    engine.docker("rmi", team)
    assert load_image(archive) == team
    assert engine.docker("image", "inspect", "--format", "{{.Id}}", "podium-test/victim:1").stdout.strip() == organizers
    compressed = tmp_path / "compressed.tar"  # a layer gzipped: the engine would unpack it, whatever its size
    with tarfile.open(archive) as source, tarfile.open(compressed, "w") as copy:
        for member in source.getmembers():
            data = source.extractfile(member).read() if member.isfile() else None  # type: ignore[union-attr]
            if data is not None and member.name.endswith("layer.tar"):
                data = gzip.compress(data)
                member.size = len(data)
            copy.addfile(member, io.BytesIO(data) if data is not None else None)
    with pytest.raises(Exception, match=r"layer\.tar is gzip-compressed"):
        load_image(compressed)
    junk = tmp_path / "junk.tar"
    junk.write_bytes(b"not a tar at all" * 100)
    with pytest.raises(Exception, match=r"junk\.tar is not an image archive of docker save"):
        load_image(junk)


def _kill_in_a_run(engine: docker_engine.Engine, worker: subprocess.Popen[bytes], send) -> None:  # type: ignore[no-untyped-def]
    """Send a slow image (``send()``: the submission's answer), kill ``worker`` with SIGKILL once its container runs;
    the container is gone soon after (its keeper)."""
    slow = send()
    running = lambda: engine.docker(
        "ps", "--quiet", "--filter", "label=podium.submission=" + str(slow.body["id"])
    ).stdout.split()
    assert _wait_for(running, 60), "the slow image never started"
    os.killpg(worker.pid, signal.SIGKILL)
    # dead but not reaped until the caller's poll(): a zombie's pid is alive to remove_abandoned, so a podium starting
    # meanwhile anywhere on the machine (the suite's other process) leaves the worker's run folder for the test to see
    os.waitid(os.P_PID, worker.pid, os.WEXITED | os.WNOWAIT)
    assert _wait_for(lambda: containers(engine) == [], 5), engine.docker("ps", "--all").stdout


def _stored_document(service, submission_id: int) -> dict:  # type: ignore[no-untyped-def]
    """The result document the service stored for a submission."""
    from sqlalchemy import select

    from podium.service.database import reading
    from podium.service.tables import results

    with reading(service.engine) as connection:
        return connection.execute(
            select(results.c.document).where(results.c.submission_id == submission_id)
        ).scalar_one()


def test_a_service_scores_a_teams_image_and_refuses_one_by_name(engine: docker_engine.Engine, tmp_path: Path) -> None:
    from podium.service.app import Service
    from podium.service.client import submit
    from service_helpers import Clock, LiveServer, at, set_up, write_contest

    contest = write_contest(
        tmp_path / "contest",
        "face-clustering",
        kind="programs",
        extra=SERVICE_FACES.format(images=tmp_path / "contest" / "demo" / "images"),
    )
    clock = Clock(at("2026-03-02T12:00:00Z"))
    plain, tokens = set_up(f"sqlite:///{tmp_path / 'podium.db'}", contest, tmp_path / "data", ("alpha", "beta"), clock)
    service = Service(plain.engine, plain.data, clock, allow_images=True)
    one_cluster = 'for f in $(ls "$(cat input.txt)"); do echo "${f%.*}, 1"; done > team_alpha.csv\n'
    image_id = engine.import_image("podium-test/alpha:1", {"program.sh": one_cluster}, user="1000:1000")  # not root
    engine.import_image("podium-test/alpha:slow", {"program.sh": "sleep 60\n"})
    for tag in ("1", "slow"):
        engine.docker("save", "-o", str(tmp_path / f"alpha-{tag}.tar"), f"podium-test/alpha:{tag}")
    worker = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "podium",
            "worker",
            "--data",
            str(service.data),
            "--database",
            f"sqlite:///{tmp_path / 'podium.db'}",
            "--lease",
            "5",
        ],
        start_new_session=True,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )
    try:
        with LiveServer(service) as server:
            answer = submit(
                server.url, tokens["beta"], tmp_path / "alpha-1.tar", "docker:podium-test/alpha:1"
            )  # another team's image, by name
            assert answer.body["status"] == "rejected" and "not taken by name" in answer.body["reason"], answer.body
            answer = submit(server.url, tokens["alpha"], tmp_path / "alpha-1.tar", "docker:")
            assert answer.body["status"] == "queued", answer.body
            done = lambda: server.call("GET", f"/api/submissions/{answer.body['id']}", tokens["alpha"]).body
            assert _wait_for(lambda: done()["status"] not in ("queued", "running"), 60), done()
            assert done()["status"] == "scored", done()
            _kill_in_a_run(
                engine, worker, lambda: submit(server.url, tokens["alpha"], tmp_path / "alpha-slow.tar", "docker:")
            )
    finally:
        if worker.poll() is None:
            os.killpg(worker.pid, signal.SIGKILL)
    remove_abandoned()  # what a starting worker does first: unmounts the killed worker's run's file system
    assert test_runner_disk.mounts_left(worker.pid) == []
    document = _stored_document(service, answer.body["id"])
    assert document["run"]["image"] == image_id and document["run"]["sandbox"] == "docker"


def test_the_images_own_files_count_the_same_cold_or_warm(engine: docker_engine.Engine, faces) -> None:
    images, truth = faces
    weights = bytes(range(256)) * (64 * 2**20 // 256)  # 64 MB the program reads from its own image
    engine.import_image(
        "podium-test/face:weights",
        {"weights.bin": weights, "program.sh": "cat /weights.bin > /dev/null\n" + CLUSTER_BY_NAME},
    )
    layer = engine.docker(
        "image", "inspect", "--format", "{{.GraphDriver.Data.UpperDir}}", "podium-test/face:weights"
    ).stdout.strip()
    if not layer.startswith("/"):
        pytest.skip(f"the engine's storage driver ({engine.driver}) keeps no layer folder")
    peaks = []
    for cold in (True, False, True):
        if cold:  # out of the page cache, as on a fresh machine
            fd = os.open(os.path.join(layer, "weights.bin"), os.O_RDONLY)
            os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED)
            os.close(fd)
        code, doc = podium_run(images, truth, "podium-test/face:weights", "--time-limit", "30", "--memory-limit", "512")
        assert code == 0 and isinstance(doc, dict), doc
        peaks.append(doc["run"]["peak_memory_mb"])
    assert max(peaks) < 32 and max(peaks) - min(peaks) < 4, peaks  # the 64 MB of page cache is charged to no run


DISK_FILLERS = {
    "one file past the limit": "dd if=/dev/zero of=big bs=1M count=400\n",
    "files that add up": "for k in 1 2 3 4 5 6 7 8; do dd if=/dev/zero of=part$k bs=1M count=40; done; sleep 30\n",
    "fallocated": "for k in 1 2 3 4 5 6 7 8; do fallocate -l 40m part$k; done; sleep 30\n",
    "sparse files": "for k in $(seq 1 200); do dd if=/dev/zero of=sparse$k bs=1M count=1 seek=50; done; sleep 30\n",
    "hard links": "dd if=/dev/zero of=big bs=1M count=60; for k in $(seq 1 200); do ln big link$k; done;"
    " for k in $(seq 1 200); do dd if=/dev/zero of=more$k bs=1M count=1; done; sleep 30\n",
}


@pytest.mark.parametrize("program", DISK_FILLERS.values(), ids=DISK_FILLERS.keys())
def test_a_disk_filling_image_is_stopped_at_the_disk_limit(engine: docker_engine.Engine, faces, program: str) -> None:
    """The working folder is a file system of the run's own: past 100 MB and its 2 MiB of slack the kernel refuses the
    write, however loaded the machine (a scan at 100 Hz let a writer reach 175 MB on a loaded CI machine)."""
    images, truth = faces
    engine.import_image(
        "podium-test/face:filler",
        {"program.sh": "dd if=/dev/zero of=/junk bs=1M count=1 2>/dev/null && echo root >&2\n" + program},
    )
    started = time.monotonic()
    code, doc = podium_run(images, truth, "podium-test/face:filler", "--time-limit", "60", "--disk-limit", "100")
    assert code == 1 and isinstance(doc, dict), doc
    run_ = doc["run"]
    assert run_["outcome"] == "disk_limit" and doc["errors"][0]["code"] == "disk_limit", run_
    assert doc["errors"][0]["message"] == (
        "the program was stopped: its working folder reached the disk limit of 100 MB (files it writes count, in all)"
    )
    assert 100 < run_["peak_disk_mb"] <= 100 + SLACK_BYTES / 2**20, run_  # exact: the kernel refuses past it
    assert run_["disk_method"].startswith("a file system of its own"), run_
    assert "root" not in run_["stderr_tail"], run_  # nothing written beside
    assert time.monotonic() - started < 20 and containers(engine) == [] and test_runner_disk.mounts_left() == []


def test_a_worker_stops_a_disk_filling_image_at_the_limit_and_leaves_no_mount(
    engine: docker_engine.Engine, tmp_path: Path
) -> None:
    """Through a real worker: the team reads why, the bound is the file system's; a worker killed with SIGKILL in the
    middle of a run leaves its run's file system mounted, which the next run or worker to start unmounts."""
    from podium.service.app import Service
    from podium.service.client import submit
    from service_helpers import Clock, LiveServer, at, set_up, write_contest

    contest = write_contest(
        tmp_path / "contest",
        "face-clustering",
        kind="programs",
        extra=SERVICE_FACES.format(images=tmp_path / "contest" / "demo" / "images") + "disk_mb = 100\n",
    )
    clock = Clock(at("2026-03-02T12:00:00Z"))
    database = f"sqlite:///{tmp_path / 'podium.db'}"
    plain, tokens = set_up(database, contest, tmp_path / "data", ("alpha", "beta"), clock)
    service = Service(plain.engine, plain.data, clock, allow_images=True)
    engine.import_image("podium-test/alpha:fill", {"program.sh": DISK_FILLERS["files that add up"]}, user="1000:1000")
    engine.import_image("podium-test/alpha:slow", {"program.sh": "sleep 60\n"})
    for tag in ("fill", "slow"):
        engine.docker("save", "-o", str(tmp_path / f"alpha-{tag}.tar"), f"podium-test/alpha:{tag}")
    worker = subprocess.Popen(
        [sys.executable, "-m", "podium", "worker", "--data", str(service.data), "--database", database, "--lease", "5"],
        start_new_session=True,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )
    try:
        with LiveServer(service) as server:
            answer = submit(server.url, tokens["alpha"], tmp_path / "alpha-fill.tar", "docker:")
            done = lambda: server.call("GET", f"/api/submissions/{answer.body['id']}", tokens["alpha"]).body
            assert _wait_for(lambda: done()["status"] not in ("queued", "running"), 60), done()
            seen = done()
            _kill_in_a_run(
                engine, worker, lambda: submit(server.url, tokens["alpha"], tmp_path / "alpha-slow.tar", "docker:")
            )
            assert test_runner_disk.mounts_left(worker.pid) != []  # the killed worker's file system, still mounted
    finally:
        if worker.poll() is None:
            os.killpg(worker.pid, signal.SIGKILL)
            worker.wait(timeout=10)
    assert seen["status"] == "failed" and "reached the disk limit of 100 MB" in json.dumps(seen), seen
    document = _stored_document(service, answer.body["id"])
    assert document["run"]["outcome"] == "disk_limit", document["run"]
    assert 100 < document["run"]["peak_disk_mb"] <= 100 + SLACK_BYTES / 2**20, document["run"]
    remove_abandoned()  # what a starting worker does first (any run since, in any process, may have done it)
    assert test_runner_disk.mounts_left(worker.pid) == []


# What a hostile image learns of the server: its mount table, process 1's environment, command line, links, open files,
# cgroup and status, its own environment, the root and the sandbox folders, its cgroup; one line on stderr (the team reads it back).
LOOK_AROUND = """{
cat /proc/self/mountinfo; echo @environ; cat /proc/1/environ; echo @cmdline; cat /proc/1/cmdline; echo @env; env
echo @proc1; ls -l /proc/1/cwd /proc/1/root /proc/1/exe /proc/1/fd/; cat /proc/1/cgroup /proc/1/status
echo @root; ls -a /; echo @sandbox; ls -aR /sandbox; echo @input; cat input.txt; echo @cgroup; cat /proc/self/cgroup
} 2>&1 | tr '\\n\\0' '|;' >&2
echo left > left.txt
"""


def _server_layout(tmp_path: Path, faces) -> tuple[Path, Path, list[str]]:  # type: ignore[no-untyped-def]
    """The faces at server-like paths (a data folder, a contest and a team named in them); the words that must not show."""
    data = tmp_path / f"srv-data-{uuid.uuid4().hex[:8]}"
    contest = data / f"contest-{uuid.uuid4().hex[:8]}-team-beta"
    shutil.copytree(faces[0], contest / "images")
    shutil.copy(faces[1], contest / "truth.csv")
    return contest / "images", contest / "truth.csv", [str(tmp_path), data.name, contest.name]


def _assert_sees_nothing_of_the_server(shown: str, seen: str, forbidden: list[str]) -> None:
    """Nothing ``shown`` to the team holds a ``forbidden`` word; what the program ``seen`` shows it looked and was staged."""
    for word in forbidden:
        assert word not in shown, (word, [part for part in shown.split("|") if word in part])
    assert "@input|/sandbox/images|" in seen  # the program ran, and looked everywhere
    assert all(f"@{part}|" in seen for part in ("environ", "cmdline", "env", "proc1", "root", "sandbox", "cgroup"))
    (images,) = [line for line in seen.split("|") if " /sandbox/images " in line]
    assert re.search(r" (/var)?/tmp/podium-run-\d+-\w+/images ", images), images  # a staged copy, never under TMPDIR


def test_an_image_learns_nothing_of_the_servers_paths(
    engine: docker_engine.Engine, faces, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    images, truth, forbidden = _server_layout(tmp_path, faces)
    secret = f"secret-{uuid.uuid4().hex}"
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", secret)
    monkeypatch.setenv("PODIUM_DATABASE", f"postgresql://podium:pw{secret}@127.0.0.1/podium")
    forbidden.append(planted_tmpdir(monkeypatch, tmp_path))
    engine.import_image("podium-test/look:1", {"program.sh": LOOK_AROUND}, user="1000:1000")
    kept = images.parent / "jobs" / "17-team-beta" / "work"  # the organizer's --workdir
    _code, doc = podium_run(images, truth, "podium-test/look:1", "--time-limit", "30", "--workdir", str(kept))
    assert isinstance(doc, dict) and doc["run"]["outcome"] == "no_output", doc
    assert (kept / "left.txt").read_text() == "left\n" and doc["run"]["workdir"] == str(kept)  # moved there
    seen = doc["run"]["stderr_tail"]  # the result names the --workdir: the organizer's own document
    _assert_sees_nothing_of_the_server(seen, seen, [*forbidden, str(kept), secret])


def test_an_image_submitted_to_the_service_learns_nothing_of_the_server(
    engine: docker_engine.Engine, faces, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from podium.service.app import Service
    from podium.service.client import submit
    from service_helpers import Clock, LiveServer, at, set_up, write_contest

    images, _truth, forbidden = _server_layout(tmp_path, faces)
    contest = write_contest(
        images.parent / "contest", "face-clustering", kind="programs", extra=SERVICE_FACES.format(images=images)
    )
    clock = Clock(at("2026-03-02T12:00:00Z"))
    teams = (f"team{uuid.uuid4().hex[:8]}", f"team{uuid.uuid4().hex[:8]}")
    database = f"sqlite:///{images.parent / 'podium.db'}"
    plain, tokens = set_up(database, contest, images.parent.parent / "data", teams, clock)
    service = Service(plain.engine, plain.data, clock, allow_images=True)
    engine.import_image("podium-test/look:2", {"program.sh": LOOK_AROUND})
    engine.docker("save", "-o", str(tmp_path / "look.tar"), "podium-test/look:2")
    secret = f"secret-{uuid.uuid4().hex}"
    forbidden.append(planted_tmpdir(monkeypatch, tmp_path))  # the worker's TMPDIR
    worker = subprocess.Popen(
        [sys.executable, "-m", "podium", "worker", "--data", str(service.data), "--lease", "5"],
        env={**os.environ, "PODIUM_DATABASE": database, "AWS_SECRET_ACCESS_KEY": secret},
        start_new_session=True,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )
    try:
        with LiveServer(service) as server:
            submit(server.url, tokens[teams[1]], tmp_path / "look.tar", "docker:")  # the other team's, first
            answer = submit(server.url, tokens[teams[0]], tmp_path / "look.tar", "docker:")
            done = lambda: server.call("GET", f"/api/submissions/{answer.body['id']}", tokens[teams[0]]).body
            assert _wait_for(lambda: done()["status"] not in ("queued", "running"), 60), done()
            seen = done()
    finally:
        os.killpg(worker.pid, signal.SIGKILL)
        worker.wait(timeout=10)
    assert seen["status"] == "failed" and seen["stderr_tail"], seen
    _assert_sees_nothing_of_the_server(json.dumps(seen), seen["stderr_tail"], [*forbidden, secret, teams[1]])


SYS_BLOCK_LISTS = ("/sys/block", "/sys/class/block", "/sys/dev/block", "/sys/devices/virtual/block", "/sys/fs/ext4")
# What a hostile image learns of the block devices: the folders of /sys that list them, /proc's tables, every link or
# folder of /sys (a device's name) and whatever backing_file it finds (a loop device's file, named by its folder).
LOOK_AT_DISKS = f"""{{
for folder in {" ".join(SYS_BLOCK_LISTS)}; do echo "@ls $folder"; ls -A "$folder"; done
echo @partitions; cat /proc/partitions; echo @diskstats; cat /proc/diskstats; echo @mounts; cat /proc/mounts
echo @backing; busybox find /sys -name backing_file -exec cat {{}} +
echo @found; busybox find /sys -type d -o -type l
}} > seen.txt 2>&1
"""


def sections(text: str) -> dict[str, list[str]]:
    """What a program wrote, by the lines ``@NAME`` that open each part."""
    parts: dict[str, list[str]] = {}
    for line in text.splitlines():
        if line.startswith("@"):
            parts[line[1:]] = lines = []
        else:
            lines.append(line)
    return parts


def test_an_image_sees_no_block_device_of_the_host_nor_of_another_run(
    engine: docker_engine.Engine, faces, tmp_path: Path
) -> None:
    """Another run's loop device planted first: the container lists no block device in /sys, finds no backing file,
    reads no disk's activity; /proc/partitions (runc mounts nothing over it) holds names and sizes, no path."""
    require("a file system of the run's own", test_runner_disk.volume_problem())
    planted = volume.mounted(temporary_folder(RUN_PREFIX) / "disk", 1 << 20)
    assert planted is not None
    try:
        device = os.stat(planted.root).st_dev
        sysfs = Path(f"/sys/dev/block/{os.major(device)}:{os.minor(device)}")
        backing, name = (sysfs / "loop" / "backing_file").read_text().strip(), sysfs.resolve().name
        host_devices = set(os.listdir("/sys/class/block"))
        assert name in host_devices and backing.startswith("/")
        engine.import_image("podium-test/disks:1", {"program.sh": LOOK_AT_DISKS})
        kept = tmp_path / "kept"
        _code, doc = podium_run(faces[0], faces[1], "podium-test/disks:1", "--time-limit", "60", "--workdir", str(kept))
        assert isinstance(doc, dict) and doc["run"]["outcome"] == "no_output", doc
        seen = sections((kept / "seen.txt").read_text())
    finally:
        volume.unmount(planted)
        shutil.rmtree(planted.root.parent, ignore_errors=True)
    assert all(seen[f"ls {folder}"] == [] for folder in SYS_BLOCK_LISTS), seen
    assert seen["backing"] == [] and seen["diskstats"] == [], seen
    assert backing not in json.dumps(seen) and not [line for line in seen["mounts"] if f"/dev/{name} " in line]
    assert all("/" not in line for line in seen["partitions"]), seen["partitions"]
    found = [Path(line) for line in seen["found"]]
    assert len(found) > 100 and not [path for path in found if path.name in host_devices], "a block device in /sys"


def test_an_engine_that_cannot_see_the_run_folder_is_named_as_the_cause(faces, monkeypatch: pytest.MonkeyPatch) -> None:
    """A dockerd in a mount namespace of its own (a ``/tmp`` of its own, as ``PrivateTmp=yes`` gives a service): the run
    stops with exit code 2 and says why, where the engine made empty folders in its own ``/tmp`` and the program, seeing
    no image and writing where podium never looks, was blamed for writing nothing."""
    require("a Docker engine", docker_engine.problem())
    require("unshare (util-linux)", None if shutil.which("unshare") else "no unshare here")
    private = docker_engine.Engine(private_tmp=True)
    try:
        try:
            private.start()
        except RuntimeError as exc:
            require("a Docker engine in a mount namespace of its own", str(exc))
        for key, value in private.environ.items():
            monkeypatch.setenv(key, value)
        private.import_image("podium-test/face:private", {"program.sh": CLUSTER_BY_NAME})
        code, output = podium_run(*faces, "podium-test/face:private", "--time-limit", "30")
        left = private.docker("ps", "--all", "--quiet").stdout.split()
    finally:
        private.remove()
    assert code == 2 and "the Docker engine does not see podium's run folder /" in str(output), output
    assert "mount namespace of its own" in str(output) and left == [], (output, left)
