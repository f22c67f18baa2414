"""Lines of class labels read as the file's own tokens, in plain Python: the small-input twin of
:mod:`~podium.formats.label_rows`, for a command that need not import NumPy.

A new process spends about 0.1 s of CPU importing NumPy, more than reading and checking the
50,000 lines of an ILSVRC Task 1 submission here (about 20 ms). This reader takes only the clean
shape a program writes, stricter than ``label_rows``: an optional UTF-8 BOM, then lines of
``width`` labels each, one space between them, and one after them on every line or on none (the
2012 kit's demo submission has one), a line feed after each line (the last may lack it), no blank line; and every
label one of 1..``classes`` as written (canonical: ``7``, never ``07`` or ``+7``).
Anything else gives ``None``, and the NumPy reader reads the file and names its problems.

The checks are whole-file operations at C speed, none per token: the tokens are the file split at
white space; the file with its digits deleted must be the separators of that many clean lines,
which holds only if each line has ``width`` tokens of digits; and the lengths of the numbers (the
file with every digit written ``d``) and their first digits must be those of 1..``classes``.
Since labels are canonical, equal labels are equal tokens: they are compared as read, never turned
into integers.

Where podium was built with a C compiler, :func:`label_table` reads the same files with the compiled
reader (``podium.formats._label_table``: 800,000 lines of five labels in about 19 ms) into a table of
16-bit labels, which the compiled top-k kernel scores and NumPy takes without a copy; this module's
:func:`label_tokens` is the reader where the extension was not built. Both take exactly the same files.
"""

from __future__ import annotations

from typing import TypeAlias

from podium.formats.files import Content

try:
    from podium.formats import _label_table as compiled
except ImportError:  # built without a C compiler (the extension is optional): label_tokens reads the same files
    compiled = None  # type: ignore[assignment]

BOM = b"\xef\xbb\xbf"
_DIGITS = b"0123456789"
_AS_D = bytes.maketrans(_DIGITS, b"d" * len(_DIGITS))  # every digit written d: a number's length shows


Labels: TypeAlias = memoryview | list[bytes]
"""A clean file's labels: the compiled reader's table of 16-bit labels (format ``H``), or the plain reader's tokens."""


def compiled_reader() -> bool:
    """Whether :func:`label_table` reads with the compiled reader: podium was built with a C compiler."""
    return compiled is not None


def label_table(data: Content, width: int, classes: int) -> Labels | None:
    """The labels of ``data`` as :func:`label_tokens` takes them, read by the compiled reader where it was built
    (a ``memoryview`` of 16-bit labels, format ``H``: the C reader's bytes, never copied), else by
    :func:`label_tokens` (the file's tokens); ``None`` for any file it declines.

    >>> list(label_table(b"1 2\\n30 1000\\n", 2, 1000)) in ([1, 2, 30, 1000], [b"1", b"2", b"30", b"1000"])
    True
    """
    if compiled is None:
        return label_tokens(data if isinstance(data, bytes) else bytes(data), width, classes)
    _check_classes(classes)
    table = compiled.labels(data, width, classes)
    return None if table is None else memoryview(table).cast("H")


def _check_classes(classes: int) -> int:
    """The digits of the largest label but one: ``classes`` must be a power of ten."""
    digits = len(str(classes)) - 1
    if classes != 10**digits:
        raise ValueError(f"classes must be a power of ten, not {classes}")
    return digits


def label_tokens(data: bytes, width: int, classes: int) -> list[bytes] | None:
    """The labels of ``data``, line after line (``width`` to a line), as the file's tokens when the
    file has the clean shape and every label is one of 1..``classes`` (a power of ten) as written
    canonically; else ``None``.

    >>> label_tokens(b"1 2\\n30 1000\\n", 2, 1000), label_tokens(b"\\xef\\xbb\\xbf7 \\n9 ", 1, 1000)
    ([b'1', b'2', b'30', b'1000'], [b'7', b'9'])
    >>> bad = (b"1 2\\n3\\n", b"1  2\\n", b"1 2\\r\\n", b"1 02\\n", b"1 2\\n\\n", b" 1 2\\n", b"1 1001\\n", b"1 2 3\\n 4 \\n", b"")
    >>> [label_tokens(text, 2, 1000) for text in bad]
    [None, None, None, None, None, None, None, None, None]
    """
    digits = _check_classes(classes)
    body = data[len(BOM) :] if data.startswith(BOM) else data
    body = body if body.endswith(b"\n") else body + b"\n"
    tokens = body.split()
    lines, rest = divmod(len(tokens), width)
    if rest or not lines:
        return None
    # a line of width - 1 spaces has width fields, and width * lines tokens fill them all only if none
    # is empty; a line of width spaces, only if its last field is empty (it ends with a space)
    separators, shape = body.translate(None, _DIGITS), body.translate(_AS_D)
    if separators != (b" " * (width - 1) + b"\n") * lines and (
        separators != (b" " * width + b"\n") * lines or body.count(b" \n") != lines
    ):
        return None
    longest, largest = b"d" * (digits + 1), str(classes).encode()  # 1000 is the one label of 4 digits
    if body.startswith(b"0") or b" 0" in body or b"\n0" in body:  # a leading zero, or the label 0
        return None
    if longest + b"d" in shape or shape.count(longest) != body.count(largest):
        return None
    return tokens
