"""The working directory of a participant's program: ``input.txt`` naming the images, a check that they were
left alone, and the temporary folders of runs, named after the process that made them.

A run's folders are made in ``/tmp`` or ``/var/tmp`` (:data:`NEUTRAL_PARENTS`), never in the server's own
``TMPDIR``: a sandbox's mount table (``/proc/self/mountinfo``) names the source folder of every bind, so a
``TMPDIR=/srv/contest-data/tmp`` would tell the program where the server keeps its data.
"""

from __future__ import annotations

import os
import re
import shutil
import tempfile
from pathlib import Path

from podium.runner.volume import unmount_under

INPUT_FILE = "input.txt"
RUN_PREFIX = "podium-run-"  # a run's own temporary folder: its working folder, its code's linked copy
STAGE_PREFIX = "podium-stage-"  # the staging mount points of a sandbox started as root
_MADE_BY = re.compile(rf"^(?:{RUN_PREFIX}|{STAGE_PREFIX})(\d+)-")
NEUTRAL_PARENTS = ("/tmp", "/var/tmp")  # where a run's folders are made: their paths name nothing of the server


def temporary_folder(prefix: str, parent: str | None = None) -> Path:
    """A new temporary folder ``PREFIX<pid>-<random>`` in ``parent``, by default the first of :data:`NEUTRAL_PARENTS`
    podium may write in (the temporary folder, ``TMPDIR``, only where neither is): :func:`remove_abandoned` knows whose it is.
    """
    usable = [p for p in NEUTRAL_PARENTS if os.access(p, os.W_OK | os.X_OK)]
    return Path(tempfile.mkdtemp(prefix=f"{prefix}{os.getpid()}-", dir=parent or next(iter(usable), None)))


def _temporary_parents() -> tuple[str, ...]:
    """Where podium's run folders may lie: :data:`NEUTRAL_PARENTS`, and the temporary folder (``TMPDIR``), where
    podium 0.12 and earlier made them."""
    return tuple(dict.fromkeys((*NEUTRAL_PARENTS, tempfile.gettempdir())))


def temporary_parent_beside(folder: Path) -> str | None:
    """The first of :data:`NEUTRAL_PARENTS` on ``folder``'s file system that podium may write in (where its files can
    be hard-linked), or ``None``."""
    try:
        device = os.stat(folder).st_dev
    except OSError:
        return None
    for parent in NEUTRAL_PARENTS:
        try:
            if os.stat(parent).st_dev == device and os.access(parent, os.W_OK | os.X_OK):
                return parent
        except OSError:
            continue
    return None


def remove_abandoned() -> list[Path]:
    """Remove the run folders of processes that no longer exist (a worker killed with SIGKILL), the file systems
    mounted in them first; the folders removed.

    A process id reused since is taken as alive: its folders stay, never another run's.
    """
    removed = []
    for parent in _temporary_parents():
        try:
            names = os.listdir(parent)
        except OSError:
            continue
        for name in names:
            made_by = _MADE_BY.match(name)
            if made_by and not _alive(int(made_by.group(1))):
                unmount_under(Path(parent, name))  # its working folder's file system, which rmtree would empty
                shutil.rmtree(os.path.join(parent, name), ignore_errors=True)
                removed.append(Path(parent, name))
    return removed


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def prepare_workdir(workdir: Path, images: str) -> None:
    """Make ``workdir`` with ``input.txt`` naming ``images``, the folder as the program will see it."""
    workdir.mkdir(parents=True, exist_ok=True)
    (workdir / INPUT_FILE).write_text(images + "\n", encoding="utf-8")


def snapshot(folder: Path) -> dict[str, tuple[int, int]]:
    """Names, sizes and modification times: to notice a program that changed the images."""
    state = {}
    for entry in os.scandir(folder):
        info = entry.stat(follow_symlinks=False)
        state[entry.name] = (info.st_size, info.st_mtime_ns)
    return state
