"""Shared test helpers: writing images with Pillow (independent of podium's decoder)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from PIL import Image

SHARED = Path(__file__).resolve().parents[2] / "shared"


def save_png(path: Path, pixels: np.ndarray, mode: str | None = None) -> Path:
    """Write ``pixels`` as PNG with Pillow; ``mode`` forces e.g. 'P', 'LA', 'RGB'."""
    path.parent.mkdir(parents=True, exist_ok=True)
    image = Image.fromarray(pixels)
    if mode == "P":
        image = image.convert("P")
    elif mode is not None:
        image = image.convert(mode)
    image.save(path, format="PNG")
    return path


@pytest.fixture
def shared() -> Path:
    if not SHARED.is_dir():
        pytest.skip(f"shared data not found at {SHARED}")
    return SHARED
