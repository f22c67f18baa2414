"""The known mutants of issue 17 are killed by the tests (``tools/mutants.py``)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def test_known_mutants_are_killed() -> None:
    run = subprocess.run(
        [sys.executable, str(ROOT / "tools" / "mutants.py")], cwd=ROOT, capture_output=True, text=True, timeout=600
    )
    assert run.returncode == 0, run.stdout + run.stderr
    assert run.stdout.count("killed") == 4
