"""The one rule for a public file's path (a content page, a file the data page serves): plainly below the contest's folder."""

from __future__ import annotations

from pathlib import Path, PurePosixPath


def reached_plainly(base: Path, text: str) -> bool:
    """Whether ``text`` names a regular file below ``base`` without an absolute path, a ``..`` or a symbolic link on its way.

    The folder ``base`` itself may be reached through links (a checkout in a linked folder): only the path below it counts.
    """
    parts = PurePosixPath(text).parts
    if not parts or PurePosixPath(text).is_absolute() or ".." in parts or "\\" in text:
        return False
    path = base
    for part in parts:
        path = path / part
        if path.is_symlink():
            return False
    return path.is_file()
