"""A module imported when it is first used, not when the module naming it is.

NumPy costs a new process about 0.1 s of CPU, as much as scoring a 50,000-image ILSVRC Task 1
submission in plain Python. The modules on that path (the challenge, its reader, its metric, the
engine and the result document) name NumPy as ``np`` through :class:`LazyModule`, so that a
command whose input takes the plain path (:data:`podium.challenges.ilsvrc2012.SMALL_BYTES`) never
imports it, while every other use is unchanged::

    if TYPE_CHECKING:
        import numpy as np
    else:
        np = LazyModule("numpy")

Type checkers see the module itself. An attribute is looked up in the real module once, then kept
on the stand-in, so a later use costs what a module attribute does. Nothing is put in
``sys.modules`` before the real import, which the interpreter's import lock serializes.
"""

from __future__ import annotations

import importlib
from typing import Any


class LazyModule:
    """Stands for the module ``name``, imported at the first attribute looked up on it.

    >>> json = LazyModule("json")
    >>> json.dumps([1])
    '[1]'
    """

    def __init__(self, name: str) -> None:
        self._name = name

    def __getattr__(self, attribute: str) -> Any:
        value = getattr(importlib.import_module(self._name), attribute)
        setattr(self, attribute, value)  # found on the instance from now on: __getattr__ is not called again
        return value

    def __repr__(self) -> str:
        return f"<module {self._name!r}, imported on first use>"
