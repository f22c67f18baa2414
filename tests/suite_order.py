"""The order in which make test's two processes (``-n 2 --dist loadfile``) are given the test files: the longest first.

A long file given out last runs alone while the other process idles. pytest-xdist gives the files out
in the processes' collection order only without its own reordering (by the number of tests in a file,
the most first, on by default), which :func:`pytest_configure` turns off: with it, test_page_matrix.py
was given out 50th and test_mutants.py 122nd of 167 files. tests/conftest.py registers these hooks.
"""

from __future__ import annotations

import pytest

# The longest test files, slowest first: the seconds of each file's tests of 5 s or more in a fresh-clone run of
# 0.13.0 at load 20 (--durations). test_platforms.py (632 s) was left out, and the reordering gave it out 19th.
LONGEST_FIRST = (
    "test_fuzzed_inputs.py",  # 1,116 s
    "test_page_matrix.py",  # 689 s
    "test_platforms.py",  # 632 s
    "test_phase_data.py",  # 155 s
    "test_metric_object_segmentation.py",  # 137 s
    "test_service_parts.py",  # 117 s
    "test_kernel_preconditions.py",  # 100 s
    "test_tracks.py",  # 92 s
    "test_png_stream.py",  # 74 s
    "test_challenge_ilsvrc2012.py",  # 68 s
    "test_content.py",  # 67 s
    "test_detection_scan.py",  # 643 tests of under 5 s each, long in earlier runs
    "test_mutants.py",
    "test_docker.py",
)


def pytest_configure(config: pytest.Config) -> None:
    """Under ``--dist loadfile``, the files are given out in the collection's order, not by their number of tests."""
    if getattr(config.option, "dist", "no") == "loadfile":
        config.option.loadscopereorder = False


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Under pytest-xdist, the longest files first; each file's tests keep their order (a stable sort)."""
    if hasattr(config, "workerinput"):  # a pytest-xdist process: every one sorts its collection alike
        rank = {name: i for i, name in enumerate(LONGEST_FIRST)}
        items.sort(key=lambda item: rank.get(item.path.name, len(rank)))
