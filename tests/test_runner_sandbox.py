"""The bubblewrap sandbox, run for real against hostile programs.

Each test: the limit or the wall holds, nothing the program started outlives
the run, and the outcome is reported. In CI (``CI=true``) a missing bubblewrap
or cgroup is a failure, not a skip (the ``sandbox`` and ``run_cgroup`` fixtures).
"""

from __future__ import annotations

import json
import os
import shutil
import socket
import subprocess
import sys
import textwrap
import threading
import time
from pathlib import Path

import pytest
from click.testing import CliRunner

from podium.cli import cli
from podium.runner import cgroups, volume
from podium.runner.process import PIDS_LIMIT, Limits, RunReport, run_limited
from podium.runner.sandbox import IMAGES_FOLDER, SANDBOX_ID, bubblewrap, gpu_devices
from podium.runner.workdir import RUN_PREFIX, prepare_workdir, temporary_folder

pytestmark = [
    pytest.mark.skipif(not sys.platform.startswith("linux"), reason="Linux sandbox"),
    pytest.mark.usefixtures("sandbox"),
]
INTERPRETER = tuple(Path(p) for p in {sys.prefix, sys.base_prefix})


def layout(tmp_path: Path) -> dict[str, Path]:
    """A contest on disk: images, the truth, another team's folder, and this team's program."""
    paths = {name: tmp_path / name for name in ("images", "program", "work", "teams")}
    for path in paths.values():
        path.mkdir(parents=True)
    (paths["images"] / "a.png").write_bytes(b"image")
    paths["truth"] = tmp_path / "truth.csv"
    paths["truth"].write_text("image,identity\na.png,ali\n")
    (paths["teams"] / "other").mkdir()
    (paths["teams"] / "other" / "answers.csv").write_text("secret\n")
    return paths


def sandboxed(
    tmp_path: Path, code: str, time_limit_s: float = 20, memory_limit_mb: float | None = None
) -> tuple[RunReport, dict[str, Path]]:
    """Run ``code`` (Python) in the sandbox as podium run would."""
    paths = layout(tmp_path)
    script = paths["program"] / "hostile.py"
    script.write_text(textwrap.dedent(code))
    return sandboxed_command([sys.executable, str(script)], paths, time_limit_s, memory_limit_mb), paths


def sandboxed_command(
    program: list[str], paths: dict[str, Path], time_limit_s: float, memory_limit_mb: float | None
) -> RunReport:
    prepare_workdir(paths["work"], IMAGES_FOLDER)
    tmpfs = None if memory_limit_mb is None else int(memory_limit_mb * 2**20)
    with bubblewrap(program, paths["work"], paths["images"], (paths["program"], *INTERPRETER), tmpfs) as confinement:
        return run_limited(confinement, paths["work"], Limits(time_limit_s, memory_limit_mb))


def survivors(token: str) -> list[int]:
    """Processes whose command line holds ``token`` 10 s after a run is over, at most: there must be none.

    A process killed with the run's namespace or tree shows its command line until the kernel has it exit,
    which a loaded machine may take a while to schedule: the test waits for that, not for a sleeper's 100 s.
    """
    deadline = time.monotonic() + 10
    while True:
        found = []
        for entry in os.listdir("/proc"):
            if entry.isdigit():
                try:
                    if token.encode() in Path(f"/proc/{entry}/cmdline").read_bytes():
                        found.append(int(entry))
                except OSError:
                    continue
        if not found or time.monotonic() > deadline:
            return found
        time.sleep(0.05)


def compiled(tmp_path: Path, source: str) -> Path:
    compiler = shutil.which("cc") or shutil.which("gcc")
    if compiler is None:
        pytest.skip("no C compiler for the hostile C programs")
    folder = tmp_path / "program"
    folder.mkdir(exist_ok=True)
    (folder / "hostile.c").write_text(textwrap.dedent(source))
    subprocess.run([compiler, "-O1", "-o", str(folder / "hostile"), str(folder / "hostile.c")], check=True)
    return folder / "hostile"


