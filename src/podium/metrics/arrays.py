"""Array conventions shared by the metric kernels."""

from __future__ import annotations

from typing import TypeVar

import numpy as np
from numpy.typing import NDArray

ScalarT = TypeVar("ScalarT", bound=np.generic)


def native(array: NDArray[ScalarT]) -> NDArray[ScalarT]:
    """``array`` in this machine's byte order, the only one Numba compiles for; ``array`` itself when it is.

    A 16-bit TIFF of mode ``I;16B`` decodes to big-endian integers, as does ``np.frombuffer(data, ">u2")``.

    >>> big = np.array([1, 256], dtype=">u2")
    >>> native(big).dtype.isnative, native(big).tolist(), native(native(big)) is native(big)
    (True, [1, 256], False)
    """
    return array if array.dtype.isnative else array.astype(array.dtype.newbyteorder("="))
