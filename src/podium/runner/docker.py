"""Running a participant's Docker image: no network, memory and process limits, peak from its cgroup.

The images folder is mounted read-only at the same absolute path (so ``input.txt``
is valid inside), the working directory read-write at ``/work``, the program's
current directory. Peak memory is the container cgroup's ``memory.peak`` (cgroup
v2) or ``memory.max_usage_in_bytes`` (v1), read while the container runs.
"""

from __future__ import annotations

import subprocess
import time
from pathlib import Path

from podium.errors import UsageError
from podium.runner.cgroups import read_int
from podium.runner.process import PIDS_LIMIT, SAMPLE_HZ, RunReport, StderrTail

CGROUP_ROOT = Path("/sys/fs/cgroup")
WORKDIR_IN_CONTAINER = "/work"


def docker_command(
    image: str, workdir: Path, images: Path, memory_limit_mb: float | None, cidfile: Path, cpus: float | None = None, gpus: str | None = None
) -> list[str]:
    """The ``docker run`` command line (tested; run where an engine exists)."""
    command = ["docker", "run", "--rm", "--network", "none", "--pids-limit", str(PIDS_LIMIT), "--cidfile", str(cidfile)]
    command += ["--cap-drop", "ALL", "--security-opt", "no-new-privileges"]
    if memory_limit_mb is not None:
        limit = f"{int(memory_limit_mb)}m"
        command += ["--memory", limit, "--memory-swap", limit]  # equal: no swap beyond the limit
    if cpus is not None:
        command += ["--cpus", f"{cpus:g}"]
    if gpus is not None:
        command += ["--gpus", gpus]
    images = images.resolve()
    command += ["-v", f"{images}:{images}:ro", "-v", f"{workdir.resolve()}:{WORKDIR_IN_CONTAINER}:rw", "-w", WORKDIR_IN_CONTAINER, image]
    return command


def peak_files(container_id: str, root: Path = CGROUP_ROOT) -> list[Path]:
    """Where a container's peak memory may be, for the systemd and cgroupfs drivers, v2 then v1."""
    return [
        root / "system.slice" / f"docker-{container_id}.scope" / "memory.peak",
        root / "docker" / container_id / "memory.peak",
        root / "memory" / "docker" / container_id / "memory.max_usage_in_bytes",
        root / "memory" / "system.slice" / f"docker-{container_id}.scope" / "memory.max_usage_in_bytes",
    ]


def read_peak(container_id: str, root: Path = CGROUP_ROOT) -> int | None:
    return next((peak for path in peak_files(container_id, root) if (peak := read_int(path)) is not None), None)


def check_engine() -> None:
    try:
        info = subprocess.run(["docker", "info", "--format", "{{.ServerVersion}}"], capture_output=True, text=True, timeout=20)
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise UsageError(f"--image needs Docker, which is not available here ({exc})") from None
    if info.returncode != 0:
        raise UsageError(f"--image needs a running Docker engine: {info.stderr.strip().splitlines()[-1] if info.stderr.strip() else 'docker info failed'}")


def run_docker(
    image: str, workdir: Path, images: Path, time_limit_s: float | None, memory_limit_mb: float | None, cpus: float | None = None, gpus: str | None = None
) -> RunReport:
    check_engine()
    cidfile = workdir.parent / f"{workdir.name}.cid"
    cidfile.unlink(missing_ok=True)
    start = time.monotonic()
    process = subprocess.Popen(docker_command(image, workdir, images, memory_limit_mb, cidfile, cpus, gpus), stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    stderr = StderrTail(process.stderr)  # type: ignore[arg-type]
    peak, outcome, container = 0, "finished", ""
    while process.poll() is None:
        container = container or (cidfile.read_text().strip() if cidfile.exists() else "")
        if container:
            peak = max(peak, read_peak(container) or 0)
        if time_limit_s is not None and time.monotonic() - start >= time_limit_s:
            outcome = "timeout"
            subprocess.run(["docker", "kill", container], capture_output=True) if container else process.kill()
            break
        time.sleep(1 / SAMPLE_HZ)
    exit_code = process.wait()
    wall = time.monotonic() - start
    if outcome == "finished" and exit_code == 137 and memory_limit_mb is not None:
        outcome = "memory_limit"  # the kernel's OOM killer inside the container's limit
    elif outcome == "finished" and exit_code != 0:
        outcome = "crashed"
    return RunReport(
        wall_s=wall,
        peak_memory_mb=peak / 2**20,
        memory_method="the container's cgroup peak" if peak else "unavailable: no cgroup memory file of the container was readable",
        exit_code=exit_code if outcome in ("finished", "crashed") else None,
        outcome=outcome,
        stderr_tail=stderr.text(),
        network_isolated=True,
        sandbox="docker",
    )
