"""Importing this module loads every compiled kernel: compiled the first time, then from Numba's cache.

``make`` imports it right after installing, so that no evaluation waits for the compiler
(6 s here), and a local pool's forkserver imports it before forking workers for GlaS
(:attr:`podium.challenges.base.Challenge.preload`), so that each worker starts with the
kernels in memory instead of loading them (0.2 s).
"""

from podium.formats import detection_scan, png_rows
from podium.metrics import detection_matching, fuzzy_jaccard_sums, object_segmentation

object_segmentation.compile_kernels()
png_rows.compile_kernels()
detection_scan.compile_kernels()
detection_matching.compile_kernels()
fuzzy_jaccard_sums.compile_kernels()
