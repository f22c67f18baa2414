"""The bubblewrap sandbox: what a participant's program sees and may do.

The program runs under ``bwrap`` (https://github.com/containers/bubblewrap):

- namespaces: new user, PID, network (only a loopback of its own), IPC, UTS
  and cgroup namespaces; it cannot make further user namespaces
  (``--disable-userns``); ``--die-with-parent``; a new session (no terminal);
- identity: uid and gid ``SANDBOX_ID`` (65534, "nobody") inside, with no
  capability; when podium runs as root the program also runs as that
  unprivileged uid on the host (never as root without capabilities, which
  could still write root-owned kernel files such as ``/proc/sys``);
- visible, read-only: the system (``SYSTEM_FOLDERS``, a few ``SYSTEM_FILES``),
  the images folder at ``IMAGES_FOLDER``, the program's code folder (if one is
  given) at ``CODE_FOLDER``, and each ``--visible`` folder (an interpreter,
  model files) at its own path;
- visible, read-write: the working folder at ``WORK_FOLDER`` (the program's
  current directory), a private empty ``/tmp`` and ``/dev/shm``
  (memory-backed, at most the memory limit each);
- no block device: no ``/sys`` (never bound), ``/proc/partitions`` and
  ``/proc/diskstats`` (``PROC_EMPTY``: the host's disks and the loop devices of
  other runs, their sizes, reads and writes) shown empty;
- invisible: everything else (the truth, podium, other teams, home folders),
  and nothing of the server either: bubblewrap, which stays in the sandbox's
  PID namespace as its process 1, is started with the program's small
  ``ENVIRONMENT`` only and reads its arguments from a memory file
  (``--args FD``), so ``/proc/1/environ`` and ``/proc/1/cmdline`` show no
  variable, path or submission of the server's. The working folder, images
  and code are at neutral paths; the mount table (``/proc/self/mountinfo``)
  still names each bind's source folder as it lies on its disk, which is
  why the images and the code are linked into the run's own temporary folder
  first (:func:`podium.scoring.run.run_program`) and the working folder is made
  there (as root, on a file system of the run's own, :mod:`podium.runner.volume`:
  its line shows ``/dev/loopN`` and the folder ``/work`` in it), and why, when podium runs as root, the keeper also shows the images
  through a read-only overlay of their staging path
  (:func:`podium.runner.confine.bind_privately`).

When podium runs as root, the keeper first binds the folders the program may
see at staging paths any user can reach (:func:`podium.runner.confine.bind_privately`),
because the unprivileged sandbox user may not pass through their parents.
"""

from __future__ import annotations

import functools
import os
import shutil
import stat
import subprocess
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

from podium.core.errors import UsageError
from podium.runner import confine
from podium.runner.folders import NEUTRAL_PARENTS, STAGE_PREFIX
from podium.runner.workdir import temporary_folder

SANDBOX_ID = 65534
SYSTEM_FOLDERS = ("/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32")
SYSTEM_FILES = ("/etc/alternatives", "/etc/ld.so.cache", "/etc/ld.so.conf", "/etc/ld.so.conf.d", "/etc/localtime")
ENVIRONMENT = {"PATH": "/usr/local/bin:/usr/bin:/bin", "HOME": "/tmp", "TMPDIR": "/tmp", "LANG": "C.UTF-8"}
PROC_EMPTY = ("/proc/partitions", "/proc/diskstats")  # every block device's name, size and activity
SANDBOX_FOLDER = "/sandbox"  # podium's own mount points, under a name no system uses
WORK_FOLDER = f"{SANDBOX_FOLDER}/work"
IMAGES_FOLDER = f"{SANDBOX_FOLDER}/images"
CODE_FOLDER = f"{SANDBOX_FOLDER}/code"
NVIDIA_CONTROL = ("nvidiactl", "nvidia-uvm", "nvidia-uvm-tools", "nvidia-modeset", "nvidia-caps")
NO_SANDBOX_WARNING = (
    "--sandbox none: the program runs with podium's own rights; it can read the truth, other teams' files "
    "and anything else podium can, and reach the network if it is root"
)


