"""``[limits] disk_mb``: a program cannot fill the server's disk from its working folder.

Real programs in the real sandbox (bubblewrap; in CI it must be there), and
unconfined (``--sandbox none``), which the same bounds hold: as root on a file
system of the run's own that refuses writes past the limit (in CI it must be
made), and with the scan that bounds the folder where none can be made.
"""

from __future__ import annotations

import fcntl
import glob
import json
import os
import shutil
import subprocess
import sys
import tempfile
import textwrap
import time
from pathlib import Path

import pytest

from conftest import require
from conftest import run as cli
from podium.challenges import get
from podium.runner import volume
from podium.runner.confine import drop_to
from podium.runner.disk import used_bytes
from podium.runner.process import Limits
from podium.runner.sandbox import CODE_FOLDER, SANDBOX_ID, bwrap_problem
from podium.runner.workdir import RUN_PREFIX, remove_abandoned, temporary_folder
from podium.scoring.run import RunRequest, run_program

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="Linux runner")
LIMIT_MB = 64
MARGIN_MB = 48  # what a writer adds between two scans (measured: 4 to 27 MB), with room for a busy machine
LOOP_GET_STATUS64 = 0x4C05
HARD_MB = LIMIT_MB + volume.SLACK_BYTES / 2**20  # what a file system of the run's own may hold, at most
STOPPED = f"the program was stopped: its working folder reached the disk limit of {LIMIT_MB} MB (files it writes count, in all)"


def volume_problem() -> str | None:
    """Why no file system of a run's own can be made here, or ``None``."""
    if os.geteuid() != 0:
        return "podium is not root: the working folder is scanned instead"
    probe = temporary_folder(RUN_PREFIX)
    try:
        made = volume.mounted(probe / "disk", 2**20)
        if made is None:
            return "no loop device, mkfs.ext4 or mount here (a container without CAP_SYS_ADMIN?)"
        volume.unmount(made)
        return None
    finally:
        shutil.rmtree(probe, ignore_errors=True)


def loops_of(prefix: str) -> list[str]:
    """The loop devices attached for a run whose folder's name starts with ``prefix`` (their ``lo_file_name``)."""
    held = []
    for path in glob.glob("/sys/block/loop*/loop"):  # attached devices only
        device = f"/dev/{path.split('/')[3]}"
        try:
            fd = os.open(device, os.O_RDONLY)
        except OSError:
            continue
        try:
            status = fcntl.ioctl(fd, LOOP_GET_STATUS64, bytes(232))
        except OSError:
            continue  # detached meanwhile
        finally:
            os.close(fd)
        name = status[56:120].split(b"\0")[0].decode(errors="replace")  # struct loop_info64's lo_file_name
        if name.startswith(prefix):
            held.append(f"{device}: {name}")
    return held


def mounts_left(pid: int | None = None) -> list[str]:
    """The mounts and loop devices that runs of ``pid`` (this process) still hold: none once they are over."""
    mine = f"{RUN_PREFIX}{pid or os.getpid()}-"
    deadline = time.monotonic() + 2  # the kernel frees a loop device just after its last unmount
    while True:
        with open("/proc/self/mountinfo") as f:
            left = [line for line in f if mine in line] + loops_of(mine)
        if not left or time.monotonic() > deadline:
            return left
        time.sleep(0.05)


@pytest.fixture
def hard() -> None:
    """The working folder on a file system of its own: podium as root, with a loop device."""
    require("a file system of the run's own", volume_problem())


@pytest.fixture
def scanned(monkeypatch: pytest.MonkeyPatch) -> None:
    """The working folder on the server's disk, bounded by the scan (podium not root)."""
    monkeypatch.setattr("podium.scoring.run.mounted", lambda root, limit: None)


@pytest.fixture(params=["bwrap", "none"])
def sandbox(request: pytest.FixtureRequest) -> str:
    if request.param == "bwrap":
        require("bubblewrap", bwrap_problem())
    return str(request.param)


