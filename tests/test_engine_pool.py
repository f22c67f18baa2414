"""How the engine's local pools start their workers (``engine._process_context``)."""

from __future__ import annotations

import multiprocessing
import subprocess
import sys
from pathlib import Path

import pytest

from podium.challenges import get

# In a process with a second thread the pool cannot fork; its forkserver is started here for GlaS.
FORKSERVER = r"""
import threading, time
from concurrent.futures import ProcessPoolExecutor
from podium import engine
from podium.challenges import get

if __name__ == "__main__":
    threading.Thread(target=time.sleep, args=(60,), daemon=True).start()
    challenge = get("glas")
    context = engine._process_context([type(challenge).__module__, *challenge.preload])
    with ProcessPoolExecutor(1, mp_context=context) as pool:
        loaded = pool.submit(eval, "sorted(m for m in ('numba', 'podium.challenges.glas', 'podium.kernels') if m in __import__('sys').modules)").result()
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
    assert result.stdout.split() == ["forkserver", "['numba',", "'podium.challenges.glas',", "'podium.kernels']"]


def test_only_glas_preloads_compiled_kernels() -> None:
    assert get("glas").preload == ("podium.kernels",)
    assert all(not get(name).preload for name in ("fuzzy-jaccard", "face-clustering", "camera-traps", "ilsvrc2012-cls"))
