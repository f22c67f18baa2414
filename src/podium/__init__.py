"""podium: exact, fast scoring of computer-vision challenges.

The library's entry points are :func:`evaluate`, :func:`validate` and :func:`demo`
(:mod:`podium.api`), and the one-shot metric functions of :mod:`podium.metrics`.
They are imported on first use, so that a process that needs only a part of podium
(the sandbox's keeper, a platform's scoring program) does not pay for NumPy and the engine.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from podium._version import __version__

if TYPE_CHECKING:
    from podium import metrics
    from podium.api import demo, evaluate, validate
    from podium.core.result import Result

__all__ = ["Result", "__version__", "demo", "evaluate", "metrics", "validate"]


def __getattr__(name: str) -> Any:
    if name in ("demo", "evaluate", "validate"):
        from podium import api

        return getattr(api, name)
    if name == "Result":
        from podium.core.result import Result

        return Result
    if name == "metrics":  # podium.metrics without a `from podium import metrics` first
        import importlib

        return importlib.import_module("podium.metrics")
    raise AttributeError(f"module 'podium' has no attribute {name!r}")
