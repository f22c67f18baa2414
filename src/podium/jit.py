"""Numba's compiler as podium uses it, for the loops NumPy can only express as many whole-array passes."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeVar, cast

from numba import njit

F = TypeVar("F", bound=Callable[..., Any])


def compiled(function: F) -> F:
    """``function`` compiled without the GIL, its machine code cached on disk if a cache folder can be written.

    The cache is beside the module, or Numba's user cache when that folder is read-only; where
    neither can be written, the function is compiled again in each process (a few seconds).
    """
    try:
        return cast(F, njit(cache=True, nogil=True)(function))
    except RuntimeError:  # Numba found no writable cache folder
        return cast(F, njit(nogil=True)(function))
