"""Running a participant's Docker image on the engine, and never leaving a container behind.

The container (``docker create``, then ``docker start --attach``):

- no network, no capability, no new privileges, the engine's default seccomp
  profile, 4,096 processes, ``--memory M --memory-swap M`` (no swap beyond
  the limit), ``--cpus N``;
- a read-only root file system; a private memory-backed ``/dev/shm`` of at
  most the memory limit (``SHM_DEFAULT_MB`` without one) and ``/tmp`` of at
  most the memory and the disk limit, counted in its memory;
- the images folder read-only at ``IMAGES_FOLDER`` (``/sandbox/images``, as in
  bubblewrap: what ``input.txt`` names; no server path), the working folder
  read-write at ``/work``, its current directory, writable by whatever user
  the image runs as. A bind's line in the container's ``/proc/self/mountinfo``
  names its source folder's path, so :func:`podium.scoring.run.run_program`
  gives both from the run's own temporary folder (the images as a hard-linked
  copy): the program reads no data folder, contest or team name there. Both
  are bind mounts (``--mount``, not ``--volume``, which makes a missing folder
  empty): an engine that does not see the run's folder (a mount namespace of
  its own, another machine) refuses to create the container, and the run
  stops with a usage error saying so (:func:`_not_created`), where the program
  saw empty folders, wrote where podium never looks and was blamed for it. No
  fallback copies the files into the container: its working folder would lose
  the file system that bounds it, and every run would copy the test set;
- the disk limit as in bubblewrap (:mod:`podium.runner.disk`): no file past it
  (``--ulimit fsize``), and the working folder, on a file system of its own
  that refuses writes past the limit (:mod:`podium.runner.volume`; podium
  runs Docker as root), read on the host while the container runs, may not
  hold more: the root file system being read-only, it is the only disk the
  program can fill;
- the contract's environment: ``HOME`` and ``TMPDIR`` ``/tmp``, ``LANG``
  ``C.UTF-8``; ``PATH`` the image's own if it sets one (its interpreters are
  there), else ``/usr/local/bin:/usr/bin:/bin``;
- the block devices out of sight: an empty read-only tmpfs over each folder of
  ``/sys`` that lists them (:func:`hidden_in_sys`: the loop devices of other
  runs, whose ``backing_file`` names the folder of their file, and the host's
  disks, their models and sizes), ``/proc/diskstats`` empty (``/dev/null``:
  other runs' reads and writes). ``/proc/partitions`` stays, the block
  devices' names and sizes: runc mounts nothing else in ``/proc`` (it refuses
  the mount), and ``/proc/mounts`` shows the container's own table;
- ``--log-driver none``: nothing the program prints reaches the engine's disk;
  its stderr comes through the attach stream and only its last 16 kB are kept;
- the image by ID (``--pull never``): a missing image is never pulled inside
  the time limit, and the ID is the run's ``image`` in the result.

Its life is podium's: named ``podium-<run>`` and labelled (``LABEL_OWNER``,
``LABEL_RUN``, and the contest and submission in the service), removed by
podium on every way out, and by a keeper process (``python -m
podium.runner.docker --keep NAME``, in a session of its own) when podium ends
in any other way, SIGKILL included: the keeper waits for the end of a pipe
whose write end only podium holds. :func:`reap_leftovers`, run when a worker
starts, removes the labelled containers of processes of this host that no
longer exist.

Time is the program's own, on podium's clock, sampled at ``SAMPLE_HZ`` in the
container's cgroup: from the first sample that shows the image's program in
place of the runtime's init to the first that shows the cgroup empty or gone
(the engine's start-up of the container, 0.4 s or more, is not the team's);
the time limit counts from the same moment. Where the cgroup cannot be read, or
the program ends before a sample sees it, the engine's ``State.StartedAt`` and
``FinishedAt`` stand in. Peak memory is the container cgroup's ``memory.peak`` (v2)
or ``memory.max_usage_in_bytes`` (v1), sampled while it runs. The image's own
files are read once before the program starts, so their page cache is
charged to no run, cold or warm alike (:func:`read_image_files`), as the test
images are.
"""