def test_the_truth_other_teams_and_podium_are_invisible_and_the_images_read_only(tmp_path: Path) -> None:
    hidden = [
        str(tmp_path / "truth.csv"),
        str(tmp_path / "teams" / "other" / "answers.csv"),
        str(Path(__file__).parent),
        str(Path(cgroups.__file__).parent),
        "/etc/passwd",
        "/etc/shadow",
    ]
    own_code = str(tmp_path / "program" / "x.py")
    report, paths = sandboxed(
        tmp_path,
        f"""
        import json, os
        tried = {{}}
        for path in {hidden!r}:
            try:
                os.listdir(path) if os.path.isdir(path) else open(path).read()
                tried[path] = "read"
            except OSError as exc:
                tried[path] = type(exc).__name__
        folder = open("input.txt").read().strip()
        tried["images"] = open(os.path.join(folder, "a.png"), "rb").read().decode()
        for target in (os.path.join(folder, "new.png"), os.path.join(folder, "a.png"), {own_code!r}):
            try:
                open(target, "wb").write(b"x")
                tried[target] = "written"
            except OSError as exc:
                tried[target] = type(exc).__name__
        tried["tmp"] = os.listdir("/tmp")
        tried["home"] = os.listdir({str(Path.home())!r}) if os.path.isdir({str(Path.home())!r}) else []
        tried["uid"] = os.getuid()
        tried["capabilities"] = [line.split()[1] for line in open("/proc/self/status") if line.startswith("CapEff")]
        tried["processes"] = sorted(int(p) for p in os.listdir("/proc") if p.isdigit())
        json.dump(tried, open("tried.json", "w"))
        open("/dev/stderr", "w").write("its stderr, reopened")
        """,
    )
    assert report.outcome == "finished" and report.sandbox == "bwrap", report
    assert report.stderr_tail == "its stderr, reopened"
    tried = json.loads((paths["work"] / "tried.json").read_text())
    assert tried.pop("images") == "image"
    assert tried.pop(str(tmp_path / "program" / "x.py")) in ("OSError", "PermissionError")  # read-only: EROFS
    bound = [paths["images"], paths["work"], paths["program"], *INTERPRETER]
    for folder in (Path("/tmp"), Path.home()):  # a private /tmp, no home: only the folders leading to what is bound
        scaffolding = {
            p.resolve().relative_to(folder).parts[0]
            for p in bound
            if p.resolve().is_relative_to(folder) and p.resolve() != folder
        }
        assert set(tried.pop("tmp" if folder == Path("/tmp") else "home")) <= scaffolding
    assert tried.pop("uid") == SANDBOX_ID and tried.pop("capabilities") == ["0000000000000000"]
    assert (
        len(tried.pop("processes")) <= 3
    )  # its PID namespace: bwrap's init, the shell or interpreter, nothing of the host
    assert all(outcome != "read" and outcome != "written" for outcome in tried.values()), tried
    assert (paths["images"] / "a.png").read_bytes() == b"image" and not (paths["images"] / "new.png").exists()
    if os.geteuid() == 0:  # the program's files belong to the unprivileged sandbox user on the host, too
        assert (paths["work"] / "tried.json").stat().st_uid == SANDBOX_ID


