"""Types of the compiled extension ``_png_sums.c`` (its docstrings say what each function does)."""

from typing import Any, TypeAlias

import numpy as np

_Buffer: TypeAlias = bytes | bytearray | memoryview | np.ndarray[Any, Any]

def unfilter(raw: _Buffer, rows: _Buffer, stride: int, step: int, /) -> bool: ...
def class_sums(
    raw: _Buffer, width: int, truth: _Buffer, value: int, roi: _Buffer | None, /
) -> tuple[int, int, int, int] | None: ...