def run(
    tmp_path: Path,
    sandbox: str,
    code: str,
    disk_limit_mb: float | None = LIMIT_MB,
    time_limit_s: float = 30,
    memory_mb: float = 1024,
) -> dict:
    """Run ``code`` (Python) as a face-clustering program; the run section, and the folder's peak measured by the test."""
    demo = get("face-clustering").write_demo(tmp_path / "contest")
    folder = tmp_path / "program"
    folder.mkdir()
    (folder / "p.py").write_text(textwrap.dedent(code))
    result = run_program(
        RunRequest(
            "face-clustering",
            tmp_path / "contest" / "images",
            demo.truth,
            Limits(time_limit_s, memory_mb, disk_limit_mb),
            command=f"python3 {CODE_FOLDER if sandbox == 'bwrap' else folder}/p.py",
            settings={"th1_s": "5", "th2_s": "60", "ram_max_mb": "4096"},
            sandbox=sandbox,
            code=folder,
        )
    )
    assert result.run is not None
    return {**result.run, "errors": [issue.message for issue in result.errors], "status": result.status}


MANY_FILES = """
    import os
    chunk = os.urandom(1 << 20)
    for k in range(100_000):  # 100 GB if nothing stopped it
        with open(f"junk-{k}.bin", "wb") as f:
            for _ in range(4):
                f.write(chunk)
"""


PREALLOCATED = """
    import os
    for k in range(100_000):  # each file under the limit, reserved at once rather than written
        fd = os.open(f"junk-{k}.bin", os.O_CREAT | os.O_WRONLY)
        os.posix_fallocate(fd, 0, 60 << 20)
        os.close(fd)
"""


@pytest.mark.usefixtures("scanned")
@pytest.mark.parametrize("code", [MANY_FILES, PREALLOCATED], ids=["written", "fallocated"])
def test_a_fast_writer_of_many_files_is_stopped_near_the_limit_where_the_folder_is_scanned(
    tmp_path: Path, sandbox: str, code: str
) -> None:
    run_ = run(tmp_path, sandbox, code)
    assert run_["outcome"] == "disk_limit" and run_["status"] == "rejected", run_
    assert run_["errors"] == [STOPPED]
    assert LIMIT_MB < run_["peak_disk_mb"] < LIMIT_MB + MARGIN_MB, run_
    assert run_["wall_s"] < 10 and run_["disk_limit_mb"] == LIMIT_MB and run_["disk_method"].startswith("its files")


ONE_BIG_FILE = """
    import os
    with open("big.bin", "wb") as f:
        for _ in range(1000):
            f.write(os.urandom(1 << 20))
"""
SPARSE = """
    import os
    for k in range(100_000):  # 60 MB each, 1 MB of it written: they count what they hold
        with open(f"sparse-{k}.bin", "wb") as f:
            f.truncate(60 << 20)
            f.seek(k % 59 << 20)
            f.write(os.urandom(1 << 20))
"""
MANY_EMPTY_FILES = """
    import os
    for k in range(10_000_000):  # no block each, but a file each
        os.close(os.open(f"{k}", os.O_CREAT | os.O_WRONLY))
"""
MMAP = """
    import mmap, os
    for k in range(100):  # files grown through a mapping: written back by the kernel, not by write()
        fd = os.open(f"mapped-{k}.bin", os.O_CREAT | os.O_RDWR)
        os.ftruncate(fd, 40 << 20)
        with mmap.mmap(fd, 40 << 20) as m:
            for offset in range(0, 40 << 20, 4096):
                m[offset] = 1
        os.close(fd)
"""
HARD_LINKED = """
    import os
    open("big.bin", "wb").write(os.urandom(48 << 20))
    for k in range(2000):  # each link is the same 48 MB
        os.link("big.bin", f"link-{k}")
    for k in range(100_000):
        open(f"more-{k}.bin", "wb").write(os.urandom(1 << 20))
"""
FILLERS = {
    "many files": MANY_FILES,
    "one big file": ONE_BIG_FILE,
    "sparse files": SPARSE,
    "many empty files": MANY_EMPTY_FILES,
    "mmap": MMAP,
    "hard links": HARD_LINKED,
    "fallocated": PREALLOCATED,
}


