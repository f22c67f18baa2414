"""Shared test helpers: writing images with Pillow (independent of podium's decoder)."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner
from PIL import Image

from podium.cli import cli

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


def run(*args: str) -> tuple[int, str]:
    """Exit code and everything the CLI printed (stdout and stderr)."""
    result = CliRunner().invoke(cli, list(args))
    return result.exit_code, result.output


def run_json(challenge: str, truth: Path, submission: Path, *extra: str, command: str = "evaluate") -> tuple[int, dict]:
    """Exit code and the result document of ``podium COMMAND CHALLENGE ... --json -``."""
    args = [command, challenge, "--truth", str(truth), "--submission", str(submission), "--json", "-", "--workers", "1"]
    result = CliRunner().invoke(cli, args + list(extra))
    return result.exit_code, json.loads(result.stdout)
