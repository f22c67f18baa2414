"""Clean tables read by pyarrow's C++ CSV reader: the fast path of the table readers.

pyarrow is imported on the first call (0.1 s of CPU), so a process that reads no table does not
pay it. :func:`clean_columns` takes only what the row-by-row readers would read the same way:
ASCII text without quotes or control characters other than tab and line ends, no empty line,
every row the same count of fields. Anything else gives ``None``, and the caller's row-by-row
reader names every problem with its line; the two paths give the same rows
(tests/test_arrow_tables.py).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from podium.formats.text import TextSpans

if TYPE_CHECKING:
    import pyarrow as pa

DECIMAL_RE2 = r"[+-]?(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][+-]?[0-9]+)?"  # formats.text.DECIMAL, spelled for RE2
_PLAIN = bytes(range(32, 127)).replace(b'"', b"") + b"\t\n\r"  # what a clean table holds


def clean_columns(data: bytes, delimiter: str, count: int) -> list[pa.Array] | None:
    """The ``count`` columns of ``data`` (lines of fields, no header) as string arrays, one row per
    line; ``None`` unless the text is plain ASCII without quotes, has no empty line (the
    row-by-row readers number lines with them), no ``\\r`` but in ``\\r\\n``, and ``count``
    fields on every line."""
    if not data or data.translate(None, _PLAIN) or data.count(b"\r") != data.count(b"\r\n"):
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
    except pa.ArrowInvalid:  # a line with another count of fields
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
