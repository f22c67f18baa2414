"""A hostile program looks for the server's secrets and paths from inside the bubblewrap sandbox: it finds none.

It reads every ``/proc/*/environ``, ``/proc/*/cmdline`` and file descriptor it
can, its mount table, cgroup, working directory and ``input.txt``, tries the
database, the truth and the data folder, and prints all of it to stderr (one
compressed line, so that it fits the 20-line tail a team gets back). A secret,
a database URL with a password and a ``TMPDIR`` of the server's are planted
in the environment of the process that runs it: the runner's caller directly, and a real ``podium worker``
behind a real uvicorn on SQLite and on PostgreSQL. Neither, nor the data
folder's path, may appear in anything the team can read.
"""

from __future__ import annotations

import base64
import json
import os
import shutil
import signal
import subprocess
import sys
import sysconfig
import tarfile
import tempfile
import time
import urllib.request
import uuid
import zlib
from pathlib import Path
from typing import Any

import pytest

import podium
from conftest import require
from podium.challenges import get
from podium.contest import load
from podium.runner.disk import DEFAULT_DISK_MB
from podium.runner.process import Limits
from podium.runner.sandbox import CODE_FOLDER, IMAGES_FOLDER, WORK_FOLDER, bwrap_problem
from podium.runner.workdir import temporary_parent_beside
from podium.scoring import run as run_module
from podium.scoring.run import RunRequest, linked_copy, run_program, staged_images
from podium.service import accounts
from podium.service.database import writing
from podium.service.pages import COOKIE
from service_helpers import Clock, LiveServer, at, set_up, write_contest
from test_service_faults import FACES

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="Linux sandbox")

HOSTILE = """
import base64, json, os, sys, zlib
seen = {"tries": []}
for pid in sorted(p for p in os.listdir("/proc") if p.isdigit()):
    for name in ("environ", "cmdline", "cwd"):
        try:
            path = f"/proc/{pid}/{name}"
            seen[path] = os.readlink(path) if name == "cwd" else open(path, "rb").read().decode("utf-8", "replace")
        except OSError as exc:
            seen[path] = type(exc).__name__
    try:
        fds = os.listdir(f"/proc/{pid}/fd")
        seen[f"/proc/{pid}/fd"] = {fd: os.readlink(f"/proc/{pid}/fd/{fd}") for fd in fds}
        for fd in fds:  # what bubblewrap still holds open, if it lets anyone read it
            try:
                with open(f"/proc/{pid}/fd/{fd}", "rb") as f:
                    os.set_blocking(f.fileno(), False)
                    seen[f"/proc/{pid}/fd/{fd} content"] = (f.read(4096) or b"").decode("utf-8", "replace")
            except (OSError, TypeError) as exc:
                seen[f"/proc/{pid}/fd/{fd} content"] = type(exc).__name__
    except OSError as exc:
        seen[f"/proc/{pid}/fd"] = type(exc).__name__
for name in ("mountinfo", "cgroup", "environ", "cmdline"):
    seen[name] = open(f"/proc/self/{name}", "rb").read().decode("utf-8", "replace")
seen["cwd"] = os.getcwd()
seen["input"] = open("input.txt").read()
for path in TRIES:  # its text holds no path: the team would read it back
    try:
        seen["tries"].append("listed" if os.path.isdir(path) and os.listdir(path) is not None else "read " + open(path, "rb").read(64).decode("latin-1"))
    except OSError as exc:
        seen["tries"].append(type(exc).__name__)
print(base64.b64encode(zlib.compress(json.dumps(seen).encode(), 9)).decode(), file=sys.stderr)
"""


def hostile_program(folder: Path, tries: list[Path]) -> Path:
    """The program's folder: ``hostile.py``, which tries to read each of ``tries``."""
    folder.mkdir(parents=True)
    (folder / "hostile.py").write_text(f"TRIES = {[str(p) for p in tries]!r}\n" + HOSTILE)
    return folder


def dump_of(stderr_tail: str) -> dict[str, Any]:
    """What the program printed, decoded."""
    line = stderr_tail.strip().splitlines()[-1]
    return json.loads(zlib.decompress(base64.b64decode(line)))


