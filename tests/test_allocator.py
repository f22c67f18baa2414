"""podium.accel.allocator: glibc's thresholds raised in the podium command and its workers, at no start-up cost."""

from __future__ import annotations

import subprocess
import sys

import pytest

from podium.accel.allocator import keep_large_blocks


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="glibc's mallopt is Linux-only")
def test_thresholds_are_raised_without_starting_a_process(monkeypatch: pytest.MonkeyPatch) -> None:
    """``find_library`` ran ``ldconfig`` in a child process on every start (issue 40, goal 1)."""

    def no_process(*args: object, **kwargs: object) -> None:
        raise AssertionError(f"a process was started: {args[:1]}")

    monkeypatch.setattr(subprocess.Popen, "__init__", no_process)
    assert keep_large_blocks()  # glibc here: both thresholds set