def test_no_network_no_name_resolution_no_host_loopback(tmp_path: Path) -> None:
    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen(1)
    server.settimeout(5)
    port = server.getsockname()[1]
    accepted: list[object] = []
    threading.Thread(target=lambda: accepted.append(_accept(server)), daemon=True).start()
    try:
        report, paths = sandboxed(
            tmp_path,
            f"""
            import json, socket
            tried = {{"interfaces": [name for _, name in socket.if_nameindex()]}}
            try:
                socket.create_connection(("127.0.0.1", {port}), timeout=2)
                tried["connect"] = "connected"
            except OSError as exc:
                tried["connect"] = type(exc).__name__
            try:
                socket.getaddrinfo("pypi.org", 443)
                tried["resolve"] = "resolved"
            except OSError as exc:
                tried["resolve"] = type(exc).__name__
            json.dump(tried, open("tried.json", "w"))
            """,
        )
    finally:
        server.close()
    tried = json.loads((paths["work"] / "tried.json").read_text())
    assert report.network_isolated and tried["interfaces"] == ["lo"]
    assert tried["connect"] != "connected" and tried["resolve"] != "resolved", tried
    assert accepted in ([], [None])  # the test's server saw no connection


def _accept(server: socket.socket) -> object:
    try:
        return server.accept()
    except OSError:
        return None


def test_no_way_back_to_the_host_namespaces_nor_kernel_settings(tmp_path: Path) -> None:
    _report, paths = sandboxed(
        tmp_path,
        """
        import ctypes, json, os
        libc = ctypes.CDLL(None, use_errno=True)
        tried = {}
        tried["new user namespace"] = libc.unshare(0x10000000)  # CLONE_NEWUSER: refused (--disable-userns)
        fd = os.open("/proc/1/ns/net", os.O_RDONLY)
        tried["setns"] = libc.setns(fd, 0)  # no capability
        value = open("/proc/sys/vm/swappiness").read()
        try:
            open("/proc/sys/vm/swappiness", "w").write(value)  # the same value: harmless if it were allowed
            tried["sysctl"] = "written"
        except OSError as exc:
            tried["sysctl"] = type(exc).__name__
        json.dump(tried, open("tried.json", "w"))
        """,
    )
    tried = json.loads((paths["work"] / "tried.json").read_text())
    assert tried["new user namespace"] == -1 and tried["setns"] == -1 and tried["sysctl"] != "written", tried


def test_no_block_device_shows_neither_the_hosts_nor_another_runs(tmp_path: Path) -> None:
    """No /sys at all (never bound), /proc/partitions and /proc/diskstats empty, no loop device in the mount table:
    with another run's file system planted first where podium can make one (root)."""
    scratch = temporary_folder(RUN_PREFIX)
    planted = volume.mounted(scratch / "disk", 1 << 20)
    try:
        _report, paths = sandboxed(
            tmp_path,
            """
            import json, os
            tried = {"sys": os.path.exists("/sys"), "mounts": open("/proc/self/mountinfo").read()}
            for table in ("partitions", "diskstats"):
                tried[table] = open(f"/proc/{table}").read()
            json.dump(tried, open("tried.json", "w"))
            """,
        )
    finally:
        if planted is not None:
            volume.unmount(planted)
        shutil.rmtree(scratch, ignore_errors=True)
    tried = json.loads((paths["work"] / "tried.json").read_text())
    assert tried["sys"] is False and tried["partitions"] == tried["diskstats"] == "", tried
    assert " /dev/loop" not in tried["mounts"] and str(scratch) not in tried["mounts"], tried["mounts"]


@pytest.mark.usefixtures("run_cgroup")
def test_forking_past_the_process_limit_stops_at_the_limit(tmp_path: Path) -> None:
    token = f"podium-fork-{os.getpid()}"
    report, paths = sandboxed(
        tmp_path,
        f"""
        import os, time
        count = 0
        try:
            while True:
                if os.fork() == 0:
                    os.execv("/bin/sleep", ["sleep", "100", "{token}"])
                count += 1
        except OSError:
            open("count.txt", "w").write(str(count))
        """,
        time_limit_s=60,
    )
    assert 0 < int((paths["work"] / "count.txt").read_text()) < PIDS_LIMIT
    assert report.outcome == "finished" and survivors(token) == []  # the sleepers died with the namespace


