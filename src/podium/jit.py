"""Numba's compiler as podium uses it, for the loops NumPy can only express as many whole-array passes.

Numba is imported by the first module that defines a kernel, not by this one: asking
:func:`kernels_loaded` costs nothing in a process that has none.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeVar, cast

F = TypeVar("F", bound=Callable[..., Any])
_KERNELS: list[Any] = []  # every compiled function, to tell whether one has run in this process


def compiled(function: F) -> F:
    """``function`` compiled without the GIL, its machine code cached on disk if a cache folder can be written.

    The cache is beside the module, or Numba's user cache when that folder is read-only; where
    neither can be written, the function is compiled again in each process (a few seconds).
    """
    from numba import njit

    try:
        kernel = njit(cache=True, nogil=True)(function)
    except RuntimeError:  # Numba found no writable cache folder
        kernel = njit(nogil=True)(function)
    _KERNELS.append(kernel)
    return cast(F, kernel)


def kernels_loaded() -> bool:
    """Whether a kernel has run in this process. Numba's compiler is then set up, and another kernel
    loads from the cache in milliseconds; the first takes about a second (Numba's import, its
    typing registries, and SciPy, which it imports to find BLAS)."""
    return any(kernel.signatures for kernel in _KERNELS)
