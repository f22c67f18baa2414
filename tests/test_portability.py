"""podium on a platform without ``os.sysconf``, ``os.sched_getaffinity`` and /proc (macOS, Windows), simulated.

The commands run in a child Python that reports ``sys.platform == "darwin"``,
has neither function, and fails every access under /proc as if it did not
exist. ``evaluate`` (one worker and several), ``validate``, ``rank`` and the
library give the same results as on Linux; ``podium run`` says it needs Linux.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from podium.challenges import get

SIMULATION = r"""
import builtins, io, json, os, sys, sysconfig

import podium.cli
from podium.challenges import every

every()  # imported before the platform changes: interpreters built for Linux look up Linux build data
sysconfig.get_config_vars()
sys.platform = "darwin"
for name in ("sysconf", "sched_getaffinity"):
    if hasattr(os, name):
        delattr(os, name)


def _under_proc(path):
    if isinstance(path, int):
        return False
    path = os.fsdecode(os.fspath(path))
    return path == "/proc" or path.startswith("/proc/")


def _hidden(function):
    def wrapper(path, *args, **kwargs):
        if _under_proc(path):
            raise FileNotFoundError(2, "No such file or directory (simulated)", os.fsdecode(os.fspath(path)))
        return function(path, *args, **kwargs)
    return wrapper


builtins.open = io.open = _hidden(io.open)
for name in ("listdir", "scandir", "readlink", "stat", "lstat", "open", "statvfs"):
    if hasattr(os, name):
        setattr(os, name, _hidden(getattr(os, name)))

if __name__ == "__main__":  # worker processes start anew here (forkserver, spawn), as on macOS and Windows
    if sys.argv[1] == "--api":
        import podium
        result = podium.evaluate(sys.argv[2], sys.argv[3], sys.argv[4])
        print(json.dumps(result.scores))
    else:
        sys.argv = ["podium", *sys.argv[1:]]
        podium.cli.main()
"""


@pytest.fixture(scope="module")
def simulated(tmp_path_factory: pytest.TempPathFactory) -> Path:
    script = tmp_path_factory.mktemp("portability") / "simulate.py"
    script.write_text(SIMULATION)
    return script


def podium_on_another_platform(script: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, str(script), *args], capture_output=True, text=True, timeout=300)


def podium_here(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "podium", *args], capture_output=True, text=True, timeout=300)


@pytest.mark.parametrize(("challenge", "workers"), [("camera-traps", "1"), ("glas", "2")])
def test_evaluate_validate_and_rank_work(challenge: str, workers: str, simulated: Path, tmp_path: Path) -> None:
    demo = get(challenge).write_demo(tmp_path / "demo")
    files = ["--truth", str(demo.truth), "--submission", str(demo.submission)]
    elsewhere = podium_on_another_platform(
        simulated, "evaluate", challenge, *files, "--workers", workers, "--json", str(tmp_path / "a.json"), "--quiet"
    )
    assert elsewhere.returncode == 0, elsewhere.stderr
    here = podium_here("evaluate", challenge, *files, "--workers", "1", "--json", str(tmp_path / "b.json"), "--quiet")
    assert here.returncode == 0, here.stderr
    assert (
        json.loads((tmp_path / "a.json").read_text())["scores"]
        == json.loads((tmp_path / "b.json").read_text())["scores"]
    )
    checked = podium_on_another_platform(simulated, "validate", challenge, *files)
    assert checked.returncode == 0, checked.stderr
    ranked = podium_on_another_platform(
        simulated, "rank", challenge, str(tmp_path / "a.json"), str(tmp_path / "b.json"), "--json", "-"
    )
    assert ranked.returncode == 0, ranked.stderr
    assert [team["rank"] for team in json.loads(ranked.stdout)["teams"]] == [1, 1]


def test_the_library_works(simulated: Path, tmp_path: Path) -> None:
    demo = get("camera-traps").write_demo(tmp_path)
    elsewhere = podium_on_another_platform(simulated, "--api", "camera-traps", str(demo.truth), str(demo.submission))
    assert elsewhere.returncode == 0, elsewhere.stderr
    import podium

    assert json.loads(elsewhere.stdout) == podium.evaluate("camera-traps", demo.truth, demo.submission).scores


def test_run_says_it_needs_linux(simulated: Path, tmp_path: Path) -> None:
    (tmp_path / "images").mkdir()
    (tmp_path / "truth.csv").write_text("image,identity\n")
    ran = podium_on_another_platform(
        simulated,
        "run",
        "face-clustering",
        "--command",
        "true",
        "--images",
        str(tmp_path / "images"),
        "--truth",
        str(tmp_path / "truth.csv"),
        "--time-limit",
        "5",
    )
    assert ran.returncode == 2 and "podium run needs Linux" in ran.stderr and "Traceback" not in ran.stderr, ran.stderr