@pytest.mark.usefixtures("run_cgroup")
def test_memory_past_the_limit_and_in_dev_shm_is_counted_and_stopped(tmp_path: Path) -> None:
    for code in (
        "block = bytearray(400 * 2**20); block[::4096] = b'x' * len(block[::4096])",
        "chunk = b'x' * 2**20\nwith open('/dev/shm/hoard', 'wb') as f:\n    for _ in range(1024): f.write(chunk)",
    ):
        report, _ = sandboxed(tmp_path / str(len(code)), code + "\nimport time; time.sleep(30)\n", memory_limit_mb=200)
        assert report.outcome in ("memory_limit", "crashed") and report.wall_s < 15, report
        assert 150 <= report.peak_memory_mb <= 200, report  # counted (not 16 MB), and held at the limit


@pytest.mark.usefixtures("run_cgroup")
def test_the_cpu_limit_slows_a_busy_program(tmp_path: Path) -> None:
    paths = layout(tmp_path)
    busy = "import time\nt = time.process_time()\nwhile time.process_time() - t < 0.3: pass\n"
    (paths["program"] / "busy.py").write_text(busy)
    prepare_workdir(paths["work"], IMAGES_FOLDER)
    with bubblewrap(
        [sys.executable, str(paths["program"] / "busy.py")],
        paths["work"],
        paths["images"],
        (paths["program"], *INTERPRETER),
    ) as confinement:
        report = run_limited(confinement, paths["work"], Limits(time_s=30, cpus=0.1))
    assert report.outcome == "finished" and report.wall_s >= 2.0, report  # 0.3 s of CPU at a tenth of a core: about 3 s