from __future__ import annotations

import contextvars
import os
import re
import signal
import socket
import subprocess
import sys
import time
import uuid
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

from podium.core.errors import UsageError
from podium.runner.cgroups import read_int
from podium.runner.disk import DiskWatch
from podium.runner.docker_images import (
    ENGINE_TIMEOUT_S,
    Image,
    check_engine,
    docker,
    find_image,
    last_line,
    read_image_files,
)
from podium.runner.process import PIDS_LIMIT, SAMPLE_HZ, Limits, RunOutcome, RunReport, StderrTail
from podium.runner.sandbox import ENVIRONMENT, IMAGES_FOLDER

CGROUP_ROOT = Path("/sys/fs/cgroup")
WORKDIR_IN_CONTAINER = "/work"
SHM_DEFAULT_MB = 64
KILL_AGAIN_S = 0.25
LABEL_OWNER = "podium.owner"
LABEL_RUN = "podium.run"
REMOVED = b"removed"
SYS_BLOCK = (  # the folders of /sys that list every block device, the loop devices of runs included
    "/sys/block",
    "/sys/class/block",
    "/sys/dev/block",
    "/sys/devices/virtual/block",
    "/sys/devices/virtual/bdi",
    "/sys/fs/ext4",
)
PROC_EMPTY = ("/proc/diskstats",)  # shown empty; runc mounts nothing else in /proc (not /proc/partitions)
# How the engine says the image names no program it can run (the team's failure, not the engine's).
IMAGE_CANNOT_START = (
    "executable file not found",
    "no such file or directory",
    "unable to find user",
    "permission denied",
)

_labels: contextvars.ContextVar[Mapping[str, str] | None] = contextvars.ContextVar(
    "podium_container_labels", default=None
)


@contextmanager
def labelled(**labels: str) -> Iterator[None]:
    """Label the containers started inside the block ``podium.KEY=VALUE`` (the service: contest, submission)."""
    token = _labels.set({f"podium.{key}": value for key, value in labels.items()})
    try:
        yield
    finally:
        _labels.reset(token)


def owner() -> str:
    """This process, as the containers it starts are labelled: host, PID and the PID's start time (PIDs are reused)."""
    return f"{socket.gethostname()}/{os.getpid()}/{_start_time(os.getpid())}"


def _start_time(pid: int) -> str:
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rsplit(")", 1)[1].split()[19]
    except (OSError, IndexError):
        return "?"


def _alive(label: str) -> bool:
    host, _, rest = label.partition("/")
    pid, _, started = rest.partition("/")
    if host != socket.gethostname():
        return True  # another machine's: not ours to judge
    return pid.isdigit() and _start_time(int(pid)) == started


def reap_leftovers() -> list[str]:
    """Remove the labelled containers whose podium process on this host is gone (a worker killed with its keeper); their names."""
    listed = docker(
        "ps", "--all", "--filter", f"label={LABEL_OWNER}", "--format", '{{.Names}}\t{{.Label "' + LABEL_OWNER + '"}}'
    )
    if listed.returncode != 0:
        return []
    dead = [
        name for name, _, label in (line.partition("\t") for line in listed.stdout.splitlines()) if not _alive(label)
    ]
    for name in dead:
        docker("rm", "--force", name)
    return dead


def hidden_in_sys() -> list[str]:
    """The folders of ``/sys`` a container is shown empty: :data:`SYS_BLOCK`, and the folder of ``/sys/devices``
    holding each of the host's disks (``.../virtio1/block``, ``.../nvme/nvme0``: a partition is in its disk's)."""
    hidden = set(SYS_BLOCK)
    try:
        devices = list(Path("/sys/class/block").iterdir())
    except OSError:
        devices = []
    for device in devices:
        real = device.resolve()
        if not (real / "partition").exists():
            hidden.add(str(real.parent))
    shown = sorted(folder for folder in hidden if os.path.isdir(folder))
    return [folder for folder in shown if not any(folder.startswith(f"{other}/") for other in shown)]


