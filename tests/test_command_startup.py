"""The command's start-up: click and the engine imported with the garbage collector paused and then frozen, so that
no collection traverses them again (about 10 ms of ``podium evaluate``'s CPU); importing podium freezes nothing."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from podium.challenges import get

COUNTED = """
import atexit, gc, json, sys
collections = [0, 0, 0]
gc.callbacks.append(lambda phase, info: phase == "stop" and collections.__setitem__(info["generation"], collections[info["generation"]] + 1))
atexit.register(lambda: print(json.dumps({"frozen": gc.get_freeze_count(), "collections": collections, "enabled": gc.isenabled()}), file=sys.stderr))
sys.argv = ["podium", *sys.argv[1:]]
if sys.argv[1] == "import":
    import podium.cli
    from podium.cli import cli
    from podium.core.startup import collector_paused
    with collector_paused():
        import podium.scoring.engine
else:
    from podium.cli import main
    main()
"""


def counted(*args: str) -> tuple[subprocess.CompletedProcess[str], dict]:
    done = subprocess.run([sys.executable, "-c", COUNTED, *args], capture_output=True, text=True, timeout=120)
    return done, json.loads(done.stderr.strip().splitlines()[-1])


def test_the_command_freezes_what_it_imported(tmp_path: Path) -> None:
    demo = get("ilsvrc2012-cls").write_demo(tmp_path)
    done, gc = counted("evaluate", "ilsvrc2012-cls", "--truth", str(demo.truth), "--submission", str(demo.submission))
    assert done.returncode == 0 and "error@5" in done.stdout, done.stderr
    assert gc["frozen"] > 20_000 and gc["enabled"], gc  # click, the engine, the challenge's modules
    assert sum(gc["collections"]) < 20, gc  # 29 young and middle collections before, and a full one at exit


def test_importing_podium_freezes_nothing() -> None:
    done, gc = counted("import")
    assert done.returncode == 0, done.stderr
    assert gc["frozen"] == 0 and gc["enabled"], gc
