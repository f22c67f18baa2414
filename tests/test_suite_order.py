"""make test's two processes: pytest-xdist gives the longest files (suite_order.LONGEST_FIRST) out first."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

TESTS = Path(__file__).resolve().parent


def test_the_longest_files_are_given_out_before_files_of_more_tests(tmp_path: Path) -> None:
    """pytest-xdist's default order under ``--dist loadfile`` is by the number of tests in a file, the most first:
    a long file of few tests (test_mutants.py has one) was given out near the end and ran alone."""
    (tmp_path / "test_aaa.py").write_text("".join(f"def test_{i}():\n    pass\n" for i in range(5)))
    (tmp_path / "test_mutants.py").write_text("def test_one():\n    pass\n")  # in LONGEST_FIRST
    (tmp_path / "test_zzz.py").write_text("".join(f"def test_{i}():\n    pass\n" for i in range(3)))
    command = [sys.executable, "-m", "pytest", "-p", "suite_order", "-p", "no:cacheprovider", "-n", "1"]
    ran = subprocess.run(
        [*command, "--dist", "loadfile", "-v", str(tmp_path)],
        cwd=tmp_path,
        env={**os.environ, "PYTHONPATH": str(TESTS)},  # the suite's order, as a plugin
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert ran.returncode == 0, ran.stdout[-3000:] + ran.stderr[-3000:]
    order = re.findall(r"PASSED (test_\w+\.py)::", ran.stdout)
    assert order == ["test_mutants.py"] + ["test_aaa.py"] * 5 + ["test_zzz.py"] * 3, ran.stdout[-3000:]