def _mount_field(text: str) -> str:
    """A ``--mount`` field, quoted where it holds a comma or a quote (the option is read as CSV)."""
    return f'"{text.replace(chr(34), chr(34) * 2)}"' if "," in text or '"' in text else text


def docker_command(
    image: Image,
    name: str,
    workdir: Path,
    images: Path,
    memory_limit_mb: float | None,
    cpus: float | None = None,
    gpus: str | None = None,
    disk_limit_mb: float | None = None,
) -> list[str]:
    """The ``docker create`` command line."""
    labels = {LABEL_RUN: name, LABEL_OWNER: owner(), **(_labels.get() or {})}
    command = [
        "docker",
        "create",
        "--name",
        name,
        *(arg for key, value in labels.items() for arg in ("--label", f"{key}={value}")),
    ]
    command += ["--pull", "never", "--network", "none", "--log-driver", "none", "--pids-limit", str(PIDS_LIMIT)]
    command += ["--cap-drop", "ALL", "--security-opt", "no-new-privileges", "--read-only"]
    size = f"{int(memory_limit_mb)}m" if memory_limit_mb is not None else f"{SHM_DEFAULT_MB}m"
    tmp = f"{int(min((mb for mb in (memory_limit_mb, disk_limit_mb) if mb is not None), default=SHM_DEFAULT_MB))}m"  # memory, bounded by both
    command += ["--tmpfs", f"/tmp:rw,nosuid,nodev,size={tmp},mode=1777", "--shm-size", size]
    for folder in hidden_in_sys():
        command += ["--mount", f"type=tmpfs,{_mount_field(f'destination={folder}')},readonly,tmpfs-size=4k"]
    for path in PROC_EMPTY:
        command += ["--mount", f"type=bind,source=/dev/null,destination={path},readonly"]
    if disk_limit_mb is not None:
        command += ["--ulimit", f"fsize={int(disk_limit_mb * 2**20)}"]  # no file past the limit (EFBIG, SIGXFSZ)
    if memory_limit_mb is not None:
        command += ["--memory", size, "--memory-swap", size]  # equal: no swap beyond the limit
    if cpus is not None:
        command += ["--cpus", f"{cpus:g}"]
    if gpus is not None:
        command += ["--gpus", gpus]
    for key, value in ENVIRONMENT.items():
        if key != "PATH" or not image.sets_path:
            command += ["--env", f"{key}={value}"]
    for source, target, how in ((images, IMAGES_FOLDER, ",readonly"), (workdir, WORKDIR_IN_CONTAINER, "")):
        command += ["--mount", f"type=bind,{_mount_field(f'source={source.resolve()}')},destination={target}{how}"]
    return [*command, "--workdir", WORKDIR_IN_CONTAINER, image.id]


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


class Container:
    """A created container, removed by podium when the block ends and by the keeper if podium dies first."""

    def __init__(self, name: str) -> None:
        self.name = name
        read, self._keeper_pipe = os.pipe()
        try:
            self._keeper = subprocess.Popen(
                [sys.executable, "-m", "podium.runner.docker", "--keep", name],
                stdin=read,
                stdout=subprocess.DEVNULL,
                stderr=subprocess.DEVNULL,
                start_new_session=True,
            )
        finally:
            os.close(read)

    def remove(self) -> None:
        """Remove the container, then release the keeper; if the engine did not confirm, the keeper keeps trying."""
        removed = False
        try:
            removed = docker("rm", "--force", self.name).returncode == 0
            if removed:
                os.write(self._keeper_pipe, REMOVED)
        finally:
            os.close(self._keeper_pipe)
            if removed:
                self._keeper.wait()


