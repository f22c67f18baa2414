"""Clean tables read by pyarrow's C++ CSV reader: the fast path of the table readers.

pyarrow is imported on the first call (0.1 s of CPU), so a process that reads no table does not
pay it; nor pandas, which pyarrow's own ``Array.to_numpy`` and ``pa.array`` import where it is
installed (1.2 s of CPU), as does any Python value given to a pyarrow function: :func:`numbers`
and :func:`string_array` cross by the buffers instead, and :func:`filled` tests strings for
emptiness without a Python ``""``.
:func:`clean_columns` takes only what the row-by-row readers would read the same way:
ASCII text (or, where the caller allows it, UTF-8 without the characters Python counts as
whitespace or line breaks beyond ASCII's) without quotes or control characters other than tab and
line ends, no empty line, every row the same count of fields. Anything else gives ``None``, and the
caller's row-by-row reader names every problem with its line; the two paths give the same rows
(tests/test_arrow_tables.py).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import numpy as np
from numpy.typing import NDArray

from podium.formats.text import TextSpans

if TYPE_CHECKING:
    import pyarrow as pa

DECIMAL_RE2 = r"[+-]?(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][+-]?[0-9]+)?"  # formats.text.DECIMAL, spelled for RE2
_PLAIN = bytes(range(32, 127)).replace(b'"', b"") + b"\t\n\r"  # what a clean ASCII table holds
_UTF8 = bytes(range(128, 256))  # beyond ASCII, where the caller allows it (pyarrow checks it is UTF-8)
_UNICODE_SPACE = re.compile(  # what str.isspace, str.strip and str.splitlines count beyond ASCII, in UTF-8
    rb"\xc2[\x85\xa0]|\xe1\x9a\x80|\xe2\x80[\x80-\x8a\xa8\xa9\xaf]|\xe2\x81\x9f|\xe3\x80\x80"
)


def clean_columns(data: bytes, delimiter: str, count: int, *, unicode: bool = False) -> list[pa.Array] | None:
    """The ``count`` columns of ``data`` (lines of fields, no header) as string arrays, one row per
    line; ``None`` unless the text is plain ASCII (with ``unicode``, UTF-8 without Unicode's
    spaces and line breaks) without quotes, has no empty line (the row-by-row readers number
    lines with them), no ``\\r`` but in ``\\r\\n``, and ``count`` fields on every line."""
    plain = _PLAIN + _UTF8 if unicode else _PLAIN
    if not data or data.translate(None, plain) or data.count(b"\r") != data.count(b"\r\n"):
        return None
    if unicode and not data.isascii() and _UNICODE_SPACE.search(data):
        return None
    import pyarrow as pa
    import pyarrow.csv as pa_csv

    names = [str(i) for i in range(count)]
    try:
        table = pa_csv.read_csv(
            pa.py_buffer(data),
            read_options=pa_csv.ReadOptions(
                column_names=names, use_threads=False, block_size=min(len(data) + 1, 64 << 20)
            ),
            parse_options=pa_csv.ParseOptions(
                delimiter=delimiter, quote_char=False, double_quote=False, escape_char=False, newlines_in_values=False
            ),
            convert_options=pa_csv.ConvertOptions(
                column_types=dict.fromkeys(names, pa.string()),
                strings_can_be_null=False,
                quoted_strings_can_be_null=False,
            ),
        )
    except pa.ArrowInvalid:  # a line with another count of fields, or bytes that are not UTF-8
        return None
    lines = data.count(b"\n") + (not data.endswith(b"\n"))
    if table.num_rows != lines:  # an empty line skipped
        return None
    return [table.column(i).combine_chunks() for i in range(count)]


def strings(array: pa.Array) -> TextSpans:
    """A string array's values as :class:`TextSpans` over its own buffer (no Python string made)."""
    offsets = np.frombuffer(array.buffers()[1], dtype=np.int32)[array.offset : array.offset + len(array) + 1].astype(
        np.int64
    )
    data = array.buffers()[2]
    return TextSpans(b"" if data is None else data.to_pybytes(), offsets[:-1], offsets[1:])


def numbers(array: pa.Array) -> NDArray[Any]:
    """A null-free array of numbers or booleans as a NumPy array read off its buffers (a view of
    numbers, a copy of booleans, which pyarrow packs as bits)."""
    import pyarrow as pa

    assert array.null_count == 0, "a null has no value in the buffer"
    data, stop = np.frombuffer(array.buffers()[1], np.uint8), array.offset + len(array)
    if pa.types.is_boolean(array.type):
        bits: NDArray[np.uint8] = np.unpackbits(data, count=stop, bitorder="little")
        return bits[array.offset :].astype(bool)
    values: NDArray[Any] = data.view(np.dtype(array.type.to_pandas_dtype()))
    return values[array.offset : stop]


def string_array(texts: Sequence[str]) -> pa.Array:
    """Python strings as a pyarrow string array, built from one UTF-8 buffer and its offsets."""
    import pyarrow as pa

    encoded = [text.encode() for text in texts]
    offsets = np.zeros(len(encoded) + 1, np.int32)
    np.cumsum([len(e) for e in encoded], out=offsets[1:])
    return pa.Array.from_buffers(
        pa.string(), len(encoded), [None, pa.py_buffer(offsets), pa.py_buffer(b"".join(encoded))]
    )


def filled(array: pa.Array) -> pa.Array:
    """Which strings are not empty, as a boolean array."""
    import pyarrow as pa
    import pyarrow.compute as pc

    return pc.cast(pc.binary_length(array), pa.bool_())
