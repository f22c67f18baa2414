"""Compiled kernels shipped with the package (``podium.accel.jit``): a user's first run compiles nothing.

The package is copied, mounted read-only (bubblewrap: root writes through file modes), and run by a
fresh process with an empty ``HOME`` (writable or not) and no ``NUMBA_CACHE_DIR``, as in a new
container or virtual environment: every kernel must load from
the code compiled beside the modules (this CPU's, or the generic CPU's on another machine), and
nothing may be compiled or written to the user's cache. Before the shipped fallback, Numba
compiled every kernel there (15 s of CPU for GlaS) and saved it under ``HOME``.
"""

from __future__ import annotations

import json
import os
import platform
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

import podium
from conftest import require
from podium.scoring.engine import evaluate

# Loads every kernel as the build does, then reports what Numba compiled in this process.
LOAD = r"""
import json, podium, podium.scoring.kernels
from podium.accel.jit import _KERNELS
print(json.dumps({"package": podium.__file__, "compiled": sum(sum(k.stats.cache_misses.values()) for k in _KERNELS),
                  "loaded": sum(sum(k.stats.cache_hits.values()) for k in _KERNELS)}))
"""


def _read_only(command: list[str], *paths: Path) -> list[str]:
    """``command`` run with ``paths`` mounted read-only, everything else as it is."""
    from podium.runner.sandbox import bwrap_problem

    require("bubblewrap", bwrap_problem())
    return [
        "bwrap",
        "--dev-bind",
        "/",
        "/",
        *[arg for path in paths for arg in ("--ro-bind", str(path), str(path))],
        "--",
        *command,
    ]


def _fresh_env(home: Path, package_parent: Path, cpu: str | None) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("NUMBA_") and k != "XDG_CACHE_HOME"}
    env.update(HOME=str(home), PYTHONPATH=str(package_parent))
    if cpu is not None:
        env["NUMBA_CPU_NAME"] = cpu
    return env


@pytest.fixture(scope="module")
def read_only_package(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A copy (mounted read-only by :func:`_read_only`) of the package with its shipped kernels (compiled first where they are stale, as ``make setup`` does)."""
    for cpu in (None, "generic"):
        env = {k: v for k, v in os.environ.items() if not k.startswith("NUMBA_")}
        if cpu:
            env["NUMBA_CPU_NAME"] = cpu
        subprocess.run([sys.executable, "-c", "import podium.scoring.kernels"], env=env, check=True, timeout=600)
    parent = tmp_path_factory.mktemp("site")
    shutil.copytree(Path(podium.__file__).parent, parent / "podium")
    return parent


@pytest.mark.parametrize(
    ("cpu", "home_writable"),
    [(None, True), ("x86-64", True), (None, False)],
    ids=["this CPU", "another CPU", "read-only HOME"],
)
def test_a_fresh_process_with_a_read_only_package_and_an_empty_home_compiles_no_kernel(
    read_only_package: Path, tmp_path: Path, cpu: str | None, home_writable: bool
) -> None:
    if cpu is not None and platform.machine() not in ("x86_64", "AMD64"):
        pytest.skip(f"the other CPU named here is an x86-64 one, not {platform.machine()}")
    home = tmp_path / "home"
    home.mkdir()
    read_only = [read_only_package] if home_writable else [read_only_package, home]
    result = subprocess.run(
        _read_only([sys.executable, "-c", LOAD], *read_only),
        env=_fresh_env(home, read_only_package, cpu),
        capture_output=True,
        text=True,
        timeout=300,
        cwd=tmp_path,
    )
    assert result.returncode == 0, result.stderr[-2000:]
    report = json.loads(result.stdout)
    assert report["package"].startswith(str(read_only_package))
    assert report["compiled"] == 0 and report["loaded"] >= 10, report
    assert not [p for p in home.rglob("*") if p.is_file()], "nothing is written to the user's cache"


def test_bounds_checked_runs_never_load_the_shipped_code(read_only_package: Path, tmp_path: Path) -> None:
    """Numba's keys do not tell bounds-checked code apart: a NUMBA_BOUNDSCHECK=1 run in a cache folder of its own compiles."""
    home = tmp_path / "home"
    home.mkdir()
    env = _fresh_env(home, read_only_package, None) | {
        "NUMBA_BOUNDSCHECK": "1",
        "NUMBA_CACHE_DIR": str(tmp_path / "cache"),
    }
    load = LOAD.replace(
        "import json, podium, podium.scoring.kernels",
        "import json, podium; from podium.formats import png_rows; png_rows.compile_kernels()",
    )
    result = subprocess.run(
        _read_only([sys.executable, "-c", load], read_only_package),
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
        cwd=tmp_path,
    )
    assert result.returncode == 0, result.stderr[-2000:]
    assert json.loads(result.stdout)["compiled"] > 0


@pytest.mark.parametrize("cpu", [None, "x86-64"], ids=["this CPU", "another CPU"])
def test_a_first_glas_evaluation_in_a_fresh_process_compiles_nothing(
    read_only_package: Path, tmp_path: Path, shared: Path, cpu: str | None
) -> None:
    """The real GlaS fixture, end to end: its label types and image sizes need no kernel the build did not compile,
    and the shipped code (the generic CPU's for another CPU) gives this process's scores."""
    if cpu is not None and platform.machine() not in ("x86_64", "AMD64"):
        pytest.skip(f"the other CPU named here is an x86-64 one, not {platform.machine()}")
    fixture = shared / "data" / "glas-fixture"
    home = tmp_path / "home"
    home.mkdir()
    command = [
        sys.executable,
        "-m",
        "podium",
        "evaluate",
        "glas",
        "--truth",
        str(fixture / "truth"),
        "--submission",
        str(fixture / "submission"),
        "--workers",
        "1",
        "--json",
        "-",
    ]
    result = subprocess.run(
        _read_only(command, read_only_package),
        env=_fresh_env(home, read_only_package, cpu),
        capture_output=True,
        text=True,
        timeout=300,
        cwd=tmp_path,
    )
    assert result.returncode == 0, result.stderr[-2000:]
    assert json.loads(result.stdout)["scores"] == evaluate("glas", fixture / "truth", fixture / "submission").scores
    assert not [p for p in home.rglob("*") if p.is_file()], "a kernel was compiled and saved under HOME"