def keep(name: str) -> None:
    """The keeper: when its pipe ends without podium's word that the container is gone, remove it."""
    for number in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP):
        signal.signal(number, signal.SIG_IGN)  # podium's terminal or service manager ends podium, not this
    said = b""
    while chunk := os.read(0, 64):
        said += chunk
    if said == REMOVED:
        return
    deadline = time.monotonic() + ENGINE_TIMEOUT_S
    while time.monotonic() < deadline:  # a `docker create` podium left running may still be making it
        subprocess.run(["docker", "rm", "--force", name], capture_output=True, timeout=ENGINE_TIMEOUT_S)
        left = subprocess.run(
            ["docker", "ps", "--all", "--quiet", "--filter", f"label={LABEL_RUN}={name}"],
            capture_output=True,
            timeout=ENGINE_TIMEOUT_S,
        )
        if left.returncode == 0 and not left.stdout.strip():
            return
        time.sleep(0.5)


def run_docker(
    image: str,
    workdir: Path,
    images: Path,
    limits: Limits,
    gpus: str | None = None,
) -> tuple[RunReport, str]:
    """Run ``image`` (a reference on the engine, or a ``docker save`` archive) under ``limits``: how it went, and the image's ID.

    The disk limit bounds what the working folder may hold, and the largest file
    the program may write (:mod:`podium.runner.disk`). The container is gone on
    return, whatever happened.
    """
    check_engine()
    found = find_image(image)
    workdir.chmod(0o777)  # any image user writes its output; the folder lies in podium's private temporary folder
    read_image_files(found)
    container = Container(f"podium-{uuid.uuid4().hex[:16]}")
    try:
        created = docker(
            *docker_command(
                found, container.name, workdir, images, limits.memory_mb, limits.cpus, gpus, limits.disk_mb
            )[1:]
        )
        if created.returncode != 0:
            raise UsageError(_not_created(created.stderr))
        report = _attend(container.name, created.stdout.strip(), limits.time_s, limits.disk_watch(workdir))
    finally:
        container.remove()
    return report, found.id


def _not_created(stderr: str) -> str:
    """Why the engine made no container, in words: where it does not see the run's folder, that and what to do."""
    unseen = re.search(r"bind source path does not exist: (.+)", stderr)
    if unseen is None:
        return f"the Docker engine could not create the container: {last_line(stderr)}"
    return (
        f"the Docker engine does not see podium's run folder {unseen.group(1).strip()}: it runs in a mount namespace "
        "of its own (a service with PrivateTmp=yes, a snap, rootless Docker) or on another machine (DOCKER_HOST), "
        "and podium shows the program the images and its working folder by binding them from there; run the engine "
        "on this machine, in its mount namespace (for a systemd service: PrivateTmp=no)"
    )


def _attend(name: str, container_id: str, time_limit_s: float | None, disk: DiskWatch | None) -> RunReport:
    """Start the container and watch it until it ends, its time is up or its working folder holds too much; how it went."""
    process = subprocess.Popen(
        ["docker", "start", "--attach", name],
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )
    stderr = StderrTail(process.stderr)  # type: ignore[arg-type]
    clock = time.monotonic()
    started: tuple[float, float] | None = (
        None  # when the program replaced the runtime's init: monotonic, and the wall clock
    )
    ended: float | None = None  # when its cgroup was seen empty or gone
    stopped: RunOutcome | None = None  # why podium killed it (timeout, disk_limit)
    peak, next_kill = 0, 0.0
    while process.poll() is None:
        members = container_processes(container_id)
        if started is None and any(command not in RUNTIME_INIT for command in members or []):
            started = (time.monotonic(), time.time())
        elif started is not None and ended is None and not members:
            ended = time.monotonic()
        peak = max(peak, read_peak(container_id) or 0)
        elapsed = time.monotonic() - (started[0] if started is not None else clock)
        if not stopped and time_limit_s is not None and elapsed >= time_limit_s:
            stopped = "timeout"
        elif not stopped and disk is not None and disk.over():
            stopped = "disk_limit"
        if stopped and time.monotonic() >= next_kill:
            docker("kill", name)  # again until it ends: a container still starting is not yet there to kill
            next_kill = time.monotonic() + KILL_AGAIN_S
        time.sleep(1 / SAMPLE_HZ)
    process.wait()
    state = _state(name)
    if state.started is None:
        if not any(words in state.error.lower() for words in IMAGE_CANNOT_START):
            raise UsageError(f"the Docker engine could not start the container: {state.error or 'no reason given'}")
        state = _State(None, None, 127, False, state.error)  # the image names no program it can run: the team's
    if not stopped and disk is not None and (disk.ended_over() or state.exit_code == 128 + signal.SIGXFSZ):
        stopped = (
            "disk_limit"  # a file stopped at the limit (SIGXFSZ), refused by the volume, or written since the last scan
        )
    outcome: RunOutcome = stopped or (
        "memory_limit" if state.oom_killed else "crashed" if state.exit_code != 0 else "finished"
    )
    tail = stderr.text()
    return RunReport(
        wall_s=round(ended - started[0], 6)
        if started is not None and ended is not None
        else state.seconds(started[1] if started is not None else None),
        peak_memory_mb=peak / 2**20,
        memory_method="the container's cgroup peak"
        if peak
        else "unavailable: no cgroup memory file of the container was readable",
        exit_code=state.exit_code if outcome in ("finished", "crashed") else None,
        outcome=outcome,
        stderr_tail=tail if state.started is not None else "\n".join(filter(None, [tail, state.error])),
        network_isolated=True,
        sandbox="docker",
        peak_disk_mb=None if disk is None else disk.peak / 2**20,
        disk_method=None if disk is None else disk.method,
    )


