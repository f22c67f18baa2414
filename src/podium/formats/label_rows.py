"""Lines of small whole numbers (class labels), parsed from a file's bytes by NumPy's vectorised operations.

The fast path of the ILSVRC readers: the kit's truth (one label per line) and a Task 1 submission
(five labels per line) are parsed without a Python string per line, in blocks of lines whose arrays
stay in the cache (800,000 lines of five labels in a new process: about 90 ms, ``np.loadtxt`` of the
file 115 ms, and podium's reader before it, Python lines then ``np.loadtxt``, 260 ms). It takes only the clean shape,
the one every file written by a program has: ASCII digits, one space between numbers, a line feed
after each line (the last one may lack it; trailing line feeds and a UTF-8 BOM are allowed), every
line with the same count of numbers, each of 1 to 4 digits. Anything else gives ``None``, and the
caller's line-by-line reader, which names every problem with its line, reads the file instead.
"""

from __future__ import annotations

import numpy as np
from numpy.typing import NDArray

MAX_DIGITS = 4  # a number is read from the 4 bytes before its end, as one 32-bit word
BLOCK = 1 << 18  # bytes of text parsed at once
_BOM = b"\xef\xbb\xbf"
_SPACE, _NEWLINE = ord(" "), ord("\n")
_ZEROS = 0x30303030  # "0000": the XOR that turns 4 ASCII digits into their values, one per byte
_KEPT = np.array([0, 0xFF000000, 0xFFFF0000, 0xFFFFFF00, 0xFFFFFFFF], np.uint32)  # a number of n digits: its n bytes


def label_rows(data: bytes, width: int) -> NDArray[np.uint16] | None:
    """The (lines, ``width``) matrix of the numbers in ``data`` (16 bits hold 4 digits), when it has the clean shape;
    else ``None``.

    >>> label_rows(b"1 2 3\\n40 500 6000\\n", 3).tolist(), label_rows(b"\\xef\\xbb\\xbf7\\n0009\\n\\n", 1).tolist()
    ([[1, 2, 3], [40, 500, 6000]], [[7], [9]])
    >>> [label_rows(text, 2) for text in (b"1 2\\n3\\n", b"1  2\\n", b"1 2\\r\\n", b"1 +2\\n", b"1 12345\\n", b"\\n")]
    [None, None, None, None, None, None]
    """
    start = len(_BOM) if data.startswith(_BOM) else 0
    end = len(data)
    while end > start and data[end - 1] == _NEWLINE:
        end -= 1
    if end == start:
        return None
    blocks = []
    while start < end:  # blocks of whole lines: their arrays stay in the cache, and a new process's memory is
        stop = data.find(b"\n", start + BLOCK, end)  # touched once (a fresh page costs a fault), not once per step
        stop = end if stop < 0 else stop
        block = _block(data, start, stop, width)
        if block is None:
            return None
        blocks.append(block)
        start = stop + 1
    return np.concatenate(blocks)


def _block(data: bytes, start: int, stop: int, width: int) -> NDArray[np.uint16] | None:
    """The numbers of the lines ``data[start:stop]`` (it ends before a line feed or at the end)."""
    # MAX_DIGITS bytes of padding before the text, so that the word before the first number's end is in
    # the buffer, and one line feed after it: every number, the last one too, ends at a separator
    text = np.empty(MAX_DIGITS + stop - start + 1, np.uint8)
    text[:MAX_DIGITS] = _SPACE
    text[MAX_DIGITS:-1] = np.frombuffer(data, np.uint8, stop - start, start)
    text[-1] = _NEWLINE
    ends = np.flatnonzero((text[MAX_DIGITS:] ^ 0x30) > 9) + MAX_DIGITS  # every byte that is not a digit
    if len(ends) % width:
        return None
    separators = text[ends].reshape(-1, width)
    if not ((separators[:, -1] == _NEWLINE).all() and (separators[:, :-1] == _SPACE).all()):
        return None
    lengths = np.diff(ends, prepend=MAX_DIGITS - 1) - 1
    if not ((lengths >= 1) & (lengths <= MAX_DIGITS)).all():
        return None
    words = np.ndarray((len(text) - 3,), "<u4", text, strides=(1,))  # the 4 bytes starting at each byte
    # little-endian: the word's first byte is its lowest, so a number's last digit is in the highest byte
    # and the bytes below a shorter number are cleared: 0 as its leading digits
    digits = (words[ends - MAX_DIGITS] ^ _ZEROS) & _KEPT[lengths]
    pairs = (digits & 0x00FF00FF) * 10 + ((digits >> 8) & 0x00FF00FF)  # the first two digits, the last two
    values: NDArray[np.uint16] = ((pairs & 0xFFFF) * 100 + (pairs >> 16)).astype(np.uint16)
    return values.reshape(-1, width)