@dataclass(frozen=True)
class Confinement:
    """How the keeper starts the program: what it executes, what it binds first, whom it runs as."""

    program: list[str]
    bind: list[tuple[str, str]]
    user: tuple[int, int] | None
    sandbox: str
    pass_fds: tuple[int, ...] = ()
    status: int | None = None  # read end of bwrap's --json-status-fd
    environment: dict[str, str] | None = None  # what the keeper starts the program with; None: podium's own
    view: list[str] = field(default_factory=list)  # staged folders the keeper covers with an overlay (the images)

    def started(self) -> bool:
        """Whether the sandbox got as far as starting the program (read once the run is over)."""
        if self.status is None:
            return True
        os.set_blocking(self.status, False)
        try:
            return b"child-pid" in os.read(self.status, 1 << 16)
        except BlockingIOError:
            return False


_NONE_HINT = (
    "Install bubblewrap, or pass --sandbox none to run the program unconfined (it can then read everything podium can)."
)


def choose(sandbox: str, image: bool) -> str:
    """The sandbox a run uses: ``bwrap`` for a command, ``docker`` for an image; ``none`` only when asked."""
    if image:
        if sandbox not in ("auto", "docker"):
            raise UsageError(f"--image runs in Docker; --sandbox {sandbox} cannot run an image")
        return "docker"
    if sandbox == "docker":
        raise UsageError("--sandbox docker runs images (--image); a --command runs in bubblewrap (--sandbox bwrap)")
    if sandbox == "none":
        return "none"
    problem = bwrap_problem()
    if problem is not None:
        raise UsageError(
            f"no sandbox is available for --command: {problem}. {'' if sandbox == 'bwrap' else _NONE_HINT}".strip()
        )
    return "bwrap"


@functools.cache
def bwrap_problem() -> str | None:
    """Why bubblewrap cannot run a sandbox here, or ``None`` when a trial sandbox ran."""
    if shutil.which("bwrap") is None:
        return "bubblewrap (bwrap) is not installed"
    trial = ["bwrap", *_namespaces(), *_system(), "true"]
    try:
        user = sandbox_user()
        drop = None if user is None else functools.partial(confine.drop_to, *user)
        done = subprocess.run(trial, capture_output=True, text=True, timeout=20, preexec_fn=drop)
    except (OSError, subprocess.TimeoutExpired) as exc:
        return f"bwrap could not be started ({exc})"
    if done.returncode != 0:
        return f"bwrap cannot make a sandbox here ({done.stderr.strip() or f'exit code {done.returncode}'})"
    return None


def sandbox_user() -> tuple[int, int] | None:
    """The host user the sandbox runs as: podium's own, unless podium is root."""
    return (SANDBOX_ID, SANDBOX_ID) if os.geteuid() == 0 else None


def _namespaces() -> list[str]:
    return [
        "--unshare-user",
        "--unshare-pid",
        "--unshare-net",
        "--unshare-ipc",
        "--unshare-uts",
        "--unshare-cgroup-try",
        "--disable-userns",
        "--cap-drop",
        "ALL",
        "--uid",
        str(SANDBOX_ID),
        "--gid",
        str(SANDBOX_ID),
        "--die-with-parent",
        "--new-session",
        "--hostname",
        "sandbox",
    ]


def _system() -> list[str]:
    args = []
    for folder in SYSTEM_FOLDERS:
        if os.path.islink(folder):
            args += ["--symlink", os.readlink(folder), folder]
        elif os.path.isdir(folder):
            args += ["--ro-bind", folder, folder]
    for path in SYSTEM_FILES:
        args += ["--ro-bind-try", path, path]
    return [*args, "--proc", "/proc", "--dev", "/dev"]


def gpu_devices(spec: str, dev: Path = Path("/dev")) -> list[Path]:
    """The NVIDIA device files for ``--gpus`` (``all``, or ``device=0,2`` / ``0,2`` as Docker takes them)."""
    wanted = spec.removeprefix("device=").strip('"')
    if wanted == "all":
        cards = sorted(p for p in dev.glob("nvidia[0-9]*") if p.name[6:].isdigit())
    else:
        cards = [dev / f"nvidia{index.strip()}" for index in wanted.split(",")]
        if not all(index.strip().isdigit() for index in wanted.split(",")):
            raise UsageError(f"--gpus {spec}: give 'all' or device indices such as 'device=0,1'")
    missing = [card for card in cards if not card.exists()]
    if not cards or missing:
        raise UsageError(
            f"--gpus {spec}: no NVIDIA device file {', '.join(map(str, missing)) or f'{dev}/nvidiaN'} on this machine"
        )
    return cards + [dev / name for name in NVIDIA_CONTROL if (dev / name).exists()]


