"""Keeping large image buffers in the heap between images (glibc only).

By default glibc serves every allocation above 128 KiB with a fresh ``mmap``
and returns it to the system on ``free``, so each decoded image and each
temporary mask costs about a thousand page faults to touch again. Scoring
decodes and drops images of the same size over and over: with large blocks
kept in the heap, ``podium evaluate`` ran 19% faster on the 4-megapixel
images of ``benchmarks/fuzzy_jaccard_throughput.py``. This is applied in the
``podium`` command and its worker processes only, never on import, so a
program that uses podium as a library keeps its own allocator settings.
"""

from __future__ import annotations

import sys

try:
    from podium.accel import _malloc as compiled
except ImportError:  # built without a C compiler (the extension is optional): ctypes calls mallopt
    compiled = None  # type: ignore[assignment]

M_TRIM_THRESHOLD = -1
M_MMAP_THRESHOLD = -3
MMAP_THRESHOLD_BYTES = 64 << 20  # allocations below this come from the heap
TRIM_THRESHOLD_BYTES = 256 << 20  # free heap kept before it is given back


def keep_large_blocks() -> bool:
    """Raise glibc's mmap and trim thresholds; ``False`` where that does not apply.

    The call is compiled (``podium.accel._malloc``): importing ctypes for it cost every command about 2 ms
    of CPU. Without the extension, ctypes calls the C library already loaded (``CDLL(None)``):
    ``ctypes.util.find_library`` would run ``ldconfig`` in a child process, 20-40 ms of CPU in every
    podium process and pool worker.
    """
    if not sys.platform.startswith("linux"):
        return False
    if compiled is not None:
        return compiled.thresholds(MMAP_THRESHOLD_BYTES, TRIM_THRESHOLD_BYTES)
    import ctypes

    try:
        mallopt = ctypes.CDLL(None).mallopt
    except (OSError, AttributeError):  # not glibc (e.g. musl)
        return False
    return bool(mallopt(M_MMAP_THRESHOLD, MMAP_THRESHOLD_BYTES)) and bool(
        mallopt(M_TRIM_THRESHOLD, TRIM_THRESHOLD_BYTES)
    )
