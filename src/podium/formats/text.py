"""Reading a participant's text file: size bound, UTF-8 (a BOM is dropped), no NUL bytes."""

from __future__ import annotations

from pathlib import Path

MAX_BYTES = 1 << 30


def read_text(path: Path, max_bytes: int = MAX_BYTES) -> str:
    """The file as text; raises ValueError with a plain reason if it is not UTF-8 text."""
    if path.stat().st_size > max_bytes:
        raise ValueError(f"is larger than {max_bytes >> 20} MiB")
    with open(path, "rb") as f:
        data = f.read()
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        line = data[: exc.start].count(b"\n") + 1
        raise ValueError(f"is not UTF-8 text (bad byte at line {line})") from None
    if "\0" in text:
        raise ValueError("is not a text file (it holds NUL bytes)")
    return text
