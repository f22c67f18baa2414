"""How the engine's local pools start their workers (``engine._process_context``)."""

from __future__ import annotations

import concurrent.futures
import multiprocessing
import subprocess
import sys
import threading
import time
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path
from typing import Any, ClassVar

import pytest

from podium.challenges import get
from podium.scoring import engine
from podium.scoring.engine import evaluate

# In a process with a second thread the pool cannot fork; its forkserver is started here for GlaS.
FORKSERVER = r"""
import threading, time
from concurrent.futures import ProcessPoolExecutor
from podium.scoring import engine
from podium.challenges import get

if __name__ == "__main__":
    threading.Thread(target=time.sleep, args=(60,), daemon=True).start()
    challenge = get("glas")
    context = engine._process_context([type(challenge).__module__, *challenge.preload])
    with ProcessPoolExecutor(1, mp_context=context) as pool:
        loaded = pool.submit(eval, "sorted(m for m in ('numba', 'podium.challenges.glas', 'podium.scoring.kernels') if m in __import__('sys').modules)").result()
    print(context.get_start_method(), loaded)
"""


def test_a_glas_pool_started_from_a_forkserver_has_its_kernels_loaded(tmp_path: Path) -> None:
    """The workers fork from a server that imported GlaS and loaded its kernels once: they do not pay 0.5 s each."""
    if "forkserver" not in multiprocessing.get_all_start_methods():
        pytest.skip("no forkserver on this platform")
    script = tmp_path / "pool.py"
    script.write_text(FORKSERVER)
    result = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr[-2000:]
    assert result.stdout.split() == [
        "forkserver",
        "['numba',",
        "'podium.challenges.glas',",
        "'podium.scoring.kernels']",
    ]


def test_only_glas_preloads_compiled_kernels() -> None:
    assert get("glas").preload == ("podium.scoring.kernels",)
    assert all(not get(name).preload for name in ("fuzzy-jaccard", "face-clustering", "camera-traps", "ilsvrc2012-cls"))


@pytest.fixture(scope="module")
def glas_set(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    from podium.synthetic.glas import write_set

    return write_set(tmp_path_factory.mktemp("glas"), 6, (120, 160), 6)


class _CountedPool(ProcessPoolExecutor):
    """The real pool, counted."""

    started = 0
    methods: ClassVar[list[str]] = []

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        type(self).started += 1
        type(self).methods.append(kwargs["mp_context"].get_start_method())
        super().__init__(*args, **kwargs)


def test_a_small_job_with_two_workers_is_scored_here_as_with_one(
    glas_set: tuple[Path, Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    """A few small images take less than starting two processes (which loaded the kernels again each): no pool starts."""
    monkeypatch.setattr(concurrent.futures, "ProcessPoolExecutor", _CountedPool)  # the engine imports it at a pool
    _CountedPool.started = 0
    one, two = (evaluate("glas", *glas_set, workers=workers) for workers in (1, 2))
    assert _CountedPool.started == 0
    assert two.to_dict() == one.to_dict()


def test_a_job_worth_a_pool_gets_one(
    glas_set: tuple[Path, Path], monkeypatch: pytest.MonkeyPatch, pool_always: None
) -> None:
    """Where the pool pays (here: it is free), the first items are scored here (loading the kernels forked workers
    share), the rest by the pool, in order; their progress is reported once the workers have forked."""
    monkeypatch.setattr(concurrent.futures, "ProcessPoolExecutor", _CountedPool)  # the engine imports it at a pool
    _CountedPool.started, _CountedPool.methods = 0, []
    done: list[tuple[int, int]] = []

    def progress(d: int, t: int) -> None:  # a progress bar: its first call starts a thread
        if not done:
            threading.Thread(target=time.sleep, args=(0.5,), daemon=True).start()
        done.append((d, t))

    pooled = evaluate("glas", *glas_set, workers=2, progress=progress)
    assert _CountedPool.started == 1
    assert done == [(i, 6) for i in range(done[0][0], 7)]
    assert pooled.to_dict() == evaluate("glas", *glas_set, workers=1).to_dict()


FORKED_FIRST = """
import sys, threading, time
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path
from podium.scoring import engine
engine.POOL_START_S = engine.SERVER_START_S = 0.0
methods = []
class Counted(ProcessPoolExecutor):
    def __init__(self, *args, **kwargs):
        methods.append(kwargs["mp_context"].get_start_method())
        super().__init__(*args, **kwargs)
import concurrent.futures
concurrent.futures.ProcessPoolExecutor = Counted
done = []
def progress(d, t):
    if not done:
        threading.Thread(target=time.sleep, args=(0.5,), daemon=True).start()
    done.append(d)
engine.evaluate("glas", Path(sys.argv[1]), Path(sys.argv[2]), {}, workers=2, progress=progress)
print(methods)
"""


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="fork is Linux's start method here")
def test_workers_fork_before_the_first_progress_report(glas_set: tuple[Path, Path]) -> None:
    """A progress bar starts a thread at its first report; the workers fork before it (else a forkserver, 1 s more).

    Run in a fresh process: this one holds the threads earlier tests left, and any thread means a forkserver.
    """
    ran = subprocess.run(
        [sys.executable, "-c", FORKED_FIRST, *map(str, glas_set)], capture_output=True, text=True, timeout=300
    )
    assert ran.returncode == 0, ran.stderr
    assert ran.stdout.split() == ["['fork']"]


def test_a_pool_pays_when_the_rest_saves_more_than_its_start() -> None:
    assert not engine._pool_pays(0.1, 2)  # 0.05 s saved
    assert engine._pool_pays(10.0, 2)
    assert not engine._pool_pays(10.0, 1)
