"""The working directory of a participant's program: ``input.txt`` naming the images, a check that they were
left alone, and the temporary folders of runs, named after the process that made them (:mod:`podium.runner.folders`).
"""

from __future__ import annotations

import os
import shutil
import tempfile
from pathlib import Path

from podium.runner.folders import NEUTRAL_PARENTS, abandoned, temporary_parents
from podium.runner.folders import RUN_PREFIX as RUN_PREFIX  # re-exported: the prefixes temporary_folder is given
from podium.runner.folders import STAGE_PREFIX as STAGE_PREFIX
from podium.runner.volume import unmount_abandoned

INPUT_FILE = "input.txt"


def temporary_folder(prefix: str, parent: str | None = None) -> Path:
    """A new temporary folder ``PREFIX<pid>-<random>`` in ``parent``, by default the first of :data:`NEUTRAL_PARENTS`
    podium may write in (the temporary folder, ``TMPDIR``, only where neither is): :func:`remove_abandoned` knows whose it is.
    """
    usable = [p for p in NEUTRAL_PARENTS if os.access(p, os.W_OK | os.X_OK)]
    return Path(tempfile.mkdtemp(prefix=f"{prefix}{os.getpid()}-", dir=parent or next(iter(usable), None)))


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
    mounted in them first (:func:`podium.runner.volume.unmount_abandoned`); the folders removed.

    A process id reused since is taken as alive: its folders stay, never another run's.
    """
    unmount_abandoned()  # their working folders' file systems, which rmtree would empty
    removed = []
    for parent in temporary_parents():
        try:
            names = os.listdir(parent)
        except OSError:
            continue
        for name in names:
            if abandoned(name):
                shutil.rmtree(os.path.join(parent, name), ignore_errors=True)
                removed.append(Path(parent, name))
    return removed


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