def test_dev_shm_counts_without_a_cgroup_too(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.setattr(cgroups, "open_group", lambda *args, **kwargs: None)
    code = "chunk = b'x' * 2**20\nwith open('/dev/shm/hoard', 'wb') as f:\n    for _ in range(150): f.write(chunk)\n"
    report, _ = sandboxed(tmp_path, code + "import time; time.sleep(1)\n")
    assert report.outcome == "finished" and "Pss" in report.memory_method
    assert 150 <= report.peak_memory_mb <= 200, report


@pytest.mark.parametrize(("main_sleeps", "outcome"), [(0, "finished"), (60, "timeout")])
def test_setsid_double_fork_and_sigterm_do_not_outlive_the_run(tmp_path: Path, main_sleeps: int, outcome: str) -> None:
    token = f"podium-escape-{os.getpid()}-{main_sleeps}"
    report, _ = sandboxed(
        tmp_path,
        f"""
        import os, signal, time
        if os.fork() == 0:
            os.setsid()
            if os.fork() == 0:
                signal.signal(signal.SIGTERM, signal.SIG_IGN)
                os.execv("/bin/sleep", ["sleep", "100", "{token}"])
            os._exit(0)
        time.sleep({main_sleeps})
        """,
        time_limit_s=2,
    )
    assert report.outcome == outcome
    assert survivors(token) == []


def test_a_c_program_hopping_sessions_in_a_loop_and_killing_its_parents_leaves_nothing(tmp_path: Path) -> None:
    binary = compiled(
        tmp_path,
        """
        #include <signal.h>
        #include <unistd.h>
        int main(void) {
            for (;;) {
                setsid();
                kill(getppid(), SIGKILL);  /* its parent, up to the sandbox's init */
                pid_t child = fork();
                if (child > 0) _exit(0);  /* the parent leaves, the child hops on */
                if (child < 0) usleep(1000);
            }
        }
        """,
    )
    paths = layout(tmp_path / "contest")
    start = time.monotonic()
    report = sandboxed_command([str(binary)], {**paths, "program": binary.parent}, time_limit_s=5, memory_limit_mb=None)
    # How the first process ends is a race of the program's own: it exits after its first fork, unless
    # that child's kill(getppid()) reaches it first (then it ends by SIGKILL, "crashed", exit code 137).
    # Either way the run ends at once or at its limit, and nothing of the program is left.
    assert report.outcome in ("finished", "crashed", "timeout") and time.monotonic() - start < 10
    assert report.outcome != "crashed" or report.exit_code == 137
    assert survivors(str(binary)) == []


@pytest.mark.parametrize(
    "trick",
    [
        "os.remove('input.txt'); os.mkdir('input.txt')",
        "here = os.getcwd(); os.chdir('/'); shutil.rmtree(here, ignore_errors=True); os.rmdir(here)",
        "here = os.getcwd(); os.chdir('/'); os.rename(here, here + '-moved')",
    ],
)
def test_the_working_folder_cannot_be_replaced_and_the_result_is_written(tmp_path: Path, trick: str) -> None:
    program = tmp_path / "program"
    program.mkdir()
    (program / "hostile.py").write_text(f"import os, shutil\nopen('team.csv', 'w').write('a, 1\\n')\n{trick}\n")
    images = tmp_path / "images"
    images.mkdir()
    (images / "a.jpg").write_bytes(b"")
    (tmp_path / "truth.csv").write_text("image,identity\na.jpg,ali\n")
    args = [
        "run",
        "face-clustering",
        "--command",
        f"{sys.executable} {program / 'hostile.py'}",
        "--images",
        str(images),
        "--truth",
        str(tmp_path / "truth.csv"),
        "--time-limit",
        "20",
        "--json",
        "-",
        "--visible",
        str(program),
    ]
    args += [arg for prefix in INTERPRETER for arg in ("--visible", str(prefix))]
    result = CliRunner().invoke(cli, args)
    assert result.exit_code in (0, 1), result.output  # never 70
    doc = json.loads(result.stdout)
    assert doc["run"]["sandbox"] == "bwrap" and not any(e["code"] == "workdir_replaced" for e in doc["errors"])


def test_the_truth_inside_a_folder_the_program_sees_is_refused(tmp_path: Path) -> None:
    paths = layout(tmp_path)
    for shown in (["--images", str(tmp_path)], ["--images", str(paths["images"]), "--visible", str(tmp_path)]):
        args = [
            "run",
            "face-clustering",
            "--command",
            "true",
            "--truth",
            str(paths["truth"]),
            "--time-limit",
            "5",
            *shown,
        ]
        result = CliRunner().invoke(cli, args)
        assert result.exit_code == 2 and "would show the program the truth" in result.output


def test_sandbox_none_must_be_asked_for_and_warns(tmp_path: Path) -> None:
    paths = layout(tmp_path)
    (paths["program"] / "p.py").write_text("open('team.csv', 'w').write('a, 1\\n')\n")
    args = [
        "run",
        "face-clustering",
        "--command",
        f"{sys.executable} {paths['program'] / 'p.py'}",
        "--images",
        str(paths["images"]),
        "--truth",
        str(paths["truth"]),
        "--time-limit",
        "20",
        "--sandbox",
        "none",
    ]
    result = CliRunner().invoke(cli, args)
    assert "can read the truth" in result.output and "sandbox none" in result.output


def test_gpu_devices_are_bound_as_asked(tmp_path: Path) -> None:
    """No GPU here: the device list and the bwrap arguments are checked on a fake /dev."""
    for name in ("nvidia0", "nvidia1", "nvidiactl", "nvidia-uvm"):
        (tmp_path / name).touch()
    assert [p.name for p in gpu_devices("all", tmp_path)] == ["nvidia0", "nvidia1", "nvidiactl", "nvidia-uvm"]
    assert [p.name for p in gpu_devices("device=1", tmp_path)] == ["nvidia1", "nvidiactl", "nvidia-uvm"]
    from podium.core.errors import UsageError

    with pytest.raises(UsageError, match="nvidia7"):
        gpu_devices("device=7", tmp_path)
    with pytest.raises(UsageError, match="no NVIDIA device"):
        gpu_devices("all", tmp_path / "empty")
