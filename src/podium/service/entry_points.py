"""A program's entry point: the file named with the submission, or the one obvious file of its archive.

Without a name, the entry point is ``run.sh`` if the archive has one at its
top, else its only ``.py`` or ``.sh`` file at the top. Several candidates, or
none, are refused with what was found, and how to name one (``podium submit
--entry NAME``, or the upload form's entry point field): podium never guesses
between two.

>>> import tempfile
>>> with tempfile.TemporaryDirectory() as folder:
...     _ = (Path(folder) / "run.py").write_text("print(1)")
...     _ = (Path(folder) / "model.bin").write_bytes(b"")
...     entry_point(Path(folder), None)
('run.py', None)
"""

from __future__ import annotations

from pathlib import Path, PurePosixPath

DEFAULT_ENTRY = "run.sh"
RUNNABLE = (".py", ".sh")
HOW = "name it with podium submit --entry NAME, or in the upload form's entry point field"


def entry_point(code: Path, asked: str | None) -> tuple[str | None, str | None]:
    """``(entry, None)``: the entry point found in ``code``; ``(None, why)`` when there is none to run."""
    if asked:
        inside = not PurePosixPath(asked).is_absolute() and ".." not in PurePosixPath(asked).parts
        if inside and code.is_dir() and (code / asked).is_file() and not (code / asked).is_symlink():
            return asked, None
        return (
            None,
            f"the archive has no entry point {asked!r} (a file at its top, run in the program's working folder)",
        )
    if not code.is_dir():
        return (
            None,
            f"a program is an archive (.zip or .tar.gz) of a folder holding {DEFAULT_ENTRY} or another entry point",
        )
    files = sorted(p.name for p in code.iterdir() if p.is_file() and not p.is_symlink())
    if DEFAULT_ENTRY in files:
        return DEFAULT_ENTRY, None
    candidates = [name for name in files if name.endswith(RUNNABLE)]
    if len(candidates) == 1:
        return candidates[0], None
    if not candidates:
        return None, f"the archive has no {DEFAULT_ENTRY} nor any other .py or .sh file at its top: {HOW}"
    shown = ", ".join(candidates[:5]) + (f" and {len(candidates) - 5} more" if len(candidates) > 5 else "")
    return None, f"the archive has {len(candidates)} possible entry points ({shown}): {HOW}"
