"""What a challenge promises participants' programs: its :class:`Program` contract (documented in the README).

The runner (:mod:`podium.scoring.run`) gives the program a working directory
holding ``input.txt``, whose single line is the absolute path of the images
folder; it is the program's current directory. The challenge says the rest:
the time limit the rules set, what counts as output, and which measurements
feed the scoring. Each runnable challenge sets :attr:`Challenge.program
<podium.challenges.base.Challenge.program>`.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from pathlib import Path
from typing import Any

from PIL import Image

from podium.formats.folders import list_folder


class Program(ABC):
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
        """What the run adds to the result's ``run`` section."""
        return {}


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