@pytest.mark.usefixtures("hard")
@pytest.mark.parametrize("code", FILLERS.values(), ids=FILLERS.keys())
def test_a_file_system_of_its_own_refuses_every_way_past_the_limit(tmp_path: Path, sandbox: str, code: str) -> None:
    """Past the limit and its slack the kernel refuses the write, however fast the writer or loaded the machine."""
    run_ = run(tmp_path, sandbox, code)
    assert run_["outcome"] == "disk_limit" and run_["status"] == "rejected", run_
    assert run_["peak_disk_mb"] <= HARD_MB and run_["wall_s"] < 15, run_
    if code is MANY_EMPTY_FILES:  # out of files, not of blocks
        assert run_["peak_disk_mb"] < LIMIT_MB and run_["errors"] == [
            f"the program was stopped: its working folder reached the disk limit of {LIMIT_MB} MB in files: "
            "at most one file per 4 KiB of it (an empty file counts)"
        ], run_
    else:
        assert run_["peak_disk_mb"] > LIMIT_MB and run_["errors"] == [STOPPED], run_
    assert run_["disk_method"].startswith("a file system of its own") and mounts_left() == []


@pytest.mark.usefixtures("hard")
def test_hard_links_count_once_and_a_program_at_the_limit_is_scored(tmp_path: Path, sandbox: str) -> None:
    """A scan counts each link of a file again (2,000 links of 48 MB: 94 GB); the file system counts its blocks once.
    A program that fills the limit to its last megabyte is never refused."""
    code = """
        import os
        open("big.bin", "wb").write(os.urandom(48 << 20))
        for k in range(2000):
            os.link("big.bin", f"link-{k}")
        with open("rest.bin", "wb") as f:
            for _ in range(14):
                f.write(os.urandom(1 << 20))
        names = sorted(os.listdir(open("input.txt").read().strip()))
        open("team.csv", "w").write("".join(f"{name.rsplit('.', 1)[0]}, 1\\n" for name in names))
    """
    run_ = run(tmp_path, sandbox, code)
    assert run_["outcome"] == "finished" and run_["status"] == "scored", run_
    assert 62 < run_["peak_disk_mb"] <= LIMIT_MB, run_


@pytest.mark.usefixtures("hard")
@pytest.mark.parametrize("limit", ["time", "memory"])
def test_no_mount_is_left_after_a_run_killed_at_a_limit(tmp_path: Path, limit: str) -> None:
    code = """
        import os, time
        open("half.bin", "wb").write(os.urandom(32 << 20))
        hog = [bytes([k % 256]) * (1 << 20) for k in range(512 if os.environ.get("HOG") else 0)]
        time.sleep(60)
    """
    if limit == "memory":
        code = code.replace('os.environ.get("HOG")', "True")
    run_ = run(tmp_path, "bwrap" if bwrap_problem() is None else "none", code, time_limit_s=5, memory_mb=256)
    assert run_["outcome"] == ("timeout" if limit == "time" else "memory_limit"), run_
    assert 32 <= run_["peak_disk_mb"] < 33 and mounts_left() == []


@pytest.mark.usefixtures("hard")
def test_a_killed_podiums_file_system_is_unmounted_by_the_next_worker() -> None:
    """podium killed with SIGKILL leaves its run's file system mounted: a starting worker unmounts it, then removes the
    folder (rmtree alone would empty the file system and fail on the mount point); the loop device and its file go too.
    (Any run in another test process may unmount it first: what was left is not asserted, only that nothing is.)"""
    child = os.fork()
    if child == 0:  # a podium that dies in the middle of a run
        scratch = temporary_folder(RUN_PREFIX)
        made = volume.mounted(scratch / "disk", 8 << 20)
        (made.folder / "output.csv").write_text("a, 1\n") if made is not None else None
        os._exit(0 if made is not None else 1)
    _, status = os.waitpid(child, 0)
    assert os.waitstatus_to_exitcode(status) == 0
    removed = remove_abandoned()
    assert any(path.name.startswith(f"{RUN_PREFIX}{child}-") for path in removed), removed
    assert mounts_left(child) == [] and not glob.glob(f"/tmp/{RUN_PREFIX}{child}-*")