RUNTIME_INIT = ("runc:[0:PARENT]", "runc:[1:CHILD]", "runc:[2:INIT]")


def container_processes(container_id: str, root: Path = CGROUP_ROOT) -> list[str] | None:
    """The command names of the processes in the container's cgroup; ``None`` when no cgroup of it is readable."""
    for path in peak_files(container_id, root):
        try:
            pids = (path.parent / "cgroup.procs").read_text().split()
        except OSError:
            continue
        names = []
        for pid in pids:
            try:
                with open(f"/proc/{pid}/comm") as f:
                    names.append(f.read().strip())
            except OSError:
                continue  # ended meanwhile
        return names
    return None


@dataclass(frozen=True)
class _State:
    """How the engine saw the container: when it started and finished (``None``: never), its exit code, an OOM kill, its error."""

    started: datetime | None
    finished: datetime | None
    exit_code: int
    oom_killed: bool
    error: str

    def seconds(self, program_start: float | None) -> float:
        """The engine's view of the program's time: from ``program_start`` (podium's wall clock) or else its own start, to its end."""
        if self.started is None or self.finished is None:
            return 0.0
        start = program_start if program_start is not None else self.started.timestamp()
        return max(0.0, round(self.finished.timestamp() - start, 6))


def _state(name: str) -> _State:
    shown = docker(
        "inspect",
        "--format",
        "{{.State.StartedAt}}\t{{.State.FinishedAt}}\t{{.State.ExitCode}}\t{{.State.OOMKilled}}\t{{.State.Error}}",
        name,
    )
    if shown.returncode != 0:
        raise UsageError(f"the Docker engine lost the container {name}: {last_line(shown.stderr)}")
    started_at, finished_at, code, oom, error = shown.stdout.rstrip("\n").split("\t", 4)
    start, end = _instant(started_at), _instant(finished_at)
    return _State(start if start is not None and start.year > 1 else None, end, int(code), oom == "true", error.strip())


def _instant(text: str) -> datetime | None:
    """An engine timestamp (RFC 3339 with nanoseconds), to the microsecond."""
    found = re.fullmatch(r"(\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d)(?:\.(\d+))?Z", text.strip())
    if found is None:
        return None
    moment = datetime.strptime(found.group(1), "%Y-%m-%dT%H:%M:%S").replace(tzinfo=UTC)
    return moment.replace(microsecond=int((found.group(2) or "0")[:6].ljust(6, "0")))


if __name__ == "__main__" and sys.argv[1:2] == ["--keep"]:
    keep(sys.argv[2])
