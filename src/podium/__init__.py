"""podium: exact, fast scoring of computer-vision challenges.

The library's entry points are :func:`evaluate`, :func:`validate` and :func:`demo`
(:mod:`podium.api`), and the one-shot metric functions of :mod:`podium.metrics`.
"""

__version__ = "0.8.0"  # the single source: pyproject.toml reads it from here

from podium.api import demo, evaluate, validate
from podium.result import Result

__all__ = ["Result", "__version__", "demo", "evaluate", "validate"]