def test_a_folder_named_for_no_possible_process_stops_no_sweep_and_is_left() -> None:
    """Anyone may make ``/tmp/podium-run-99999999999999999999-x``, and as root mount on it: the sweep every worker's
    start and every run of a file system of its own make raised OverflowError on its process id (``os.kill``), so one
    such folder stopped them all. No process could have made it: it is no run's, and it stays, mounted or not."""
    folder = Path(tempfile.mkdtemp(prefix=f"{RUN_PREFIX}{10**20}-", dir="/tmp"))
    mounted = (
        os.geteuid() == 0 and subprocess.run(["mount", "-t", "tmpfs", "-o", "size=4k", "none", folder]).returncode == 0
    )
    try:
        assert folder not in remove_abandoned() and folder.is_dir()
        assert folder not in volume.unmount_abandoned()
        assert not mounted or os.path.ismount(folder), "a mount of no run's was taken"
    finally:
        subprocess.run(["umount", folder]) if mounted else None
        folder.rmdir()


def started_run(demo: Path, truth: Path, command: str) -> tuple[subprocess.Popen[bytes], Path]:
    """A real ``podium run`` in bubblewrap, its working folder on a file system of its own, once its program wrote
    ``started`` there: the process, and the folder as the host sees it (its mount point's ``work``)."""
    options = ["--images", str(demo), "--truth", str(truth), "--disk-limit", "8", "--time-limit", "60", "--quiet"]
    run_ = subprocess.Popen(
        [sys.executable, "-m", "podium", "run", "face-clustering", *options, "--command", f"touch started; {command}"],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    mine = f"/{RUN_PREFIX}{run_.pid}-"
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline and run_.poll() is None:
        with open("/proc/self/mountinfo") as f:
            points = [line.split()[4] for line in f if mine in line.split()[4]]
        if points and Path(points[0], "work", "started").exists():
            return run_, Path(points[0], "work")
        time.sleep(0.05)
    run_.kill()
    raise AssertionError(f"podium run did not start its program within 60 s (exit code {run_.wait()})")


@pytest.mark.usefixtures("hard")
def test_a_podium_run_killed_with_sigkill_leaves_no_mount_once_another_run_mounts(tmp_path: Path) -> None:
    """A ``podium run`` killed with SIGKILL mid-run leaves its file system mounted; the next run, before it mounts its
    own, unmounts it, and its loop device detaches itself. A live run's mount is never taken for one."""
    require("bubblewrap", bwrap_problem())  # its program dies with podium: nothing holds the file system then
    demo = get("face-clustering").write_demo(tmp_path / "contest")
    images = tmp_path / "contest" / "images"
    killed, _ = started_run(images, demo.truth, "sleep 60")
    assert len(mounts_left(killed.pid)) == 2  # its mount and its loop device, while it runs
    killed.kill()
    killed.wait()
    live, work = started_run(images, demo.truth, "while [ ! -e stop ]; do sleep 0.05; done")
    try:
        run(tmp_path / "next", "bwrap", "pass")  # the next run, in this process
        assert mounts_left(killed.pid) == []
        assert (work / "started").exists() and len(mounts_left(live.pid)) == 2, "a live run's mount was taken"
        (work / "stop").touch()
        assert live.wait(timeout=60) == 1  # its program wrote nothing: rejected, as asked
        assert mounts_left(live.pid) == []
    finally:
        live.kill()
        remove_abandoned()


@pytest.mark.usefixtures("hard")
def test_the_volume_takes_at_most_its_size_of_the_servers_disk_and_names_no_server_path(tmp_path: Path) -> None:
    """The loop device's file is the size the module names, sparse, nameless; inside the sandbox the
    mount table shows the device and the folder ``/work`` in it, nothing of the server."""
    code = """
        import glob, sys
        print(open("/proc/self/mountinfo").read(), file=sys.stderr)
    """
    shown = run(tmp_path, "bwrap" if bwrap_problem() is None else "none", code)
    (work,) = [line for line in shown["stderr_tail"].splitlines() if " - ext4 /dev/loop" in line]
    assert work.split()[3] == "/work" and str(tmp_path) not in shown["stderr_tail"], work
    scratch = temporary_folder(RUN_PREFIX, str(tmp_path))
    made = volume.mounted(scratch / "disk", LIMIT_MB << 20)
    assert made is not None
    try:
        device = os.stat(made.root).st_dev
        sysfs = f"/sys/dev/block/{os.major(device)}:{os.minor(device)}"
        assert int(Path(sysfs, "size").read_text()) * 512 == volume.size_bytes(LIMIT_MB << 20) < (LIMIT_MB + 16) << 20
        backing = Path(sysfs, "loop", "backing_file").read_text().strip()  # a container reads it in /sys
        assert backing.startswith(f"{tmp_path}/#") and backing.endswith(" (deleted)"), backing  # no file, no run named
        assert sorted(os.listdir(scratch)) == ["disk"] and os.listdir(made.folder) == []
    finally:
        volume.unmount(made)
        shutil.rmtree(scratch)


IN_MEMORY_TMP = """
import os, shutil, subprocess, sys
from podium.runner import volume
from podium.runner.workdir import RUN_PREFIX, temporary_folder
scratch = temporary_folder(RUN_PREFIX)
made = volume.mounted(scratch / "disk", 64 << 20)
device = os.stat(made.root).st_dev
backing = open(f"/sys/dev/block/{os.major(device)}:{os.minor(device)}/loop/backing_file").read().strip()
before = shutil.disk_usage("/tmp").used
with open(made.folder / "written.bin", "wb") as f:
    f.write(os.urandom(16 << 20))
os.sync()
print(backing, (shutil.disk_usage("/tmp").used - before) >> 20)
volume.unmount(made)
shutil.rmtree(scratch)
"""


@pytest.mark.usefixtures("hard")
def test_a_volume_is_not_held_in_memory_where_tmp_is_a_tmpfs() -> None:
    """With ``/tmp`` a tmpfs (Debian 13's default; here in a mount namespace of the test's own) the run's file system
    lies in ``/var/tmp``: in ``/tmp`` what the program wrote stayed in the server's memory (16 MB of it), charged to
    no run, where a file written in a tmpfs folder counts in the writer's memory."""
    require("unshare (util-linux)", None if shutil.which("unshare") else "no unshare here")
    script = "mount --make-rprivate / && mount -t tmpfs -o size=256m tmpfs /tmp"
    repository = Path(sys.prefix).resolve().parent  # the checkout, its .venv and src: kept where /tmp holds it (CI)
    with tempfile.TemporaryDirectory(dir="/var/tmp") as hold:
        if repository.is_relative_to("/tmp"):  # the old /tmp held aside, the checkout bound again into the tmpfs
            script = (
                f"mount --make-rprivate / && mount --bind /tmp {hold} && mount -t tmpfs -o size=256m tmpfs /tmp"
                f" && mkdir -p {repository} && mount --bind {hold}/{repository.relative_to('/tmp')} {repository}"
            )
        script += f" && {sys.executable} -c '{IN_MEMORY_TMP}'"
        shown = subprocess.run(["unshare", "-m", "sh", "-c", script], capture_output=True, text=True, timeout=60)
    assert shown.returncode == 0, shown.stderr
    backing, in_memory_mb = shown.stdout.strip().rsplit(" ", 1)
    assert backing.startswith("/var/tmp/#") and int(in_memory_mb) == 0, shown.stdout


@pytest.mark.usefixtures("scanned")
def test_one_file_stops_at_the_limit_sparse_or_not(tmp_path: Path, sandbox: str) -> None:
    code = """
        import os, sys
        try:
            open("sparse.bin", "wb").truncate(10 << 30)  # 10 GB of nothing
        except OSError as exc:
            print("truncate:", exc.strerror, file=sys.stderr)
        with open("big.bin", "wb") as f:
            while True:
                f.write(b"x" * (1 << 20))
    """
    run_ = run(tmp_path / "a", sandbox, code)
    assert run_["outcome"] == "disk_limit", run_
    assert "truncate: File too large" in run_["stderr_tail"]  # RLIMIT_FSIZE: no file past the limit, not even a hole
    assert LIMIT_MB <= run_["peak_disk_mb"] < LIMIT_MB + 1, run_  # the kernel stops the file at the limit exactly


@pytest.mark.usefixtures("scanned")
def test_files_hidden_in_an_unreadable_folder_still_count(tmp_path: Path, sandbox: str) -> None:
    code = """
        import os, time
        os.mkdir("hidden")
        for k in range(24):
            with open(f"hidden/{k}.bin", "wb") as f:
                f.write(os.urandom(4 << 20))
        os.chmod("hidden", 0)
        time.sleep(30)
    """
    run_ = run(tmp_path, sandbox, code)
    assert run_["outcome"] == "disk_limit" and run_["wall_s"] < 10, run_


def test_a_program_within_the_limit_is_scored_and_its_use_reported(tmp_path: Path, sandbox: str) -> None:
    code = """
        import os
        open("scratch.bin", "wb").write(os.urandom(8 << 20))
        os.remove("scratch.bin")
        names = sorted(os.listdir(open("input.txt").read().strip()))
        open("team.csv", "w").write("".join(f"{name.rsplit('.', 1)[0]}, 1\\n" for name in names))
    """
    run_ = run(tmp_path, sandbox, code)
    assert run_["outcome"] == "finished" and run_["status"] == "scored", run_
    assert 0 < run_["peak_disk_mb"] < 9, run_
    unbounded = run(tmp_path / "unbounded", sandbox, code, disk_limit_mb=None)
    assert unbounded["outcome"] == "finished" and unbounded["peak_disk_mb"] is None


def test_fallocate_itself_is_refused(tmp_path: Path, sandbox: str) -> None:
    code = """
        import ctypes, os, sys
        libc = ctypes.CDLL(None, use_errno=True)
        fd = os.open("reserved.bin", os.O_CREAT | os.O_WRONLY)
        print("fallocate:", libc.fallocate(fd, 0, ctypes.c_long(0), ctypes.c_long(1 << 20)), os.strerror(ctypes.get_errno()), file=sys.stderr)
    """
    run_ = run(tmp_path, sandbox, code)
    assert "fallocate: -1 Operation not supported" in run_["stderr_tail"], run_


def test_used_bytes_counts_blocks_not_sizes(tmp_path: Path) -> None:
    with open(tmp_path / "sparse", "wb") as f:
        f.truncate(1 << 30)
    (tmp_path / "folder").mkdir()
    (tmp_path / "folder" / "data").write_bytes(b"x" * 100_000)
    assert 100_000 <= used_bytes(tmp_path) < 200_000


def test_used_bytes_opens_a_folder_its_owner_closed(tmp_path: Path) -> None:
    """podium runs as the program's owner when it is not root: a folder made unreadable must still be counted."""
    folder = Path(tempfile.mkdtemp(dir="/tmp"))  # reachable by the unprivileged user
    try:
        (folder / "hidden").mkdir()
        (folder / "hidden" / "data").write_bytes(b"x" * 1_000_000)
        (folder / "hidden").chmod(0)
        if os.geteuid() == 0:  # root reads it anyway: count as its unprivileged owner would, in a child
            for path in (folder, folder / "hidden", folder / "hidden" / "data"):
                os.chown(path, SANDBOX_ID, SANDBOX_ID)
            read, write = os.pipe()
            child = os.fork()
            if child == 0:
                drop_to(SANDBOX_ID, SANDBOX_ID)
                os.write(write, str(used_bytes(folder)).encode())
                os._exit(0)
            os.close(write)
            os.waitpid(child, 0)
            with os.fdopen(read) as pipe:
                counted = int(pipe.read() or 0)
        else:
            counted = used_bytes(folder)
        assert counted >= 1_000_000
    finally:
        shutil.rmtree(folder)


def test_podium_run_by_another_user_than_root_scans_the_folder(tmp_path: Path) -> None:
    """Not root, podium can make no file system: ``podium run`` as the user nobody, in bubblewrap, bounds the folder by
    the scan, and says so."""
    from test_sandbox_secrets import _as_nobody, _nobody_problem

    if os.geteuid() != 0:
        pytest.skip("not root: every run here is already another user's (the scanned tests above)")
    require("bubblewrap", bwrap_problem())
    environment = {"PATH": "/usr/bin:/bin", "PYTHONPATH": os.pathsep.join(sys.path)}
    pythons = (sys.executable, f"/usr/bin/python{sys.version_info[0]}.{sys.version_info[1]}")
    python = next((p for p in pythons if _nobody_problem(p, environment) is None), None)
    require("a Python that the user nobody may run", None if python else _nobody_problem(sys.executable, environment))
    root = Path(tempfile.mkdtemp(prefix="podium-nobody-"))
    try:
        demo = get("face-clustering").write_demo(root / "contest")
        shutil.chown(root, "nobody")
        for folder, names, files in os.walk(root):
            for name in names + files:
                shutil.chown(os.path.join(folder, name), "nobody")
        filler = "for k in $(seq 1 1000); do dd if=/dev/zero of=junk$k bs=1M count=4 2>/dev/null; done"
        done = _as_nobody(
            str(python),
            environment,
            *(
                "-m",
                "podium",
                "run",
                "face-clustering",
                "--command",
                filler,
                "--images",
                str(demo.truth.parent / "images"),
            ),
            *("--truth", str(demo.truth), "--disk-limit", str(LIMIT_MB), "--time-limit", "30", "--json", "-"),
        )
        run_ = json.loads(done.stdout[done.stdout.index("{") :])["run"]
        assert run_["outcome"] == "disk_limit" and run_["disk_method"].startswith("its files"), run_
        assert LIMIT_MB < run_["peak_disk_mb"] < LIMIT_MB + MARGIN_MB, run_
    finally:
        shutil.rmtree(root, ignore_errors=True)


@pytest.mark.usefixtures("hard")
def test_podium_run_as_root_holds_the_limit_exactly(tmp_path: Path) -> None:
    """The command, as root: ``podium run --command`` in bubblewrap is bound by the run's own file system."""
    require("bubblewrap", bwrap_problem())
    demo = get("face-clustering").write_demo(tmp_path / "contest")
    filler = "for k in $(seq 1 1000); do dd if=/dev/zero of=junk$k bs=1M count=4 2>/dev/null; done; sleep 30"
    code, output = cli(
        *("run", "face-clustering", "--command", filler, "--images", str(demo.truth.parent / "images")),
        *("--truth", str(demo.truth), "--disk-limit", str(LIMIT_MB), "--time-limit", "30", "--json", "-"),
    )
    document = json.JSONDecoder().raw_decode(output[output.index("{") :])[0]  # the table follows
    run_ = document["run"]
    assert code == 1 and run_["outcome"] == "disk_limit" and document["errors"][0]["message"] == STOPPED, run_
    assert LIMIT_MB < run_["peak_disk_mb"] <= HARD_MB and run_["wall_s"] < 10 and mounts_left() == [], run_
