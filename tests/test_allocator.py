"""podium.accel.allocator: glibc's thresholds raised in the podium command and its workers, at no start-up cost."""

from __future__ import annotations

import subprocess
import sys

import pytest

from conftest import require
from podium.accel import allocator
from podium.accel.allocator import keep_large_blocks


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="glibc's mallopt is Linux-only")
def test_thresholds_are_raised_without_starting_a_process(monkeypatch: pytest.MonkeyPatch) -> None:
    """``find_library`` ran ``ldconfig`` in a child process on every start (issue 40, goal 1)."""

    def no_process(*args: object, **kwargs: object) -> None:
        raise AssertionError(f"a process was started: {args[:1]}")

    monkeypatch.setattr(subprocess.Popen, "__init__", no_process)
    assert keep_large_blocks()  # glibc here: both thresholds set


HEAP_GROWTH = """
import sys
from podium.accel.allocator import keep_large_blocks

def heap() -> int:
    with open("/proc/self/maps") as maps:
        return sum(int(e, 16) - int(s, 16) for s, e in (l.split()[0].split("-") for l in maps if l.rstrip().endswith("[heap]")))

keep = sys.argv[1] == "keep" and keep_large_blocks()
before = heap()
block = bytearray(32 << 20)
print(keep, heap() - before >= 16 << 20, "ctypes" in sys.modules)  # the top chunk had some room
"""


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="glibc's mallopt is Linux-only")
def test_a_large_block_comes_from_the_heap_and_ctypes_is_not_loaded() -> None:
    """The thresholds take effect (a 32 MB block is carved from the heap, not mapped on its own), and the compiled
    call leaves ctypes unloaded (2 ms of every command's CPU); without the extension, ctypes makes the call."""

    def run(mode: str) -> str:
        return subprocess.run(
            [sys.executable, "-c", HEAP_GROWTH, mode], capture_output=True, text=True, check=True
        ).stdout.split()

    assert run("default") == ["False", "False", "False"]  # glibc maps a block above 128 KiB of its own
    assert run("keep") == ["True", "True", str(allocator.compiled is None)]
    require("podium's C extensions", None if allocator.compiled else "_malloc not built (make setup builds it)")
