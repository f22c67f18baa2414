"""The packages held to ``mypy --strict`` (issue 37) get every flag of it, as mypy itself reads pyproject.toml."""

from __future__ import annotations

from pathlib import Path

import pytest
from mypy.main import process_options
from mypy.options import PER_MODULE_OPTIONS, Options

PYPROJECT = Path(__file__).resolve().parents[1] / "pyproject.toml"


def _options(*arguments: str) -> Options:
    return process_options(list(arguments))[1]


@pytest.mark.parametrize(
    "module", ["podium.metrics.clustering", "podium.formats.png", "podium.challenges.glas", "podium.runner.process"]
)
def test_a_strict_package_is_checked_with_every_flag_of_mypy_strict(module: str) -> None:
    strict, plain = _options("--strict", "--config-file", "", "-c", "pass"), _options("--config-file", "", "-c", "pass")
    ours = _options("--config-file", str(PYPROJECT))
    ours.build_per_module_cache()
    checked = ours.clone_for_module(module)
    flags = [name for name in sorted(PER_MODULE_OPTIONS) if getattr(strict, name) != getattr(plain, name)]
    assert flags, "mypy --strict changed no per-module flag: this test reads mypy's options wrongly"
    assert {name: getattr(checked, name) for name in flags} == {name: getattr(strict, name) for name in flags}
    assert ours.warn_redundant_casts  # the one global flag of --strict