def planted_tmpdir(monkeypatch: pytest.MonkeyPatch, beside: Path) -> str:
    """Set this process's ``TMPDIR`` to a folder of the server's (on ``beside``'s file system, where the images are,
    so that it could hold their linked copy); its path, which must not leak."""
    folder = beside / f"srv-podium-secret-data-{uuid.uuid4().hex[:8]}" / "tmp"
    folder.mkdir(parents=True)
    monkeypatch.setenv("TMPDIR", str(folder))
    monkeypatch.setattr(tempfile, "tempdir", None)  # read again from the environment
    assert tempfile.gettempdir() == str(folder)
    return str(folder.parent)


def secrets(monkeypatch: pytest.MonkeyPatch, database: str, beside: Path) -> list[str]:
    """Plant a secret key, the database URL and a ``TMPDIR`` in this process's environment; the strings that must not leak."""
    secret, password = f"secret-{uuid.uuid4().hex}", f"pw{uuid.uuid4().hex}"
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", secret)
    monkeypatch.setenv("PODIUM_DATABASE", database.replace("@", f":{password}@", 1) if "@" in database else database)
    return [secret, password, planted_tmpdir(monkeypatch, beside)]


def assert_nothing_of_the_server(
    texts: list[str], dump: dict[str, Any], forbidden: list[str], by_root: bool | None = None
) -> None:
    """The program saw and the team reads none of ``forbidden``; the program ran where podium says (``by_root``: podium
    ran as root, this process's user by default)."""
    shown = "\n".join([*texts, json.dumps(dump)])
    for word in forbidden:
        assert word not in shown, (word, [key for key, value in dump.items() if word in json.dumps(value)])
    assert dump["cwd"] == WORK_FOLDER and dump["input"] == IMAGES_FOLDER + "\n"
    if (
        (os.geteuid() == 0) if by_root is None else by_root
    ):  # the keeper's staging: the images are an overlay of a staging path of the run
        assert f" {IMAGES_FOLDER} " in dump["mountinfo"] and " - overlay overlay ro,lowerdir=" in dump["mountinfo"]
    assert "PATH=/usr/local/bin:/usr/bin:/bin" in dump["/proc/1/environ"]  # bubblewrap's own, read: it is the program's
    assert set(dump["/proc/1/environ"].split("\0")) - {""} == set(dump["environ"].split("\0")) - {
        "",
        f"PWD={WORK_FOLDER}",
    }
    assert dump["/proc/1/cmdline"].split("\0")[1:3] == [
        "--args",
        dump["/proc/1/cmdline"].split("\0")[2],
    ]  # its options are in a memory file
    assert all(outcome in ("FileNotFoundError", "PermissionError") for outcome in dump["tries"]), dump["tries"]


@pytest.fixture
def bwrap() -> None:
    require("bubblewrap", bwrap_problem())


