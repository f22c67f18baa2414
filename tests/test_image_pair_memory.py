"""GlaS within 1 GB: an image pair whose exact scoring would need more memory is refused as too
complex before anything is built, and honest images of podium's largest sizes are scored."""

from __future__ import annotations

import subprocess
import sys
import textwrap

import numpy as np
import pytest

from podium.metrics.object_segmentation import TooComplex, image_stats

CHILD = textwrap.dedent(
    """
    import sys, time
    import numpy as np
    from podium.metrics.object_segmentation import TooComplex, image_stats
    side = int(sys.argv[1])
    rng = np.random.default_rng(0)
    truth = np.zeros((side, side), np.uint16)
    for code in range(1, 200):
        y, x = rng.integers(0, side - side // 10, 2)
        truth[y : y + side // 12, x : x + side // 12] = code
    noise = rng.integers(0, 65536, (side, side), dtype=np.uint16)
    start = time.perf_counter()
    try:
        image_stats(truth, noise, 100.0)
        outcome = "scored"
    except TooComplex as exc:
        outcome = "too complex: " + str(exc)
    peak = int(open("/proc/self/status").read().split("VmHWM:")[1].split()[0]) >> 10
    print(outcome, round(time.perf_counter() - start, 1), peak)
    """
)


def test_noise_labels_over_the_memory_bound_are_refused_at_once() -> None:
    """16 megapixels of noise labels against glands: 0.8.5 built every side's arrays (past 1 GB, for a
    minute) before its work budget refused them; now refused in a fraction of a second."""
    done = subprocess.run([sys.executable, "-c", CHILD, "4000"], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    outcome, seconds, peak_mb = done.stdout.rsplit(" ", 2)
    assert (
        outcome.startswith("too complex: would take about") and "podium scores an image pair within 800 MB" in outcome
    ), outcome
    assert float(seconds) < 5 and int(peak_mb) < 400, (seconds, peak_mb)


def test_honest_images_of_many_pixels_are_scored() -> None:
    rng = np.random.default_rng(1)
    truth = np.zeros((3000, 3000), np.uint16)
    for code in range(1, 300):
        y, x = rng.integers(0, 2900, 2)
        truth[y : y + rng.integers(20, 100), x : x + rng.integers(20, 100)] = code
    segmented = np.roll(truth, 3, axis=1)
    stats = image_stats(truth, segmented, 100.0)
    assert stats.tp > 0


def test_the_bound_counts_changes_of_label() -> None:
    """The same 36 megapixels: one object passes, stripes of alternating labels one pixel wide do not."""
    from podium.metrics import object_segmentation

    flat = np.ones((6000, 6000), np.uint8)
    object_segmentation.check_memory(flat, flat)
    with pytest.raises(TooComplex, match="35,994,000 changes of label"):
        object_segmentation.check_memory(flat, np.tile(np.array([1, 2], np.uint8), (6000, 3000)))
