"""What each runnable challenge promises its participants' programs (documented in the README).

The working directory holds ``input.txt``, whose single line is the absolute path
of the images folder; it is the program's current directory.
- face-clustering: the program writes one ``.csv`` in the working directory. The
  time limit is Th2 (``th2_s``) unless ``--time-limit`` is given; the measured
  time and peak memory become ``time_s`` and ``ram_mb`` of the final points.
- fuzzy-jaccard: the program writes ``<class>/<stem>.png`` under the working
  directory. The time limit is the rules' budget: the total megapixels of the
  test images / ``rate_mp_s`` + ``startup_s``. What it wrote before it was
  stopped is scored; missing or unreadable outputs count as all background.
"""

from __future__ import annotations

import os
from abc import ABC, abstractmethod
from pathlib import Path
from typing import Any

from PIL import Image

from podium.errors import UsageError
from podium.formats.folders import list_folder

INPUT_FILE = "input.txt"


class Contract(ABC):
    @abstractmethod
    def time_limit(self, images: Path, params: dict[str, Any]) -> float | None:
        """The limit the rules set when ``--time-limit`` is not given."""

    @abstractmethod
    def has_output(self, workdir: Path) -> bool:
        """Whether the program left anything to score."""

    @abstractmethod
    def scoring_settings(self, wall_s: float, peak_memory_mb: float) -> dict[str, str]:
        """``--set`` values the measurements feed into the scoring."""

    def details(self, workdir: Path, images: Path) -> dict[str, Any]:
        return {}


class FaceClusteringContract(Contract):
    def time_limit(self, images: Path, params: dict[str, Any]) -> float | None:
        if params["th2_s"] is None:
            raise UsageError("podium run face-clustering needs --time-limit S or --set th2_s=S (Th2, the hard limit)")
        return float(params["th2_s"])

    def has_output(self, workdir: Path) -> bool:
        return any(p.suffix.lower() == ".csv" for p in list_folder(workdir).files)

    def scoring_settings(self, wall_s: float, peak_memory_mb: float) -> dict[str, str]:
        return {"time_s": repr(wall_s), "ram_mb": repr(peak_memory_mb)}


class FuzzyJaccardContract(Contract):
    def time_limit(self, images: Path, params: dict[str, Any]) -> float | None:
        return megapixels(images) / params["rate_mp_s"] + params["startup_s"]

    def has_output(self, workdir: Path) -> bool:
        return any(list_folder(folder).files for folder in list_folder(workdir).folders)

    def scoring_settings(self, wall_s: float, peak_memory_mb: float) -> dict[str, str]:
        return {"unreadable": "zero"}  # a program stopped mid-write leaves broken files: background

    def details(self, workdir: Path, images: Path) -> dict[str, Any]:
        written = {p.stem for folder in list_folder(workdir).folders for p in list_folder(folder).files}
        return {"images_processed": len(written), "test_images": len(list_folder(images, refuse_hard_links=False).files)}


CONTRACTS: dict[str, Contract] = {"face-clustering": FaceClusteringContract(), "fuzzy-jaccard": FuzzyJaccardContract()}


def megapixels(images: Path) -> float:
    """Total size of the test images in megapixels (headers only)."""
    total = 0
    for path in list_folder(images, refuse_hard_links=False).files:
        try:
            with Image.open(path) as image:
                total += image.width * image.height
        except Exception:
            continue  # not an image: not part of the budget
    return total / 1e6


def prepare_workdir(workdir: Path, images: Path) -> None:
    workdir.mkdir(parents=True, exist_ok=True)
    (workdir / INPUT_FILE).write_text(str(images.resolve()) + "\n", encoding="utf-8")


def snapshot(folder: Path) -> dict[str, tuple[int, int]]:
    """Names, sizes and modification times: to notice a program that changed the images."""
    state = {}
    for entry in os.scandir(folder):
        info = entry.stat(follow_symlinks=False)
        state[entry.name] = (info.st_size, info.st_mtime_ns)
    return state
