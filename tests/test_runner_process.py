"""run_limited: limits, kills and the honesty of its measurements, with small participant programs."""

from __future__ import annotations

import os
import sys
import textwrap
import time
from pathlib import Path

import pytest

from conftest import cgroup_problem, require
from podium.runner import cgroups
from podium.runner.process import Limits, run_limited

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="the runner reads /proc")


def program(tmp_path: Path, code: str) -> tuple[list[str], Path]:
    work = tmp_path / "work"
    work.mkdir(exist_ok=True)
    script = tmp_path / "participant.py"
    script.write_text(textwrap.dedent(code))
    return [sys.executable, str(script)], work


def alive(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return False


def test_finished_program(tmp_path: Path) -> None:
    command, work = program(tmp_path, "import time; time.sleep(0.3); open('out.txt', 'w').write('hi')")
    started = time.monotonic()
    report = run_limited(command, work, Limits(time_s=10))
    took = time.monotonic() - started
    assert report.outcome == "finished" and report.exit_code == 0
    assert 0.3 <= report.wall_s <= took  # its sleep, and no more than the run took (Python may start late)
    assert (work / "out.txt").read_text() == "hi"  # its current directory is the working directory


def test_crash_reports_exit_code_and_stderr_tail(tmp_path: Path) -> None:
    command, work = program(tmp_path, "import sys; print('model file missing', file=sys.stderr); sys.exit(3)")
    report = run_limited(command, work, Limits(time_s=10))
    assert (report.outcome, report.exit_code) == ("crashed", 3)
    assert "model file missing" in report.stderr_tail


def test_stderr_tail_is_the_last_16_kB_from_a_whole_line(tmp_path: Path) -> None:
    """Every line of a short stderr is kept (0.8.5 kept 20 lines); a flood keeps its last 16 kB, starting at a line."""
    command, work = program(tmp_path, "import sys; [print(f'line {i:03d}', file=sys.stderr) for i in range(100)]")
    report = run_limited(command, work, Limits(time_s=10))
    assert report.stderr_tail.splitlines() == [f"line {i:03d}" for i in range(100)]
    command, work = program(tmp_path, "import sys; [print(f'line {i:07d}', file=sys.stderr) for i in range(200_000)]")
    tail = run_limited(command, work, Limits(time_s=30)).stderr_tail
    assert 16_384 - 14 <= len(tail) < 16_384 and tail.endswith("line 0199999") and tail.startswith("line ")


def test_timeout_kills_the_program(tmp_path: Path) -> None:
    command, work = program(tmp_path, "import time; time.sleep(60)")
    start = time.monotonic()
    report = run_limited(command, work, Limits(time_s=0.5))
    assert report.outcome == "timeout" and report.exit_code is None
    assert time.monotonic() - start < 3


def test_grandchild_in_its_own_session_ignoring_sigterm_is_killed(tmp_path: Path) -> None:
    command, work = program(
        tmp_path,
        """
        import os, signal, time
        if os.fork() == 0:
            os.setsid()
            if os.fork() == 0:
                signal.signal(signal.SIGTERM, signal.SIG_IGN)
                open('grandchild.pid', 'w').write(str(os.getpid()))
                time.sleep(120)
            os._exit(0)
        time.sleep(0.2)
        """,
    )
    report = run_limited(command, work, Limits(time_s=1.0))
    assert report.outcome == "timeout"  # the tree did not end: the grandchild still ran
    pid = int((work / "grandchild.pid").read_text())
    deadline = time.monotonic() + 10  # killed: gone once the kernel schedules its exit, long before its 120 s sleep
    while alive(pid) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not alive(pid)


def test_wall_time_waits_for_the_whole_tree(tmp_path: Path) -> None:
    command, work = program(
        tmp_path,
        """
        import os, time
        if os.fork() == 0:
            time.sleep(0.6)
            os._exit(0)
        """,
    )
    report = run_limited(command, work, Limits(time_s=10))
    assert report.outcome == "finished" and report.wall_s >= 0.6


@pytest.fixture(params=["cgroup", "pss"])
def method(request, monkeypatch) -> str:
    """Each memory test runs twice: measured by the run's cgroup, and by sampling Pss (no cgroup)."""
    if request.param == "cgroup":
        require("cgroups", cgroup_problem())
    else:
        monkeypatch.setattr(cgroups, "open_group", lambda *args, **kwargs: None)
    return request.param


def test_one_process_of_300_mb_reports_300_mb_within_5_percent(tmp_path: Path, method: str) -> None:
    command, work = program(
        tmp_path,
        """
        import time
        block = bytearray(300 * 2**20)
        block[::4096] = b"x" * len(block[::4096])
        time.sleep(0.5)
        """,
    )
    report = run_limited(command, work, Limits(time_s=30))
    assert 300 <= report.peak_memory_mb <= 315, report.peak_memory_mb  # the interpreter adds a few MB
    assert ("Pss" if method == "pss" else "cgroup") in report.memory_method


@pytest.mark.parametrize(
    ("shared_mb", "own_mb", "low", "high"),
    # Within 10%: a shared page counts once, not once per child (that would be 1,200 in the second case).
    # Summed Pss is usually within 5%; one full suite in about ten here saw 655 MB for the second.
    [(0, 300, 900, 990), (300, 100, 600, 660)],
)
def test_forked_children_count_every_page_once(
    tmp_path: Path, method: str, shared_mb: int, own_mb: int, low: int, high: int
) -> None:
    """Three forked children, each with ``own_mb`` of its own and ``shared_mb`` inherited from their parent."""
    command, work = program(
        tmp_path,
        f"""
        import os, time
        shared = bytearray({shared_mb} * 2**20)
        shared[::4096] = b"x" * len(shared[::4096])  # touch every page
        pids = []
        for _ in range(3):
            pid = os.fork()
            if pid == 0:
                own = bytearray({own_mb} * 2**20)
                own[::4096] = b"y" * len(own[::4096])
                time.sleep(1.5)
                os._exit(0)
            pids.append(pid)
        for pid in pids:
            os.waitpid(pid, 0)
        """,
    )
    report = run_limited(command, work, Limits(time_s=30))
    assert report.outcome == "finished"
    assert low <= report.peak_memory_mb <= high, report.peak_memory_mb


def test_memory_limit_kills(tmp_path: Path, method: str) -> None:
    command, work = program(
        tmp_path,
        """
        import time
        block = bytearray(400 * 2**20)
        block[::4096] = b"x" * len(block[::4096])
        time.sleep(30)
        """,
    )
    report = run_limited(command, work, Limits(time_s=30, memory_mb=150))
    assert report.outcome == "memory_limit" and report.wall_s < 10 and report.exit_code is None
    if method == "cgroup":  # the kernel holds the group at the limit
        assert report.peak_memory_mb <= 150


def test_network_isolation_is_reported(tmp_path: Path) -> None:
    command, work = program(tmp_path, "import socket; print(socket.if_nameindex())")
    report = run_limited(command, work, Limits(time_s=10))
    assert isinstance(report.network_isolated, bool)
    if os.geteuid() == 0:  # root may create a network namespace here
        assert report.network_isolated


def test_cgroup_v2_files_are_written_and_read_as_the_kernel_names_them(tmp_path: Path) -> None:
    """The v2 interface on a plain folder (no v2 controller is delegated on these machines)."""
    group = cgroups.open_group("run", cgroups.Limits(memory_bytes=2**30, pids=64, cpus=1.5), delegated=tmp_path)
    assert group is not None and group.version == 2
    folder = tmp_path / "run"
    assert (folder / "memory.max").read_text() == str(2**30) and (folder / "memory.swap.max").read_text() == "0"
    assert (folder / "pids.max").read_text() == "64" and (folder / "cpu.max").read_text() == "150000 100000"
    (folder / "memory.peak").write_text("52428800\n")
    (folder / "memory.events").write_text("low 0\nhigh 0\nmax 3\noom 1\noom_kill 2\n")
    assert group.peak_bytes() == 52428800 and group.memory_kills() == 2
    assert group.procs_files == [folder / "cgroup.procs"] and group.members() == []
    assert group.kill() and (folder / "cgroup.kill").read_text() == "1"


def test_a_delegated_folder_podium_cannot_use_is_a_usage_error(tmp_path: Path) -> None:
    from podium.core.errors import UsageError

    command, work = program(tmp_path, "pass")
    with pytest.raises(UsageError, match="cannot make a group"):
        run_limited(command, work, Limits(time_s=10), cgroup=tmp_path / "missing")


def test_the_callers_other_children_are_never_touched(tmp_path: Path) -> None:
    import ctypes
    import subprocess

    bystander = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(30)"])
    finished = subprocess.Popen([sys.executable, "-c", "pass"])
    finished_pid = finished.pid
    time.sleep(0.3)  # it has exited: a zombie only its parent may reap
    try:
        command, work = program(tmp_path, "import time; time.sleep(60)")
        report = run_limited(command, work, Limits(time_s=0.5))
        assert report.outcome == "timeout"
        assert alive(bystander.pid) and bystander.poll() is None  # not killed
        assert finished.wait(timeout=5) == 0 and finished.pid == finished_pid  # not reaped by the runner
        value = ctypes.c_int(-1)
        libc = ctypes.CDLL(None, use_errno=True)
        assert libc.prctl(37, ctypes.byref(value), 0, 0, 0) == 0 and value.value == 0  # PR_GET_CHILD_SUBREAPER: not one
    finally:
        bystander.kill()
        bystander.wait()


def test_gigabytes_on_stderr_cost_no_disk_and_keep_the_tail(tmp_path: Path) -> None:
    command, work = program(
        tmp_path,
        """
        import os, sys
        chunk = b"x" * (1 << 20)
        for _ in range(2048):  # 2 GiB
            os.write(2, chunk)
        sys.stderr.write("\\nthe last words\\n")
        """,
    )
    report = run_limited(command, work, Limits(time_s=60))
    assert report.outcome == "finished" and report.stderr_tail.endswith("the last words")
    assert len(report.stderr_tail) <= 16_384
    assert sorted(p.name for p in tmp_path.iterdir()) == ["participant.py", "work"]  # nothing written beside it
