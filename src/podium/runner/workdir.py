"""The working directory of a participant's program: ``input.txt`` naming the images, and a check that they were left alone."""

from __future__ import annotations

import os
from pathlib import Path

INPUT_FILE = "input.txt"


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
