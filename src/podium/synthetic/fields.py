"""Smooth random fields, the raw material of synthetic label images and maps."""

from __future__ import annotations

import numpy as np
from numpy.typing import NDArray


def smooth_field(shape: tuple[int, int], cell: int, rng: np.random.Generator) -> NDArray[np.floating]:
    """Uniform noise on a grid of ``cell``-pixel cells, bilinearly interpolated to ``shape``."""
    height, width = shape
    grid = rng.random((height // cell + 2, width // cell + 2), dtype=np.float32)
    rows = _axis_weights(height, cell)
    cols = _axis_weights(width, cell)
    (r0, rf), (c0, cf) = rows, cols
    top = grid[r0][:, c0] * (1 - cf) + grid[r0][:, c0 + 1] * cf
    bottom = grid[r0 + 1][:, c0] * (1 - cf) + grid[r0 + 1][:, c0 + 1] * cf
    return top * (1 - rf[:, None]) + bottom * rf[:, None]


def _axis_weights(n: int, cell: int) -> tuple[NDArray[np.intp], NDArray[np.floating]]:
    position = np.arange(n, dtype=np.float32) / cell
    index = position.astype(np.intp)
    return index, position - index
