"""Check that the tests kill known mutants: each one is applied to a copy of ``src/`` and the tests must fail.

The four mutants are those an outside review found surviving the whole suite
(issue 17), written against today's code:

1. ``PointCounts`` merged by subtracting;
2. ``ErrorCounts`` merged dropping the other side's misses;
3. ``RankedBoxes`` merged by returning ``self``;
4. the camera-trap classification points worth 4 instead of 5.

Mutants 1-3 are killed by the conformance suite; mutant 4 changes the one
points formula consistently everywhere, so only the rules' worked examples
(``tests/test_challenge_camera_traps.py``) can kill it. A control run on an
unchanged copy must pass first. ``tests/test_mutants.py`` runs this in the suite.

Usage: ``.venv/bin/python tools/mutants.py`` (about 25 s of CPU). Exit 0 when every mutant is killed.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
CONFORMANCE = "tests/test_conformance.py"


@dataclass(frozen=True)
class Mutant:
    name: str
    file: str  # under src/podium/
    anchor: str  # text that must occur once
    replacement: str
    tests: tuple[str, ...] = (CONFORMANCE,)


MUTANTS = (
    Mutant(
        "PointCounts.merge subtracts",
        "metrics/detection_points.py",
        "    predictions: Count = summed()\n",
        "    predictions: Count = summed()\n\n"
        "    def merge(self, other):\n"
        "        return PointCounts(*(a - b for a, b in zip(self.__dict__.values(), other.__dict__.values())))\n",
    ),
    Mutant(
        "ErrorCounts.merge drops the other side",
        "metrics/imagenet.py",
        "    def error(self, k: int) -> float:\n",
        "    def merge(self, other):\n"
        "        return ErrorCounts(self.images + other.images, dict(self.misses), np.concatenate([self.per_image, other.per_image]))\n\n"
        "    def error(self, k: int) -> float:\n",
    ),
    Mutant(
        "RankedBoxes.merge returns self",
        "metrics/average_precision.py",
        "    def per_class(self,",
        "    def merge(self, other):\n        return self\n\n    def per_class(self,",
    ),
    Mutant(
        "classification points 4 instead of 5",
        "metrics/detection_points.py",
        "return 5 * (self.class_right - self.class_wrong)",
        "return 4 * (self.class_right - self.class_wrong)",
        ("tests/test_challenge_camera_traps.py", CONFORMANCE),  # the worked examples first: -x stops at their failure
    ),
)


def killed(mutant: Mutant) -> bool:
    """Whether the tests fail with ``mutant`` applied to a copy of the sources."""
    with tempfile.TemporaryDirectory() as folder:
        src = Path(folder) / "src"
        # The kernels' compiled code is copied with the sources (their modification times kept, which Numba's
        # cache index checks): no mutant touches a kernel, and each run would otherwise compile them all again
        # (about 30 s of CPU); a mutated file has a new time stamp, so its own kernels would be compiled anew.
        # Bytecode is left behind: it names the original files.
        shutil.copytree(ROOT / "src", src, ignore=shutil.ignore_patterns("*.pyc", "*.egg-info"))
        target = src / "podium" / mutant.file
        text = target.read_text()
        if text.count(mutant.anchor) != 1:
            raise SystemExit(
                f"mutant {mutant.name!r}: its anchor is not found once in {mutant.file}; update tools/mutants.py"
            )
        target.write_text(text.replace(mutant.anchor, mutant.replacement))
        env = os.environ | {"PYTHONPATH": str(src)}
        run = subprocess.run(
            [sys.executable, "-m", "pytest", "-q", "-x", "-p", "no:cacheprovider", *mutant.tests],
            cwd=ROOT,
            env=env,
            capture_output=True,
            text=True,
        )
        return run.returncode != 0


CONTROL = Mutant("control: no change", MUTANTS[3].file, MUTANTS[3].anchor, MUTANTS[3].anchor, MUTANTS[3].tests)


def main() -> int:
    if killed(CONTROL):  # the tests must pass on the unchanged copy, or a "kill" means nothing
        print("the tests fail on an unchanged copy of src/: fix them first")
        return 2
    survivors = []
    for mutant in MUTANTS:
        dead = killed(mutant)
        print(f"{'killed  ' if dead else 'SURVIVED'}  {mutant.name}")
        if not dead:
            survivors.append(mutant.name)
    return 1 if survivors else 0


if __name__ == "__main__":
    sys.exit(main())
