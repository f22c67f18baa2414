"""Numba's compiler as podium uses it, for the loops NumPy can only express as many whole-array passes.

Numba is imported by the first module that defines a kernel, not by this one: asking
:func:`kernels_loaded` costs nothing in a process that has none.

Compiled code is shipped, not made at a user's first run. ``make setup`` and the image's
build (``python -m podium.scoring.kernels``) compile every kernel twice into the ``__pycache__``
folders beside the kernels' modules: once for this CPU, once for any CPU of the
architecture (``NUMBA_CPU_NAME=generic``: no instruction set past the baseline, so the
code runs on every machine that runs the interpreter). A process looks a kernel up in
Numba's own cache folder first (beside the module where it can write there, else
``NUMBA_CACHE_DIR`` or the user's cache), then in those shipped folders, for its CPU and
then for the generic one. A fresh container or virtual environment, with an empty
``HOME`` and a read-only package folder, thus loads the kernels in milliseconds instead
of compiling them for 15 s (``benchmarks/first_run.py``). The shipped code is found by
the content of the kernel's source, not its time stamp, so copying or reinstalling the
package keeps it; a changed kernel is compiled again (and saved where Numba can write). A process
that compiles otherwise than the build (``NUMBA_BOUNDSCHECK``, ``NUMBA_DEBUGINFO``, ``NUMBA_OPT``)
uses Numba's own cache only.
"""

from __future__ import annotations

import functools
import inspect
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar, cast

F = TypeVar("F", bound=Callable[..., Any])
_KERNELS: list[Any] = []  # every compiled function, to tell whether one has run in this process
GENERIC_CPU = "generic"  # LLVM's name for the architecture's baseline CPU


def compiled(function: F) -> F:
    """``function`` compiled without the GIL, its machine code loaded from the shipped or Numba's cache.

    Compiled code that no cache holds is saved in Numba's cache folder when one can be
    written; where none can, the function is compiled again in each process (seconds).
    """
    from numba import njit

    kernel = njit(nogil=True)(function)
    try:
        kernel._cache = _kernel_cache_class()(function)  # type: ignore[attr-defined]  # Numba's FunctionCache, with the shipped folder as a fallback
    except RuntimeError:  # no folder to read or write: compiled in each process
        pass
    _KERNELS.append(kernel)
    return cast(F, kernel)


def loaded_signatures() -> int:
    """How many compiled versions of kernels this process has loaded (or compiled): an unchanged count
    across a call means it loaded none, which takes tens of milliseconds each, more for the first."""
    return sum(len(kernel.signatures) for kernel in _KERNELS)


def kernels_loaded() -> bool:
    """Whether a kernel has run in this process. Numba's compiler is then set up, and another kernel
    loads from the cache in milliseconds; the first takes about a second (Numba's import, its
    typing registries, and SciPy, which it imports to find BLAS)."""
    return any(kernel.signatures for kernel in _KERNELS)


@functools.cache
def _kernel_cache_class() -> type:
    """The cache of a kernel (defined here, so that Numba's modules load with the first kernel only)."""
    from numba.core.caching import CompileResultCacheImpl, FunctionCache, IndexDataCacheFile, InTreeCacheLocator

    class ShippedLocator(InTreeCacheLocator):
        """The ``__pycache__`` folder beside the module, read even where it cannot be written."""

        def ensure_cache_path(self) -> None:
            if not Path(self.get_cache_path()).is_dir():
                raise OSError(f"no folder {self.get_cache_path()}")

        @classmethod
        def from_function(cls, py_func: Callable[..., Any], py_file: str) -> ShippedLocator | None:
            self = cls(py_func, py_file)
            try:
                self.ensure_cache_path()
            except OSError:
                return None
            return self

    class KernelCacheImpl(CompileResultCacheImpl):
        _locator_classes = [*CompileResultCacheImpl._locator_classes, ShippedLocator]  # noqa: RUF012 - the last resort: read only

    class KernelCache(FunctionCache):
        """Numba's cache of one kernel, then the shipped folder: this CPU's code, then the generic CPU's."""

        _impl_class = KernelCacheImpl

        def __init__(self, py_func: Callable[..., Any]) -> None:
            super().__init__(py_func)
            shipped = ShippedLocator.from_function(py_func, inspect.getfile(py_func))
            self._files = [self._cache_file]
            if shipped is not None and Path(shipped.get_cache_path()).resolve() != Path(self._cache_path).resolve():
                self._files.append(
                    IndexDataCacheFile(
                        shipped.get_cache_path(), self._impl.filename_base, self._impl.locator.get_source_stamp()
                    )
                )

        def _load_overload(self, sig: Any, target_context: Any) -> Any:
            if not _built_alike():
                return super()._load_overload(sig, target_context)
            if not self._enabled:
                return None
            key = self._index_key(sig, target_context.codegen())
            triple, cpu, _features = key[1]
            keys = [key] if cpu == GENERIC_CPU else [key, (key[0], (triple, GENERIC_CPU, ""), key[2])]
            for cache_file in self._files:
                for candidate in keys:
                    data = cache_file.load(candidate)
                    if data is not None:
                        return self._impl.rebuild(target_context, data)
            return None

        def _save_overload(self, sig: Any, data: Any) -> None:
            if not isinstance(self._impl.locator, ShippedLocator):  # a read-only folder: nowhere to save
                super()._save_overload(sig, data)

    return KernelCache


def _built_alike() -> bool:
    """Whether Numba compiles as the build did: no bounds checks, no debugging information, full
    optimisation. Numba's cache keys do not tell such code apart, so a process that asks for it
    (``make test``'s ``NUMBA_BOUNDSCHECK=1`` run, in a cache folder of its own) never loads shipped code."""
    from numba.core import config

    settings = vars(config)  # set from the environment when Numba loads
    return not settings["BOUNDSCHECK"] and not settings["DEBUGINFO_DEFAULT"] and int(settings["OPT"]) == 3