@contextmanager
def bubblewrap(
    program: list[str],
    work: Path,
    images: Path,
    visible: tuple[Path, ...] = (),
    tmpfs_bytes: int | None = None,
    gpus: str | None = None,
    code: Path | None = None,
) -> Iterator[Confinement]:
    """The confinement of ``program`` in bubblewrap, with its staging folder while it runs."""
    user = sandbox_user()
    shown = [(path.resolve(), str(path.resolve()), "--ro-bind") for path in visible]
    for path, _, _ in shown:
        if path == Path(SANDBOX_FOLDER) or Path(SANDBOX_FOLDER) in path.parents:
            raise UsageError(
                f"--visible {path}: {SANDBOX_FOLDER} is where podium shows the program its working folder and images; move it elsewhere"
            )
    if code is not None:
        shown.append((code.resolve(), CODE_FOLDER, "--ro-bind"))
    shown += [(images.resolve(), IMAGES_FOLDER, "--ro-bind"), (work.resolve(), WORK_FOLDER, "--bind")]
    shown.sort(key=lambda entry: len(Path(entry[1]).parts))  # a folder before the folders inside it
    stage = temporary_folder(STAGE_PREFIX, _reachable_temp()) if user is not None else None
    status, status_write = os.pipe()
    os.set_inheritable(status_write, True)
    arguments = os.memfd_create("bwrap-arguments", 0)
    os.set_inheritable(arguments, True)
    empty = [os.open(os.devnull, os.O_RDONLY) for _ in PROC_EMPTY]  # what bwrap shows there (it reads each to its end)
    for fd in empty:
        os.set_inheritable(fd, True)
    try:
        bind: list[tuple[str, str]] = []
        view: list[str] = []
        if stage is not None:
            stage.chmod(0o711)
            os.chown(work, *user)  # type: ignore[misc]
            work.chmod(0o700)
            (stage / "empty").mkdir()
            for k, (source, target, _) in enumerate(shown):
                staged = stage / str(k)
                staged.mkdir()
                bind.append((str(source), str(staged)))
                if target == IMAGES_FOLDER:  # its mount shows the staging path, not the contest's folder
                    view.append(str(staged))
        args = [
            "--json-status-fd",
            str(status_write),
            *_namespaces(),
            *_system(),
            *(arg for fd, path in zip(empty, PROC_EMPTY, strict=True) for arg in ("--ro-bind-data", str(fd), path)),
            *_tmpfs("/tmp", tmpfs_bytes),
            *_tmpfs("/dev/shm", tmpfs_bytes),
        ]
        for k, (source, target, how) in enumerate(shown):
            args += [how, str(stage / str(k)) if stage is not None else str(source), target]
        for device in gpu_devices(gpus) if gpus else []:
            args += ["--dev-bind", str(device), str(device)]
        args += ["--chdir", WORK_FOLDER, "--clearenv"]
        for name, value in ENVIRONMENT.items():
            args += ["--setenv", name, value]
        _write_all(arguments, b"".join(os.fsencode(arg) + b"\0" for arg in args))
        bwrap = shutil.which("bwrap") or "bwrap"
        yield Confinement(
            [bwrap, "--args", str(arguments), "--", *program],
            bind,
            user,
            "bwrap",
            (status_write, arguments, *empty),
            status,
            dict(ENVIRONMENT),
            view,
        )
    finally:
        for fd in (arguments, *empty):
            os.close(fd)
        os.close(status)
        os.close(status_write)
        if stage is not None:
            shutil.rmtree(stage, ignore_errors=True)


def _write_all(fd: int, data: bytes) -> None:
    """Write ``data`` to the memory file ``fd`` and rewind it, for bwrap to read from its start."""
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view) :]
    os.lseek(fd, 0, os.SEEK_SET)


def seen_images(sandbox: str, images: Path) -> str:
    """Where the program finds the images (what ``input.txt`` names): a neutral path in bubblewrap and Docker, else their own."""
    return IMAGES_FOLDER if sandbox in ("bwrap", "docker") else str(images.resolve())


def _reachable_temp() -> str:
    """The first neutral temporary folder every user may pass through (it and its parents), else /tmp; never the
    server's ``TMPDIR``, which the images' overlay would name in the program's mount table."""
    for parent in NEUTRAL_PARENTS:
        folder = Path(parent).resolve()
        if all(os.stat(part).st_mode & stat.S_IXOTH for part in (folder, *folder.parents)):
            return str(folder)
    return "/tmp"


def _tmpfs(path: str, size: int | None) -> list[str]:
    return (["--size", str(size)] if size is not None else []) + ["--tmpfs", path]


def unconfined(program: list[str]) -> Confinement:
    return Confinement(program, [], None, "none")