@pytest.mark.usefixtures("bwrap")
def test_the_runner_shows_the_program_nothing_of_its_caller(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    demo = get("face-clustering").write_demo(tmp_path / "contest")
    data = tmp_path / "data"
    code = hostile_program(data / "submissions" / "7" / "code", [data, tmp_path / "podium.sqlite3", demo.truth])
    (tmp_path / "podium.sqlite3").write_text("the database")
    forbidden = [
        *secrets(monkeypatch, f"sqlite:///{tmp_path / 'podium.sqlite3'}", tmp_path),
        str(data),
        "/sys/fs/cgroup",
    ]
    forbidden.append(str(tmp_path / "contest"))  # the images' folder: a bind's mount showed it (/proc/self/mountinfo)

    result = run_program(
        RunRequest(
            "face-clustering",
            tmp_path / "contest" / "images",
            demo.truth,
            Limits(time_s=20, memory_mb=1024, disk_mb=DEFAULT_DISK_MB),
            command=f"python3 {CODE_FOLDER}/hostile.py",
            settings={"th1_s": "5", "th2_s": "20", "ram_max_mb": "4096"},
            sandbox="bwrap",
            code=code,
        )
    )
    assert result.run is not None and result.run["outcome"] == "no_output", result.run
    assert_nothing_of_the_server([json.dumps(result.to_dict())], dump_of(result.run["stderr_tail"]), forbidden)


@pytest.mark.usefixtures("bwrap")
def test_a_program_submitted_to_the_service_reads_nothing_of_the_server(
    database_url: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    contest = write_contest(
        tmp_path / "contest",
        "face-clustering",
        kind="programs",
        extra=FACES.format(images=tmp_path / "contest" / "demo" / "images"),
    )
    contest_id, teams = (
        f"contest-{uuid.uuid4().hex[:8]}",
        (f"team{uuid.uuid4().hex[:8]}", f"team{uuid.uuid4().hex[:8]}"),
    )
    contest.write_text(contest.read_text().replace('id = "test-face-clustering"', f'id = "{contest_id}"', 1))
    clock = Clock(at("2026-03-02T12:00:00Z"))
    data = tmp_path / "data"
    service, tokens = set_up(database_url, contest, data, teams, clock)
    sqlite_file = tmp_path / "podium.sqlite3"
    forbidden = [*secrets(monkeypatch, database_url, tmp_path), str(data), "/sys/fs/cgroup", str(tmp_path / "contest")]
    program = hostile_program(
        tmp_path / "program", [data, data / "submissions" / "1", sqlite_file, load(contest).truth]
    )
    archive = tmp_path / "program.tar.gz"
    with tarfile.open(archive, "w:gz") as tar:
        tar.add(program / "hostile.py", arcname="hostile.py")
    with writing(service.engine) as connection:
        session = accounts.new_token(connection, 1, False, "session of alpha", clock())

    with LiveServer(service) as server:
        other = server.call(
            "POST",
            "/api/submissions",
            tokens[teams[1]],
            body=archive,
            query={"filename": "program.tar.gz", "entry": "hostile.py"},
        )
        mine = server.call(
            "POST",
            "/api/submissions",
            tokens[teams[0]],
            body=archive,
            query={"filename": "program.tar.gz", "entry": "hostile.py"},
        )
        assert other.status == 201 and mine.status == 201, (other.body, mine.body)
        worker = subprocess.Popen(
            [sys.executable, "-m", "podium", "worker", "--data", str(data), "--sandbox", "bwrap", "--lease", "30"],
            env=os.environ.copy(),
            start_new_session=True,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
        )
        try:
            for _ in range(600):  # bounded: 60 s
                answer = server.call("GET", f"/api/submissions/{mine.body['id']}", tokens[teams[0]])
                if answer.body["status"] not in ("queued", "running"):
                    break
                if worker.poll() is not None:
                    raise AssertionError(worker.stderr.read().decode()[-3000:] if worker.stderr else "the worker ended")
                time.sleep(0.1)
        finally:
            worker.send_signal(signal.SIGTERM)
            worker.wait(timeout=60)
        listed = server.call("GET", "/api/submissions", tokens[teams[0]])
        page = urllib.request.urlopen(
            urllib.request.Request(
                f"{server.url}/submissions/{mine.body['id']}", headers={"Cookie": f"{COOKIE}={session}"}
            )
        )
        html = page.read().decode()
    assert answer.body["status"] == "failed", answer.body
    texts = [json.dumps(answer.body), json.dumps(listed.body), html]
    dump = dump_of(answer.body["stderr_tail"])
    assert_nothing_of_the_server(texts, dump, [*forbidden, teams[1]])
    assert contest_id not in json.dumps(dump) and teams[0] not in json.dumps(dump)  # its page names them: not its run


# Run by another user (``nobody``): the runner shows the program the server's folders, then prints what it saw.
AS_ANOTHER_USER = """
import json, sys
from pathlib import Path
from podium.challenges import get
from podium.runner.process import Limits
from podium.runner.sandbox import CODE_FOLDER
from podium.scoring.run import RunRequest, run_program
root = Path(sys.argv[1])
demo = get("face-clustering").write_demo(root / "data" / "contests" / "contest-of-team-beta")
code = root / "data" / "submissions" / "7-team-beta" / "code"
result = run_program(RunRequest(
    "face-clustering", demo.truth.parent / "images", demo.truth, Limits(time_s=20, memory_mb=1024, disk_mb=100),
    command=f"python3 {CODE_FOLDER}/hostile.py", settings={"th1_s": "5", "th2_s": "20", "ram_max_mb": "4096"},
    sandbox="bwrap", code=code,
))
print(json.dumps(result.to_dict()))
"""


def _as_nobody(python: str, environment: dict[str, str], *args: str) -> subprocess.CompletedProcess[str]:
    """``python ARGS`` run by the user nobody with only ``environment``, from ``/``."""
    command = ["runuser", "-u", "nobody", "--", "env", "-i", *(f"{k}={v}" for k, v in environment.items())]
    return subprocess.run([*command, python, *args], capture_output=True, text=True, timeout=120, cwd="/")


def _nobody_problem(python: str, environment: dict[str, str]) -> str | None:
    """Why ``python`` cannot run podium as the user nobody here, or ``None``."""
    if shutil.which("runuser") is None:
        return "no runuser (util-linux) to run podium as another user"
    tried = _as_nobody(python, environment, "-c", "import podium.scoring.run")
    return None if tried.returncode == 0 else f"{python} cannot import podium as nobody: {tried.stderr.strip()[-300:]}"


@pytest.mark.usefixtures("bwrap")
def test_a_run_by_another_user_than_root_shows_no_server_path() -> None:
    """Not root, the keeper makes no overlay of the images: their bind's source must tell nothing either."""
    if os.geteuid() != 0:
        pytest.skip(
            "not root: every run here is already another user's (test_the_runner_shows_the_program_nothing_of_its_caller)"
        )
    environment = {
        "PATH": "/usr/bin:/bin",
        "PYTHONPATH": os.pathsep.join([str(Path(podium.__file__).parents[1]), sysconfig.get_paths()["purelib"]]),
    }
    python = next(
        (
            p
            for p in (sys.executable, f"/usr/bin/python{sys.version_info[0]}.{sys.version_info[1]}")
            if _nobody_problem(p, environment) is None
        ),
        None,
    )
    require("a Python that the user nobody may run", None if python else _nobody_problem(sys.executable, environment))
    root = Path(tempfile.mkdtemp(prefix="podium-home-"))
    try:
        hostile_program(
            root / "data" / "submissions" / "7-team-beta" / "code", [root / "data", root / "data" / "contests"]
        )
        (root / "tmp").mkdir()  # the server's TMPDIR, on the images' disk: no run folder may be made there
        shutil.chown(root, "nobody")
        for folder, names, files in os.walk(root):
            for name in names + files:
                shutil.chown(os.path.join(folder, name), "nobody")
        done = _as_nobody(str(python), {**environment, "TMPDIR": str(root / "tmp")}, "-c", AS_ANOTHER_USER, str(root))
        assert done.returncode == 0, done.stderr[-3000:]
        document = json.loads(done.stdout.strip().splitlines()[-1])
        dump = dump_of(document["run"]["stderr_tail"])
        assert_nothing_of_the_server([json.dumps(document)], dump, [str(root), "team-beta", "contest-of"], False)
        (images,) = [line for line in dump["mountinfo"].splitlines() if f" {IMAGES_FOLDER} " in line]
        assert " /tmp/podium-run-" in images and " - overlay " not in images, images  # a staged copy, no overlay
    finally:
        shutil.rmtree(root, ignore_errors=True)


def test_images_on_another_file_system_are_copied_up_to_a_limit(tmp_path: Path) -> None:
    """No temporary folder on the images' file system (here a tmpfs): copied for the run up to the limit, else shown
    from their own folder (a copy of a large test set on every run would cost its size each time)."""
    if not os.path.isdir("/dev/shm") or os.stat("/dev/shm").st_dev in {os.stat(p).st_dev for p in ("/tmp", "/var/tmp")}:
        pytest.skip("/dev/shm is not a file system of its own here")
    elsewhere = Path(tempfile.mkdtemp(prefix="podium-test-", dir="/dev/shm"))
    try:
        images = get("face-clustering").write_demo(elsewhere / "contest").truth.parent / "images"
        assert temporary_parent_beside(images) is None and temporary_parent_beside(tmp_path) is not None
        copy = staged_images(images, tmp_path / "copy")
        assert copy == tmp_path / "copy" and sorted(p.name for p in copy.iterdir()) == sorted(
            p.name for p in images.iterdir()
        )
        assert all(os.stat(p).st_ino != os.stat(images / p.name).st_ino for p in copy.iterdir())  # copied: no link
        limit = sum(p.stat().st_size for p in images.iterdir()) - 1  # a byte short of the images
        assert (
            linked_copy(copy, tmp_path / "same-disk", copy_limit=0) == tmp_path / "same-disk"
        )  # linked: nothing copied
        with pytest.MonkeyPatch.context() as patch:
            patch.setattr(run_module, "COPY_LIMIT_BYTES", limit)
            assert staged_images(images, tmp_path / "large") == images and not (tmp_path / "large").exists()
    finally:
        shutil.rmtree(elsewhere, ignore_errors=True)
